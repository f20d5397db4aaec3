//! `account curve`: the (eps, delta) curve of a shuffled randomizer per method, as CSV and
//! a PNG plot.

use super::{is_certified, randomizer, RandomizerKind};
use crate::output::{echo, print_json, table, up};
use crate::plot::{method_colour, register_plot_font};
use crate::usage_bail;
use anyhow::{anyhow, bail, Context, Result};
use blanket::accounting::{LocalRandomizer, Method};
use blanket::params::{Delta, NumUsers};
use clap::Args;
use serde::Serialize;
use std::path::Path;

/// Arguments of `account curve`.
#[derive(Args)]
pub struct CurveArgs {
    /// Local privacy eps0, in (0, 100].
    #[arg(long, allow_hyphen_values = true)]
    pub eps0: f64,
    /// Number of users.
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Randomizer kind (default: krr when --domain is given, generic otherwise).
    #[arg(long, value_enum)]
    pub randomizer: Option<RandomizerKind>,
    /// Number of values K of k-RR (--randomizer krr; formerly --k, deprecated).
    #[arg(long, alias = "k", value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: Option<u64>,
    /// Smallest delta of the curve (the curve spans [delta-min, 0.1] on a log grid).
    #[arg(long, default_value_t = 1e-12, allow_hyphen_values = true)]
    pub delta_min: f64,
    /// Points on the curve, 2 to 1000.
    #[arg(long, default_value_t = 23, value_parser = crate::numeric::parse_usize, allow_hyphen_values = true)]
    pub points: usize,
    /// Output directory for curve.csv and curve.png.
    #[arg(long, default_value = "out")]
    pub out: std::path::PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CurvePoint {
    delta: f64,
    method: &'static str,
    epsilon: Option<f64>,
    /// Whether `epsilon` is a certified bound (false for variation-ratio and where the
    /// method does not apply).
    certified: bool,
}

#[derive(Serialize)]
struct CurveOut<'a> {
    eps0: f64,
    n: u64,
    randomizer: LocalRandomizer,
    csv: String,
    png: String,
    points: &'a [CurvePoint],
}

/// Runs `account curve`.
pub fn run(a: &CurveArgs) -> Result<()> {
    let n = NumUsers::from_f64(a.n)?;
    let r = randomizer(
        RandomizerKind::or_default(a.randomizer, a.domain),
        a.domain,
        a.eps0,
    )?;
    let dmin = Delta::new(a.delta_min)?.get();
    if a.points < 2 || a.points > 1000 {
        usage_bail!("--points must be in 2..=1000, got {}", a.points);
    }
    if dmin >= 0.1 {
        usage_bail!("--delta-min must be below 0.1 (the curve spans [delta-min, 0.1]), got {dmin}");
    }
    // Check the output before computing.
    crate::cmd::common::writable_dir(&a.out)?;
    let path = a.out.join("curve.csv");
    let mut w = csv::Writer::from_path(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let pb = crate::cmd::common::progress(a.points as u64, "curve", a.json);
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
                certified: e.is_some() && is_certified(m),
            });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    // Only a certified, finite, positive epsilon can be drawn on the log-log plot.
    let drawable =
        |p: &CurvePoint| p.certified && p.epsilon.is_some_and(|e| e > 0.0 && e.is_finite());
    if !pts.iter().any(drawable) {
        drop(w);
        let _ = std::fs::remove_file(&path);
        bail!(
            "no certified method gives a positive epsilon at eps0 = {}, n = {n} for delta in [{}, 0.1]: nothing to plot",
            echo(a.eps0),
            echo(dmin)
        );
    }
    // `valid` keeps its meaning for existing readers and is never true for an uncertified
    // method; `certified` says the same explicitly.
    w.write_record(["delta", "method", "epsilon", "valid", "certified"])?;
    for p in &pts {
        w.write_record([
            format!("{:e}", p.delta),
            p.method.to_string(),
            p.epsilon.map_or(String::new(), |e| format!("{e}")),
            p.certified.to_string(),
            p.certified.to_string(),
        ])?;
    }
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    let png = a.out.join("curve.png");
    let title = format!(
        "{}, eps0 = {}, n = {}",
        match r {
            LocalRandomizer::Generic { .. } => "generic eps0-LDP randomizer".to_string(),
            LocalRandomizer::Grr { m, .. } => format!("{m}-ary randomized response"),
        },
        echo(a.eps0),
        n
    );
    let labelled = plot_curve(&png, &pts, &title)?;
    if a.json {
        return print_json(&CurveOut {
            eps0: a.eps0,
            n: n.get(),
            randomizer: r,
            csv: path.display().to_string(),
            png: png.display().to_string(),
            points: &pts,
        });
    }
    let mut rows = Vec::new();
    for chunk in pts.chunks(Method::ALL.len()) {
        let mut row = vec![up(chunk[0].delta)];
        row.extend(chunk.iter().map(|p| p.epsilon.map_or("-".into(), up)));
        rows.push(row);
    }
    let mut header = vec!["delta"];
    header.extend(Method::ALL.iter().map(|m| {
        if is_certified(*m) {
            m.name()
        } else {
            "variation-ratio (NOT certified)"
        }
    }));
    crate::println_wrapped!("{}", table(&header, &rows));
    crate::println_wrapped!(
        "wrote {} and {}{} (variation-ratio is not certified, shown for comparison: see docs/accounting.md)",
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

/// One method's drawable (eps, delta) points.
struct Curve {
    name: &'static str,
    certified: bool,
    v: Vec<(f64, f64)>,
}

impl crate::plot::Certified for Curve {
    fn certified(&self) -> bool {
        self.certified
    }
}

/// Plots delta (log scale) against eps (log scale), one line per method with a valid
/// curve. Returns whether text (title, axis labels, legend) was drawn: without a system
/// font the plot is drawn without text rather than failing.
fn plot_curve(path: &Path, pts: &[CurvePoint], title: &str) -> Result<bool> {
    use plotters::prelude::*;
    let text = register_plot_font();
    let series: Vec<Curve> = Method::ALL
        .iter()
        .map(|m| {
            let v: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.method == m.name())
                .filter_map(|p| p.epsilon.filter(|e| *e > 0.0).map(|e| (e, p.delta)))
                .collect();
            Curve {
                name: m.name(),
                certified: is_certified(*m),
                v,
            }
        })
        .filter(|c| !c.v.is_empty())
        .collect();
    let all = series.iter().flat_map(|c| c.v.iter());
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
    let mut chart = crate::plot::log_log_chart(
        &root,
        text,
        (title, 22),
        (x0 * 0.9, x1 * 1.1),
        (y0 / 2.0, y1 * 2.0),
        (
            "epsilon (certified upper bound; dashed: NOT certified)",
            "delta",
        ),
    )
    .map_err(|e| err(&e))?;
    // Uncertified curves last, dashed, on top of the certified ones they may coincide with.
    for Curve { name, certified, v } in crate::plot::draw_order(&series) {
        let uncertified = !certified;
        let color = method_colour(name).to_rgba();
        let label = if uncertified {
            format!("{name} (NOT certified, dashed)")
        } else {
            name.to_string()
        };
        if uncertified {
            chart.draw_series(DashedLineSeries::new(
                v.iter().copied(),
                8,
                5,
                color.stroke_width(2),
            ))
        } else {
            chart.draw_series(LineSeries::new(v.iter().copied(), color.stroke_width(2)))
        }
        .map_err(|e| err(&e))?;
        if text {
            let dash = uncertified.then_some((8, 5));
            crate::plot::legend_entry(
                &mut chart,
                label,
                dash,
                crate::plot::Marker::None,
                color.stroke_width(2),
            )
            .map_err(|e| err(&e))?;
        }
        if uncertified {
            // hollow markers, so a certified point underneath still shows
            chart
                .draw_series(
                    v.iter()
                        .map(|&(x, y)| Circle::new((x, y), 4, color.stroke_width(1))),
                )
                .map_err(|e| err(&e))?;
        } else {
            chart
                .draw_series(
                    v.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(|e| err(&e))?;
        }
    }
    if text {
        crate::plot::draw_legend(&mut chart, SeriesLabelPosition::LowerLeft)
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(text)
}
