//! Parsers of numeric flags, so every flag accepts the same notations: plain (1000000),
//! with underscores (1_000_000) and, for integers, scientific when the value is a whole
//! number (1e6). Negative numbers are parsed (not taken for flags) and reach the range
//! checks, which name the flag and its allowed range.

/// Parses an integer flag: `1000000`, `1_000_000` or `1e6` (up to 2^53 in scientific form).
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    if let Ok(v) = t.parse::<u64>() {
        return Ok(v);
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9_007_199_254_740_992.0 => {
            Ok(x as u64)
        }
        Ok(x) if x < 0.0 => Err(format!("must be a non-negative integer, got {s}")),
        _ => Err(format!(
            "must be a non-negative integer (e.g. 1000, 1_000 or 1e3), got {s}"
        )),
    }
}

/// Parses a `usize` flag with the notations of [`parse_u64`].
pub fn parse_usize(s: &str) -> Result<usize, String> {
    let v = parse_u64(s)?;
    usize::try_from(v).map_err(|_| format!("too large, got {s}"))
}

/// Parses a real flag: `1e-6`, `0.5`, `1_000_000`.
pub fn parse_f64(s: &str) -> Result<f64, String> {
    s.trim()
        .replace('_', "")
        .parse::<f64>()
        .map_err(|_| format!("must be a number (e.g. 0.5, 1e-6 or 1_000_000), got {s}"))
}

/// Parses a number of repetitions: an integer from 1 to 1,000,000.
pub fn parse_reps(s: &str) -> Result<u32, String> {
    match parse_u64(s)? {
        v @ 1..=1_000_000 => Ok(v as u32),
        _ => Err(format!("must be an integer from 1 to 1000000, got {s}")),
    }
}

/// Parses a number of users `--n`: an integer from 2 to 2^48 in any notation of
/// [`parse_f64`] (1e6, 1_000_000); out-of-range values are echoed compactly (1e-300, not
/// 300 digits).
pub fn parse_users(s: &str) -> Result<f64, String> {
    let n = parse_f64(s)?;
    if n.is_finite() && n.fract() == 0.0 && (2.0..=281_474_976_710_656.0).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "n must be an integer from 2 to 2^48, got {}",
            crate::output::echo(n)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_notations() {
        assert_eq!(parse_u64("1000000"), Ok(1_000_000));
        assert_eq!(parse_u64("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_u64("1e6"), Ok(1_000_000));
        assert!(parse_u64("-3").is_err());
        assert!(parse_u64("1.5").is_err());
        assert!(parse_u64("abc").is_err());
        assert_eq!(parse_reps("1e3"), Ok(1000));
        assert!(parse_reps("0").is_err());
        assert_eq!(parse_f64("1_000.5"), Ok(1000.5));
        assert_eq!(parse_f64("-2"), Ok(-2.0));
        assert_eq!(parse_users("1e6"), Ok(1e6));
        assert_eq!(
            parse_users("1e-300"),
            Err("n must be an integer from 2 to 2^48, got 1e-300".to_string())
        );
    }
}
