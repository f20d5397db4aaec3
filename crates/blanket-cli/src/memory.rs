//! Memory a command needs, checked before it allocates: a flag whose value would need more
//! memory than the system has available is refused (exit code 2) with the largest value that
//! fits, instead of an abort on a failed allocation.

use crate::exit::Usage;
use anyhow::Result;

/// Bytes the system can still give this process: `MemAvailable` of `/proc/meminfo` (Linux),
/// or None where it is not known (no check is then made).
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuses `flag = value` (a usage error, exit code 2) when `fixed + value * per_unit` bytes
/// exceed the available memory, naming the largest value that fits. `what` says what is held
/// per unit (e.g. "4 bytes per user").
pub fn check(flag: &str, value: u64, per_unit: f64, fixed: f64, what: &str) -> Result<()> {
    check_against(available(), flag, value, per_unit, fixed, what)
}

fn check_against(
    avail: Option<u64>,
    flag: &str,
    value: u64,
    per_unit: f64,
    fixed: f64,
    what: &str,
) -> Result<()> {
    let Some(avail) = avail else {
        return Ok(());
    };
    let need = fixed + value as f64 * per_unit;
    if need <= avail as f64 {
        return Ok(());
    }
    let largest = ((avail as f64 - fixed).max(0.0) / per_unit).floor();
    Err(anyhow::Error::new(Usage(format!(
        "{flag} = {value} needs about {} of memory ({what}), more than the {} available (MemAvailable); the largest {flag} that fits is about {}",
        gib(need),
        gib(avail as f64),
        largest as u64
    ))))
}

/// Bytes as GiB with 3 significant digits.
fn gib(bytes: f64) -> String {
    format!("{} GiB", crate::output::num(bytes / f64::from(1u32 << 30)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_does_not_fit_and_names_the_largest_value() {
        let gib = 1u64 << 30;
        assert!(check_against(Some(gib), "--n", 1000, 4.0, 0.0, "4 bytes per user").is_ok());
        let e = check_against(Some(gib), "--n", 1 << 40, 4.0, 0.0, "4 bytes per user")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--n = 1099511627776"), "{e}");
        assert!(
            e.contains("largest --n that fits is about 268435456"),
            "{e}"
        );
        assert!(check_against(None, "--n", u64::MAX, 4.0, 0.0, "").is_ok());
        assert!(available().is_none_or(|a| a > 0));
    }
}
