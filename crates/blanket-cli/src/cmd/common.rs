//! Arguments and helpers shared by several commands.

use anyhow::Result;
use blanket::calibrate::Target;
use blanket::params::{Delta, Epsilon, NumUsers};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The privacy target: (eps, delta) for n users.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Target epsilon (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta, in (0, 1).
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
}

impl TargetArgs {
    /// Validates the target for n users.
    pub fn target(&self, n: f64) -> Result<Target> {
        let t = Target {
            eps: Epsilon::new(self.eps)?,
            delta: Delta::new(self.delta)?,
            n: NumUsers::from_f64(n)?,
        };
        warn_delta(t.delta.get(), t.n.get());
        Ok(t)
    }
}

static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Hides every progress bar (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// After this long a running task shows its progress on stderr.
const SHOW_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// `pb`, created with a hidden draw target, drawn on stderr once the task has run for [`SHOW_AFTER`] (so
/// quick commands print nothing); never drawn with `hidden`, `--quiet`, or when stderr is not
/// a terminal (indicatif draws only on a terminal).
fn delayed(pb: ProgressBar, hidden: bool) -> ProgressBar {
    if hidden || QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        return ProgressBar::hidden();
    }
    let show = pb.clone();
    std::thread::spawn(move || {
        std::thread::sleep(SHOW_AFTER);
        if !show.is_finished() {
            show.set_draw_target(ProgressDrawTarget::stderr());
            show.tick();
        }
    });
    pb
}

/// A progress bar on stderr for `len` steps; hidden for JSON output, with `--quiet`, when
/// stderr is not a terminal, and during the first second.
pub fn progress(len: u64, label: &str, json: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(label.to_string());
    delayed(pb, json)
}

/// A spinner on stderr for a task of unknown length, under the same rules as [`progress`];
/// call `finish_and_clear` when done.
pub fn spinner(label: &str, json: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        pb.set_style(style);
    }
    pb.set_message(label.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    delayed(pb, json)
}

/// Mean and half-width of a 95% normal confidence interval of a sample.
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Warns on stderr when delta >= 1/n: a mechanism that publishes one random user's data in
/// the clear meets such a delta, so the guarantee says little.
pub fn warn_delta(delta: f64, n: u64) {
    if delta * n as f64 >= 1.0 {
        eprintln!(
            "warning: delta = {} >= 1/n = {}: publishing one random user's data in the clear meets this delta; choose delta much smaller than 1/n",
            crate::output::echo(delta),
            crate::output::up(1.0 / n as f64)
        );
    }
}

/// Creates the output directory `dir` and checks it is writable, before any computation.
pub fn writable_dir(dir: &std::path::Path) -> Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let probe = dir.join(".blanket-write-check");
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write in the output directory {}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks a `--plot FILE.png` path before any computation: a file name ending in `.png`
/// (the only format written), not an existing directory, in a directory that can be
/// created and written (a usage error, exit code 2, names the flag).
pub fn plot_file(flag: &str, path: &std::path::Path) -> Result<()> {
    let png = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if path.is_dir() || !png {
        crate::usage_bail!(
            "{flag} must name a PNG file (FILE.png), got {}{}",
            path.display(),
            if path.is_dir() { " (a directory)" } else { "" }
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        writable_dir(dir).map_err(|e| {
            anyhow::Error::new(crate::exit::Usage(format!(
                "{flag} {}: {}",
                path.display(),
                crate::exit::render(&e)
            )))
        })?;
    }
    Ok(())
}

/// A core parameter error as a usage error naming the flag the user typed instead of the
/// library's field (`dim` is `--d`, `frac_bits` is `--frac-bits`): `renames` maps fields to
/// flags; a field not listed keeps its name.
pub fn flag_error(e: blanket::params::ParamError, renames: &[(&str, &str)]) -> anyhow::Error {
    let blanket::params::ParamError::OutOfRange {
        field,
        allowed,
        value,
    } = e;
    let flag = renames
        .iter()
        .find(|(f, _)| *f == field)
        .map_or(field, |(_, flag)| *flag);
    anyhow::Error::new(crate::exit::Usage(format!(
        "{flag} must be {allowed}, got {value}"
    )))
}
