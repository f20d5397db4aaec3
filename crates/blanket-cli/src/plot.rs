//! Helpers shared by the plots (`account curve`, `experiment`, `compare sum`): the font lookup,
//! log-axis ticks and labels, method colours and the log-log mesh.

/// Registers a system TrueType font as plotters' "sans-serif" (once). Returns whether one
/// was found: `BLANKET_FONT`, then common DejaVu / Liberation / Arial locations.
/// `BLANKET_FONT=none` draws plots without text.
pub fn register_plot_font() -> bool {
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

/// Tick values for a logarithmic axis over [lo, hi]: powers of ten when that gives at least
/// four ticks, else 1, 2, 5 x 10^j when that does, else finer mantissas (1, 1.5, 2, 3, ..., 9), thinned to at most about a dozen,
/// so every axis has several readable ticks even when it spans less than a decade.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let within = |mantissas: &[f64]| -> Vec<f64> {
        let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let mut v = Vec::new();
        for e in e0..=e1 {
            for &m in mantissas {
                // Round to 12 significant digits so 0.1 * 3 prints as 0.3.
                let x = m * 10f64.powi(e);
                let x = format!("{x:.11e}").parse::<f64>().unwrap_or(x);
                if x >= lo && x <= hi {
                    v.push(x);
                }
            }
        }
        v
    };
    let decades = within(&[1.0]);
    if decades.len() >= 4 {
        return thin(decades, 12);
    }
    let coarse = within(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 4 {
        return thin(coarse, 12);
    }
    thin(
        within(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        12,
    )
}

/// Every other element until at most `max` remain.
fn thin(mut v: Vec<f64>, max: usize) -> Vec<f64> {
    while v.len() > max {
        v = v.into_iter().step_by(2).collect();
    }
    v
}

/// The upper end of a logarithmic axis over data in [lo, hi] leaving the top `free` fraction
/// of the plot empty (room for the legend, which then covers no data).
pub fn log_headroom(lo: f64, hi: f64, free: f64) -> f64 {
    let (l0, l1) = (lo.log10(), hi.log10());
    10f64.powf(l1 + (l1 - l0) * free / (1.0 - free))
}

/// A compact tick label: up to 3 significant digits, no trailing zeros (0.05, 150, 1e-8).
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.1e}");
        s.replace(".0e", "e")
    }
}

/// One clearly visible colour per accounting method (the uncertified variation-ratio is
/// grey and drawn dashed by the caller).
pub fn method_colour(name: &str) -> plotters::style::RGBColor {
    use plotters::style::RGBColor;
    match name {
        "blanket-closed" => RGBColor(214, 39, 40),
        "erlingsson-closed" => RGBColor(140, 86, 75),
        "fmt21-closed" => RGBColor(44, 160, 44),
        "fmt21-numerical" => RGBColor(255, 127, 14),
        "clones-krr" => RGBColor(31, 119, 180),
        "grr-exact" => RGBColor(148, 103, 189),
        _ => RGBColor(110, 110, 110),
    }
}

/// Draws the mesh of a log-log chart: axis descriptions and readable tick labels when a font
/// is available (`text`), a bare mesh otherwise.
pub fn draw_log_mesh<DB, X, Y>(
    chart: &mut plotters::chart::ChartContext<
        '_,
        DB,
        plotters::coord::cartesian::Cartesian2d<X, Y>,
    >,
    text: bool,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend,
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>
        + plotters::coord::ranged1d::ValueFormatter<f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>
        + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    use plotters::style::{Color, BLACK};
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .light_line_style(BLACK.mix(0.0))
            .label_style(("sans-serif", 14));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|e| e.to_string())
}

/// The coordinates of a [`log_log_chart`].
pub type LogLog = plotters::coord::cartesian::Cartesian2d<
    plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>>,
    plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>>,
>;

/// A log-log chart of [x0, x1] x [y0, y1] on `root` (margin 20, key points from
/// [`log_ticks`], mesh by [`draw_log_mesh`] with the axis descriptions `desc`); with a font
/// (`text`), `caption` in `caption_size` points and room for the tick labels.
pub fn log_log_chart<'a, DB>(
    root: &'a plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
    text: bool,
    (caption, caption_size): (&str, u32),
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (x_desc, y_desc): (&str, &str),
) -> Result<plotters::chart::ChartContext<'a, DB, LogLog>, String>
where
    DB: plotters::prelude::DrawingBackend + 'a,
{
    use plotters::prelude::{BindKeyPoints, IntoLogRange};
    let mut builder = plotters::chart::ChartBuilder::on(root);
    builder.margin(20);
    if text {
        builder
            .caption(caption, ("sans-serif", caption_size))
            .x_label_area_size(50)
            .y_label_area_size(80);
    }
    let mut chart = builder
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
            (y0..y1).log_scale().with_key_points(log_ticks(y0, y1)),
        )
        .map_err(|e| e.to_string())?;
    draw_log_mesh(&mut chart, text, x_desc, y_desc)?;
    Ok(chart)
}

/// Draws the legend of a chart's labelled series at `position`: a light box with a black
/// border, 14-point text (call only when a font is available).
pub fn draw_legend<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    position: plotters::chart::SeriesLabelPosition,
) -> Result<(), plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    use plotters::style::{Color, BLACK, WHITE};
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_get_several_ticks() {
        // the k and d plots had a single tick
        assert_eq!(log_ticks(0.018, 0.16).len(), 10);
        assert_eq!(
            log_ticks(55.0, 160.0),
            vec![60.0, 70.0, 80.0, 90.0, 100.0, 150.0]
        );
        assert_eq!(
            log_ticks(0.004, 0.2),
            vec![0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
        );
        assert!(log_ticks(1e-12, 0.1).len() <= 12);
        assert!(log_ticks(0.0, 1.0).is_empty());
        let top = log_headroom(0.01, 0.1, 0.3);
        assert!(top > 0.1 && ((0.1f64.log10() + 2.0) / (top.log10() + 2.0) - 0.7).abs() < 1e-9);
    }
}
