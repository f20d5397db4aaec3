//! `blanket account`: certified amplification bounds, composition, privacy curves, and the
//! inverse queries (eps0 allowed, users needed, error expected).

use crate::accountant::{resolve, AccountantChoice};
use crate::output::{num, print_json, table};
use anyhow::{anyhow, bail, Context, Result};
use blanket::accounting::composition::{basic, drv, kov_epsilon, Pld};
use blanket::accounting::{Best, LocalRandomizer, Method, ShuffleAccountant};
use blanket::calibrate::{calibrate, max_eps0, n_for_error, Calibratable, LocalPrivacy, Target};
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers, Precision};
use blanket::protocol::{DomainConvention, HistogramShape, ScalarSumShape, VectorSumShape};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The `account` subcommands.
#[derive(Subcommand)]
pub enum AccountCommand {
    /// eps of n shuffled eps0-LDP reports at a delta, by one method or the best.
    Shuffle(ShuffleArgs),
    /// Total eps of k-fold composition at a total delta.
    Compose(ComposeArgs),
    /// The (eps, delta) curve of a shuffled randomizer per method, as CSV and a PNG plot.
    Curve(CurveArgs),
    /// The largest local eps0 each user may use for a target (eps, delta) with n users.
    Eps0(Eps0Args),
    /// The number of users needed for a target error at (eps, delta).
    Users(UsersArgs),
    /// The error a calibrated protocol is predicted to have at n users and (eps, delta).
    Error(ErrorArgs),
}

/// The randomizer kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RandomizerKind {
    /// Any eps0-LDP randomizer: only generic bounds apply.
    Generic,
    /// k-ary randomized response (needs --k).
    Krr,
}

/// Arguments of `account shuffle`.
#[derive(Args)]
pub struct ShuffleArgs {
    /// Local privacy eps0.
    #[arg(long, allow_hyphen_values = true)]
    pub eps0: f64,
    /// Number of users (e.g. 1e6).
    #[arg(long, allow_hyphen_values = true)]
    pub n: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "generic")]
    pub randomizer: RandomizerKind,
    /// k of k-RR.
    #[arg(long)]
    pub k: Option<u64>,
    /// Method: fmt21-closed, fmt21-numerical, clones-krr, variation-ratio, blanket-closed,
    /// grr-exact, erlingsson-closed, or best.
    #[arg(long, default_value = "best")]
    pub method: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ShuffleOut {
    epsilon: Option<f64>,
    method: String,
    certified_by: Option<String>,
    valid: bool,
    reason: Option<String>,
    seconds: f64,
    eps0: f64,
    n: u64,
    delta: f64,
    randomizer: LocalRandomizer,
    citation: String,
    all: Option<Vec<blanket::accounting::best::MethodResult>>,
}

fn randomizer(kind: RandomizerKind, k: Option<u64>, eps0: f64) -> Result<LocalRandomizer> {
    if !(eps0.is_finite() && eps0 > 0.0) {
        bail!("--eps0 must be a finite number > 0, got {eps0}");
    }
    Ok(match kind {
        RandomizerKind::Generic => LocalRandomizer::Generic { eps0 },
        RandomizerKind::Krr => {
            let k = k.context("--randomizer krr needs --k K (number of values, >= 2)")?;
            LocalRandomizer::krr(DomainSize::new(k)?, eps0)
        }
    })
}

fn run_shuffle(a: &ShuffleArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let delta = Delta::new(a.delta)?;
    let r = randomizer(a.randomizer, a.k, a.eps0)?;
    let method = Method::from_name(&a.method).with_context(|| {
        format!(
            "unknown --method {}: use fmt21-closed, fmt21-numerical, clones-krr, variation-ratio, blanket-closed, grr-exact, erlingsson-closed or best",
            a.method
        )
    })?;
    let t = Instant::now();
    let acct = method.accountant();
    let res = acct.guarantee(&r, n, delta);
    let seconds = t.elapsed().as_secs_f64();
    let all = (method == Method::Best).then(|| Best::default().evaluate_all(&r, n, delta));
    let out = match res {
        Ok(g) => ShuffleOut {
            epsilon: Some(g.epsilon),
            method: method.name().into(),
            certified_by: Some(g.method.name().into()),
            valid: true,
            reason: None,
            seconds,
            eps0: a.eps0,
            n: n.get(),
            delta: delta.get(),
            randomizer: r,
            citation: g.method.citation().into(),
            all,
        },
        Err(e) => ShuffleOut {
            // No amplification claimed: the local guarantee eps0 still holds.
            epsilon: Some(a.eps0),
            method: method.name().into(),
            certified_by: None,
            valid: false,
            reason: Some(format!("{e}; reporting eps0 (no amplification claimed)")),
            seconds,
            eps0: a.eps0,
            n: n.get(),
            delta: delta.get(),
            randomizer: r,
            citation: method.citation().into(),
            all,
        },
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "shuffled {} with eps0 = {}, n = {}, delta = {}",
        match r {
            LocalRandomizer::Generic { .. } => "generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        a.eps0,
        n,
        delta
    );
    if let Some(all) = &out.all {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|x| {
                vec![
                    x.method.name().to_string(),
                    x.epsilon.map_or("-".into(), num),
                    if x.epsilon.is_some() {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    format!("{:.4}", x.seconds),
                    x.reason.clone().unwrap_or_default(),
                ]
            })
            .collect();
        println!(
            "{}",
            table(&["method", "epsilon", "valid", "seconds", "reason"], &rows)
        );
        if let Some(m) = Method::from_name("variation-ratio") {
            if let Ok(e) = m.accountant().epsilon(&r, n, delta) {
                println!(
                    "(variation-ratio, not certified, for comparison only: {})",
                    num(e)
                );
            }
        }
    }
    match (&out.certified_by, out.valid) {
        (Some(m), true) => println!(
            "eps = {} (certified by {m}; {:.3} s)",
            num(out.epsilon.unwrap_or(f64::NAN)),
            out.seconds
        ),
        _ => println!("not valid: {}", out.reason.clone().unwrap_or_default()),
    }
    Ok(())
}

/// Composition methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ComposeMethod {
    /// Basic composition: (k eps, k delta).
    Basic,
    /// Advanced composition (Dwork, Rothblum, Vadhan).
    Drv,
    /// Optimal homogeneous composition (Kairouz, Oh, Viswanath), exact.
    Kov,
    /// Privacy-loss distribution of randomized response composed by FFT (pure components).
    Pld,
}

/// Arguments of `account compose`.
#[derive(Args)]
pub struct ComposeArgs {
    /// Per-round eps.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Total delta the composed guarantee is stated at.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Number of rounds k.
    #[arg(long)]
    pub count: u64,
    /// Per-round delta of the components (default 0: pure components).
    #[arg(long, default_value_t = 0.0)]
    pub component_delta: f64,
    /// Method.
    #[arg(long, value_enum, default_value = "kov")]
    pub method: ComposeMethod,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ComposeOut {
    epsilon: f64,
    delta: f64,
    method: &'static str,
    count: u64,
    component_eps: f64,
    component_delta: f64,
    seconds: f64,
}

fn run_compose(a: &ComposeArgs) -> Result<()> {
    if !(a.eps.is_finite() && a.eps > 0.0) {
        bail!("--eps must be a finite number > 0, got {}", a.eps);
    }
    let total = Delta::new(a.delta)?.get();
    if a.count == 0 {
        bail!("--count must be >= 1");
    }
    if !(0.0..1.0).contains(&a.component_delta) {
        bail!(
            "--component-delta must be in [0, 1), got {}",
            a.component_delta
        );
    }
    let t = Instant::now();
    let k = a.count;
    let cd = a.component_delta;
    let (eps, name) = match a.method {
        ComposeMethod::Basic => {
            let (e, d) = basic(a.eps, cd, k);
            if d > total {
                bail!("basic composition gives delta = {d} > {total}");
            }
            (e, "basic")
        }
        ComposeMethod::Drv => {
            let dp = total - k as f64 * cd;
            if dp.is_nan() || dp <= 0.0 {
                bail!("k * component delta already exceeds the total delta");
            }
            (drv(a.eps, cd, k, dp)?.0, "drv")
        }
        ComposeMethod::Kov => (kov_epsilon(a.eps, cd, k, total)?, "kov"),
        ComposeMethod::Pld => {
            if cd > 0.0 {
                bail!("--method pld composes pure components only (component delta 0)");
            }
            let h = (a.eps / 200.0).max(1e-5);
            let pld = Pld::pure(a.eps, h).compose(k)?;
            (pld.epsilon(total), "pld")
        }
    };
    let out = ComposeOut {
        epsilon: eps,
        delta: total,
        method: name,
        count: k,
        component_eps: a.eps,
        component_delta: cd,
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "{k} rounds of ({}, {})-DP, {name}: ({}, {})-DP",
        a.eps,
        cd,
        num(eps),
        total
    );
    Ok(())
}

/// Arguments of `account curve`.
#[derive(Args)]
pub struct CurveArgs {
    /// Local privacy eps0.
    #[arg(long, allow_hyphen_values = true)]
    pub eps0: f64,
    /// Number of users.
    #[arg(long, allow_hyphen_values = true)]
    pub n: f64,
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "krr")]
    pub randomizer: RandomizerKind,
    /// k of k-RR.
    #[arg(long)]
    pub k: Option<u64>,
    /// Smallest delta of the curve (the curve spans [delta-min, 0.1] on a log grid).
    #[arg(long, default_value_t = 1e-12, allow_hyphen_values = true)]
    pub delta_min: f64,
    /// Points on the curve.
    #[arg(long, default_value_t = 23)]
    pub points: usize,
    /// Output directory for curve.csv and curve.png.
    #[arg(long, default_value = "out")]
    pub out: std::path::PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CurvePoint {
    delta: f64,
    method: &'static str,
    epsilon: Option<f64>,
}

fn run_curve(a: &CurveArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let r = randomizer(a.randomizer, a.k, a.eps0)?;
    let dmin = Delta::new(a.delta_min)?.get();
    if a.points < 2 || a.points > 1000 {
        bail!("--points must be in 2..=1000");
    }
    let mut pts = Vec::new();
    let (l0, l1) = (dmin.log10(), -1.0f64);
    for i in 0..a.points {
        let d = 10f64.powf(l0 + (l1 - l0) * i as f64 / (a.points - 1) as f64);
        let delta = Delta::new(d)?;
        for m in Method::ALL {
            let e = m.accountant().epsilon(&r, n, delta).ok();
            pts.push(CurvePoint {
                delta: d,
                method: m.name(),
                epsilon: e,
            });
        }
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let path = a.out.join("curve.csv");
    let mut w =
        csv::Writer::from_path(&path).with_context(|| format!("writing {}", path.display()))?;
    w.write_record(["delta", "method", "epsilon", "valid"])?;
    for p in &pts {
        w.write_record([
            format!("{:e}", p.delta),
            p.method.to_string(),
            p.epsilon.map_or(String::new(), |e| format!("{e}")),
            p.epsilon.is_some().to_string(),
        ])?;
    }
    w.flush()?;
    let png = a.out.join("curve.png");
    let title = format!(
        "{}, eps0 = {}, n = {}",
        match r {
            LocalRandomizer::Generic { .. } => "generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        a.eps0,
        n
    );
    let labelled = plot_curve(&png, &pts, &title)?;
    if a.json {
        return print_json(&pts);
    }
    let mut rows = Vec::new();
    for chunk in pts.chunks(Method::ALL.len()) {
        let mut row = vec![format!("{:.1e}", chunk[0].delta)];
        row.extend(chunk.iter().map(|p| p.epsilon.map_or("-".into(), num)));
        rows.push(row);
    }
    let mut header = vec!["delta"];
    header.extend(Method::ALL.iter().map(|m| m.name()));
    println!("{}", table(&header, &rows));
    println!(
        "wrote {} and {}{} (variation-ratio is not certified: see docs/accounting.md)",
        path.display(),
        png.display(),
        if labelled {
            ""
        } else {
            " (drawn without text: no font found or BLANKET_FONT=none; set BLANKET_FONT to a .ttf file)"
        }
    );
    Ok(())
}

/// Registers a system TrueType font as plotters' "sans-serif" (once). Returns whether one
/// was found: `BLANKET_FONT`, then common DejaVu / Liberation / Arial locations.
/// `BLANKET_FONT=none` draws plots without text.
fn register_plot_font() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        if std::env::var_os("BLANKET_FONT").is_some_and(|v| v == "none") {
            return false;
        }
        let mut paths: Vec<std::path::PathBuf> = std::env::var_os("BLANKET_FONT")
            .map(std::path::PathBuf::from)
            .into_iter()
            .collect();
        paths.extend(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
                "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
                "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
                "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
                "/Library/Fonts/Arial.ttf",
                "/System/Library/Fonts/Supplemental/Arial.ttf",
                "C:\\Windows\\Fonts\\arial.ttf",
            ]
            .map(std::path::PathBuf::from),
        );
        for p in paths {
            if let Ok(bytes) = std::fs::read(&p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font(
                    "sans-serif",
                    plotters::style::FontStyle::Normal,
                    bytes,
                )
                .is_ok()
                {
                    return true;
                }
            }
        }
        false
    })
}

/// Plots delta (log scale) against eps (log scale), one line per method with a valid
/// curve. Returns whether text (title, axis labels, legend) was drawn: without a system
/// font the plot is drawn without text rather than failing.
fn plot_curve(path: &Path, pts: &[CurvePoint], title: &str) -> Result<bool> {
    use plotters::prelude::*;
    let text = register_plot_font();
    let series: Vec<(&str, Vec<(f64, f64)>)> = Method::ALL
        .iter()
        .map(|m| {
            let v: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.method == m.name())
                .filter_map(|p| p.epsilon.filter(|e| *e > 0.0).map(|e| (e, p.delta)))
                .collect();
            (m.name(), v)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let all = series.iter().flat_map(|(_, v)| v.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0.0f64, f64::INFINITY, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0.is_nan() || x0 >= x1 {
        (x0, x1) = if x1 > 0.0 {
            (x1 / 2.0, x1 * 2.0)
        } else {
            (1e-3, 1.0)
        };
    }
    if y0.is_nan() || y0 >= y1 {
        (y0, y1) = if y1 > 0.0 {
            (y1 / 10.0, y1 * 10.0)
        } else {
            (1e-12, 0.1)
        };
    }
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(title, ("sans-serif", 22))
            .x_label_area_size(50)
            .y_label_area_size(80);
    }
    let mut chart = builder
        .build_cartesian_2d(
            (x0 * 0.9..x1 * 1.1).log_scale(),
            (y0 / 2.0..y1 * 2.0).log_scale(),
        )
        .map_err(|e| err(&e))?;
    if text {
        chart
            .configure_mesh()
            .x_desc("epsilon (certified upper bound)")
            .y_desc("delta")
            .x_labels(6)
            .y_labels(12)
            .x_label_formatter(&|x| format!("{x:.1e}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
    } else {
        chart
            .configure_mesh()
            .x_labels(0)
            .y_labels(0)
            .draw()
            .map_err(|e| err(&e))?;
    }
    for (i, (name, v)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let label = if *name == Method::VariationRatio.name() {
            format!("{name} (not certified)")
        } else {
            name.to_string()
        };
        let line = chart
            .draw_series(LineSeries::new(v.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?;
        if text {
            line.label(label).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
        chart
            .draw_series(
                v.iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            )
            .map_err(|e| err(&e))?;
    }
    if text {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(text)
}

/// Runs an `account` subcommand.
pub fn run(c: &AccountCommand) -> Result<()> {
    match c {
        AccountCommand::Shuffle(a) => run_shuffle(a),
        AccountCommand::Compose(a) => run_compose(a),
        AccountCommand::Curve(a) => run_curve(a),
        AccountCommand::Eps0(a) => run_eps0(a),
        AccountCommand::Users(a) => run_users(a),
        AccountCommand::Error(a) => run_error(a),
    }
}

/// Arguments of `account eps0`.
#[derive(Args)]
pub struct Eps0Args {
    /// Number of users.
    #[arg(long, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon of the shuffled output.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Randomizer kind.
    #[arg(long, value_enum, default_value = "generic")]
    pub randomizer: RandomizerKind,
    /// k of k-RR.
    #[arg(long)]
    pub k: Option<u64>,
    /// Method (as for `account shuffle`), or best.
    #[arg(long, default_value = "best")]
    pub method: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Eps0Out {
    eps0: f64,
    method: String,
    certified_by: String,
    certified_epsilon: f64,
    eps: f64,
    delta: f64,
    n: u64,
    randomizer: &'static str,
    k: Option<u64>,
    seconds: f64,
}

fn parse_method(name: &str) -> Result<Method> {
    Method::from_name(name).with_context(|| {
        format!(
            "unknown --method {name}: use fmt21-closed, fmt21-numerical, clones-krr, variation-ratio, blanket-closed, grr-exact, erlingsson-closed or best"
        )
    })
}

fn run_eps0(a: &Eps0Args) -> Result<()> {
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n: NumUsers::from_f64(a.n)?,
    };
    let method = parse_method(&a.method)?;
    let k = match a.randomizer {
        RandomizerKind::Generic => {
            if a.k.is_some() {
                bail!("--k applies to --randomizer krr only");
            }
            if matches!(
                method,
                Method::ClonesKrr
                    | Method::VariationRatio
                    | Method::GrrExact
                    | Method::BlanketClosed
            ) {
                bail!(
                    "--method {method} holds only for k-ary randomized response: use --randomizer krr --k K"
                );
            }
            None
        }
        RandomizerKind::Krr => Some(DomainSize::new(
            a.k.context("--randomizer krr needs --k K (number of values, >= 2)")?,
        )?),
    };
    let t = Instant::now();
    let acct = method.accountant();
    let eps0 = max_eps0(k, &target, acct.as_ref())?;
    let r = match k {
        Some(k) => LocalRandomizer::krr(k, eps0),
        None => LocalRandomizer::Generic { eps0 },
    };
    let g = acct.guarantee(&r, target.n, target.delta)?;
    let out = Eps0Out {
        eps0,
        method: method.name().into(),
        certified_by: g.method.name().into(),
        certified_epsilon: g.epsilon,
        eps: a.eps,
        delta: a.delta,
        n: target.n.get(),
        randomizer: if k.is_some() { "krr" } else { "generic" },
        k: k.map(|k| u64::from(k.get())),
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "largest eps0 per user: {} (shuffled eps = {} at delta = {}, certified by {})",
        num(out.eps0),
        num(out.certified_epsilon),
        out.delta,
        out.certified_by
    );
    Ok(())
}

/// Protocols the users / error queries know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolKind {
    /// Histogram over --domain categories.
    Histogram,
    /// Sum of reals in [0, 1].
    ScalarSum,
    /// Sum of vectors in [0, 1]^d (needs --d and --t).
    VectorSum,
}

/// The protocol shape options shared by `account users` and `account error`.
#[derive(Args, Debug, Clone)]
pub struct ShapeArgs {
    /// Protocol.
    #[arg(long, value_enum)]
    pub protocol: ProtocolKind,
    /// Number of categories m (histogram).
    #[arg(long)]
    pub domain: Option<u64>,
    /// Fixed precision k (scalar-sum, vector-sum; default: the best k).
    #[arg(long)]
    pub k: Option<u64>,
    /// Dimension d (vector-sum).
    #[arg(long)]
    pub d: Option<u64>,
    /// Coordinates each user reports (vector-sum).
    #[arg(long)]
    pub t: Option<u64>,
    /// Which bound certifies the guarantee.
    #[arg(long, value_enum, default_value_t)]
    pub accountant: AccountantChoice,
}

/// Arguments of `account users`.
#[derive(Args)]
pub struct UsersArgs {
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Target epsilon.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Target MSE of the normalized estimate: the estimated frequencies (count / n) for a
    /// histogram (mean over categories), the estimated mean (sum / n) for scalar-sum, the
    /// estimated mean vector (squared error summed over the d coordinates) for vector-sum.
    #[arg(long, allow_hyphen_values = true)]
    pub target_mse: f64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `account error`.
#[derive(Args)]
pub struct ErrorArgs {
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Number of users.
    #[arg(long, allow_hyphen_values = true)]
    pub n: f64,
    /// Target epsilon.
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    /// Target delta.
    #[arg(long, allow_hyphen_values = true)]
    pub delta: f64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A protocol's calibration, flattened for output.
#[derive(Serialize)]
struct ErrorOut {
    protocol: &'static str,
    n: u64,
    eps: f64,
    delta: f64,
    predicted_mse: f64,
    predicted_mse_meaning: &'static str,
    normalized_mse: f64,
    gamma: f64,
    eps0: f64,
    eps0_user: f64,
    k: Option<u64>,
    method: String,
    seconds: f64,
}

#[derive(Serialize)]
struct UsersOut {
    protocol: &'static str,
    n: u64,
    eps: f64,
    delta: f64,
    target_mse: f64,
    normalized_mse: f64,
    predicted_mse: f64,
    gamma: f64,
    k: Option<u64>,
    method: String,
    seconds: f64,
}

enum Shape {
    Histogram(HistogramShape),
    ScalarSum(ScalarSumShape),
    VectorSum(VectorSumShape),
}

impl ShapeArgs {
    fn shape(&self) -> Result<Shape> {
        let k = self.k.map(Precision::new).transpose()?;
        let unused = |flag: &str, v: Option<u64>| -> Result<()> {
            if v.is_some() {
                bail!("--{flag} does not apply to --protocol {:?}", self.protocol);
            }
            Ok(())
        };
        Ok(match self.protocol {
            ProtocolKind::Histogram => {
                unused("k", self.k)?;
                unused("d", self.d)?;
                unused("t", self.t)?;
                let m = self
                    .domain
                    .context("--protocol histogram needs --domain M (number of categories)")?;
                Shape::Histogram(HistogramShape {
                    m: DomainSize::new(m)?,
                })
            }
            ProtocolKind::ScalarSum => {
                unused("domain", self.domain)?;
                unused("d", self.d)?;
                unused("t", self.t)?;
                Shape::ScalarSum(ScalarSumShape {
                    k,
                    convention: DomainConvention::TrueDomain,
                })
            }
            ProtocolKind::VectorSum => {
                unused("domain", self.domain)?;
                let d = self.d.context("--protocol vector-sum needs --d D")?;
                let t = self.t.context("--protocol vector-sum needs --t T")?;
                Shape::VectorSum(VectorSumShape::new(d, t, k, DomainConvention::TrueDomain)?)
            }
        })
    }
}

impl Shape {
    fn name(&self) -> &'static str {
        match self {
            Shape::Histogram(_) => "histogram",
            Shape::ScalarSum(_) => "scalar-sum",
            Shape::VectorSum(_) => "vector-sum",
        }
    }

    fn meaning(&self) -> &'static str {
        match self {
            Shape::Histogram(_) => {
                "mean over the m categories of the variance of the estimated count (worst case over data)"
            }
            Shape::ScalarSum(_) => "worst case over data of the expected squared error of the estimated sum",
            Shape::VectorSum(_) => "worst case over data of n users of the expected squared error of the estimated mean vector, summed over the d coordinates (already normalized)",
        }
    }

    /// (predicted mse, normalized mse, gamma, local privacy, k, method) of the calibration at
    /// `target`.
    fn calibrate(
        &self,
        target: &Target,
        acct: &dyn ShuffleAccountant,
    ) -> Result<(f64, f64, f64, LocalPrivacy, Option<u64>, Method)> {
        fn go<P: Calibratable>(
            p: &P,
            t: &Target,
            acct: &dyn ShuffleAccountant,
            k: impl Fn(P::Choice) -> Option<u64>,
        ) -> Result<(f64, f64, f64, LocalPrivacy, Option<u64>, Method)> {
            let c = calibrate(p, t, acct)?;
            let local = LocalPrivacy {
                per_message: c.eps0,
                per_user: c.eps0_user,
            };
            Ok((
                c.predicted_mse,
                c.normalized_mse,
                c.gamma.get(),
                local,
                k(c.choice),
                c.guarantee.method,
            ))
        }
        match self {
            Shape::Histogram(p) => go(p, target, acct, |_| None),
            Shape::ScalarSum(p) => go(p, target, acct, |k| Some(u64::from(k.get()))),
            Shape::VectorSum(p) => go(p, target, acct, |k| Some(u64::from(k.get()))),
        }
    }

    fn n_for(&self, target: &Target, acct: &dyn ShuffleAccountant, x: f64) -> Option<u64> {
        match self {
            Shape::Histogram(p) => n_for_error(p, target, acct, x),
            Shape::ScalarSum(p) => n_for_error(p, target, acct, x),
            Shape::VectorSum(p) => n_for_error(p, target, acct, x),
        }
    }
}

fn run_error(a: &ErrorArgs) -> Result<()> {
    let target = Target {
        eps: Epsilon::new(a.eps)?,
        delta: Delta::new(a.delta)?,
        n: NumUsers::from_f64(a.n)?,
    };
    let shape = a.shape.shape()?;
    let acct = resolve(a.shape.accountant);
    let t = Instant::now();
    let (mse, normalized_mse, gamma, local, k, method) = shape.calibrate(&target, acct.as_ref())?;
    let n = target.n.get();
    let out = ErrorOut {
        protocol: shape.name(),
        n,
        eps: a.eps,
        delta: a.delta,
        predicted_mse: mse,
        predicted_mse_meaning: shape.meaning(),
        normalized_mse,
        gamma,
        eps0: local.per_message,
        eps0_user: local.per_user,
        k,
        method: method.name().into(),
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "{} with n = {n} at (eps = {}, delta = {}): predicted MSE {} ({}); per-user normalized MSE {}; gamma = {}{}, eps0 per message {}, eps0 per user (local DP) {}, certified by {}",
        out.protocol,
        a.eps,
        a.delta,
        num(mse),
        out.predicted_mse_meaning,
        num(out.normalized_mse),
        num(gamma),
        k.map_or(String::new(), |k| format!(", k = {k}")),
        num(out.eps0),
        num(out.eps0_user),
        out.method
    );
    Ok(())
}

fn run_users(a: &UsersArgs) -> Result<()> {
    let eps = Epsilon::new(a.eps)?;
    let delta = Delta::new(a.delta)?;
    if !(a.target_mse.is_finite() && a.target_mse > 0.0) {
        bail!(
            "target-mse must be a finite number > 0, got {}",
            a.target_mse
        );
    }
    let shape = a.shape.shape()?;
    let acct = resolve(a.shape.accountant);
    let t = Instant::now();
    let target = Target {
        eps,
        delta,
        n: NumUsers::new(2)?,
    };
    let n = shape
        .n_for(&target, acct.as_ref(), a.target_mse)
        .with_context(|| {
            format!(
                "no n up to 2^48 reaches target-mse {} at eps = {}, delta = {}",
                a.target_mse, a.eps, a.delta
            )
        })?;
    let at = Target {
        n: NumUsers::new(n)?,
        ..target
    };
    let (mse, normalized_mse, gamma, _, k, method) = shape.calibrate(&at, acct.as_ref())?;
    let out = UsersOut {
        protocol: shape.name(),
        n,
        eps: a.eps,
        delta: a.delta,
        target_mse: a.target_mse,
        normalized_mse,
        predicted_mse: mse,
        gamma,
        k,
        method: method.name().into(),
        seconds: t.elapsed().as_secs_f64(),
    };
    if a.json {
        return print_json(&out);
    }
    println!(
        "{}: n = {n} users reach normalized MSE {} <= {} at (eps = {}, delta = {}) (gamma = {}{}, certified by {})",
        out.protocol,
        num(out.normalized_mse),
        a.target_mse,
        a.eps,
        a.delta,
        num(gamma),
        k.map_or(String::new(), |k| format!(", k = {k}")),
        out.method
    );
    Ok(())
}
