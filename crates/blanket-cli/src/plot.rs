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

/// Tick values for a logarithmic axis over [lo, hi]: every power of ten when that gives at
/// least four ticks (thinned only past 16 decades), else 1, 2, 5 x 10^j when that does, else finer mantissas (1, 1.5, 2, 3, ..., 9), thinned to at most about a dozen,
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
    // Every decade is labelled (up to 16 of them).
    let decades = within(&[1.0]);
    if decades.len() >= 4 {
        return thin(decades, 16);
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

/// The lower end of a logarithmic axis over data in [lo, hi]: the power of ten at or below
/// lo / 1.2 when the axis spans two decades or more (its ticks are then the decades, so the
/// lowest data lie above a labelled decade), else lo / 1.5.
pub fn log_floor(lo: f64, hi: f64) -> f64 {
    if hi >= 100.0 * lo {
        10f64.powf((lo / 1.2).log10().floor())
    } else {
        lo / 1.5
    }
}

/// The upper end of a logarithmic axis over data in [lo, hi] leaving the top `free` fraction
/// of the plot empty (room for the legend, which then covers no data).
pub fn log_headroom(lo: f64, hi: f64, free: f64) -> f64 {
    let (l0, l1) = (lo.log10(), hi.log10());
    10f64.powf(l1 + (l1 - l0) * free / (1.0 - free))
}

/// The one tick-label rule of every plot axis: plain decimals for 0.01 <= |v| < 10^4 (at
/// most 3 significant digits, no trailing zeros: 0.01, 0.05, 1, 150, 1000), scientific
/// notation outside it with a mantissa of at most 3 significant digits and no "+" or
/// padding (1e-3, 2.5e-7, 1e4, 1.5e5, 1e12). Powers of ten thus read 1e-3, 0.01, 0.1, 1, 10,
/// 100, 1000, 1e4, 1e5, ..., never "100000" beside "1e6".
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    let a = v.abs();
    // Decide on the value rounded to 3 significant digits (9999.7 labels as 1e4).
    let rounded = format!("{a:.2e}").parse::<f64>().unwrap_or(a);
    if (1e-2..1e4).contains(&rounded) {
        let digits = (2 - rounded.log10().floor() as i32).max(0) as usize;
        trim(&format!("{v:.digits$}"))
    } else {
        let s = format!("{v:.2e}");
        match s.split_once('e') {
            Some((mantissa, exp)) => format!("{}e{exp}", trim(mantissa)),
            None => s,
        }
    }
}

/// Whether a series is drawn as a certified bound. [`draw_order`] puts the others last.
pub trait Certified {
    /// True for a certified bound, false for a number shown only for comparison.
    fn certified(&self) -> bool;
}

/// The order in which to draw series: certified ones first (in their given order), then the
/// uncertified ones, so an uncertified curve (drawn dashed) lies on top and is never hidden
/// under a certified one it coincides with.
pub fn draw_order<T: Certified>(series: &[T]) -> Vec<&T> {
    let (mut certified, uncertified): (Vec<&T>, Vec<&T>) =
        series.iter().partition(|s| s.certified());
    certified.extend(uncertified);
    certified
}

/// One line style per series index for plots whose curves may coincide: a distinct dash
/// pattern (`None`: solid; `Some((dash, gap))` in pixels) and marker, so a line lying under
/// another stays visible.
pub fn series_style(i: usize) -> (Option<(u32, u32)>, Marker) {
    const STYLES: [(Option<(u32, u32)>, Marker); 5] = [
        (None, Marker::Circle),
        (Some((10, 5)), Marker::Square),
        (Some((3, 4)), Marker::Cross),
        (Some((14, 4)), Marker::Triangle),
        (Some((6, 3)), Marker::Diamond),
    ];
    STYLES[i % STYLES.len()]
}

/// A point marker of [`series_style`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Hollow square.
    Square,
    /// Diagonal cross.
    Cross,
    /// Filled triangle.
    Triangle,
    /// Hollow diamond.
    Diamond,
    /// No marker (a line alone).
    None,
}

/// Draws the points `v` of a series with `marker` in `colour` (about 4 pixels).
pub fn draw_markers<DB, CT>(
    chart: &mut plotters::chart::ChartContext<'_, DB, CT>,
    v: &[(f64, f64)],
    marker: Marker,
    colour: plotters::style::RGBColor,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend,
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    use plotters::style::Color;
    let style = colour.stroke_width(2);
    chart
        .draw_series(v.iter().map(|&at| Glyph {
            at,
            line: None,
            marker,
            style,
        }))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A marker, optionally on a 20-pixel line with a dash pattern (a legend entry), as one
/// element (plotters' composed elements cannot be boxed for a borrowed backend).
struct Glyph<C> {
    at: C,
    /// `Some(dash)`: a legend line starting at `at` with the marker in its middle.
    line: Option<Option<(u32, u32)>>,
    marker: Marker,
    style: plotters::style::ShapeStyle,
}

impl<'a, C: 'a> plotters::element::PointCollection<'a, C> for &'a Glyph<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: plotters::prelude::DrawingBackend> plotters::element::Drawable<DB> for Glyph<C> {
    fn draw<I: Iterator<Item = (i32, i32)>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), plotters_backend::DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let s = &self.style;
        let filled = plotters::style::ShapeStyle { filled: true, ..*s };
        let (cx, cy) = match self.line {
            None => (x, y),
            Some(dash) => {
                // the series' own dash pattern over the 20-pixel legend line
                let (d, g) = dash.map_or((20, 0), |(d, g)| (d as i32, g as i32));
                let mut a = 0;
                while a < 20 {
                    backend.draw_line((x + a, y), (x + (a + d).min(20), y), s)?;
                    a += (d + g).max(1);
                }
                (x + 10, y)
            }
        };
        match self.marker {
            Marker::Circle => backend.draw_circle((cx, cy), 4, &filled, true),
            Marker::Square => backend.draw_rect((cx - 4, cy - 4), (cx + 4, cy + 4), s, false),
            Marker::Cross => {
                backend.draw_line((cx - 4, cy - 4), (cx + 4, cy + 4), s)?;
                backend.draw_line((cx - 4, cy + 4), (cx + 4, cy - 4), s)
            }
            Marker::Triangle => {
                backend.fill_polygon([(cx, cy - 5), (cx + 5, cy + 4), (cx - 5, cy + 4)], &filled)
            }
            Marker::Diamond => backend.draw_path(
                [
                    (cx, cy - 5),
                    (cx + 5, cy),
                    (cx, cy + 5),
                    (cx - 5, cy),
                    (cx, cy - 5),
                ],
                s,
            ),
            Marker::None => Ok(()),
        }
    }
}

/// Draws `v` as a line in `colour`, solid or dashed (`dash`: dash and gap in pixels).
pub fn draw_line<DB, CT>(
    chart: &mut plotters::chart::ChartContext<'_, DB, CT>,
    v: &[(f64, f64)],
    dash: Option<(u32, u32)>,
    style: plotters::style::ShapeStyle,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend,
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    use plotters::series::{DashedLineSeries, LineSeries};
    match dash {
        None => chart
            .draw_series(LineSeries::new(v.iter().copied(), style))
            .map(|_| ()),
        Some((d, g)) => chart
            .draw_series(DashedLineSeries::new(v.iter().copied(), d, g, style))
            .map(|_| ()),
    }
    .map_err(|e| e.to_string())
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

/// Adds a legend entry `label` drawn as the series is: a 20-pixel line with the dash pattern
/// `dash` (`None`: solid) in `style` and `marker` in its middle.
pub fn legend_entry<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    label: String,
    dash: Option<(u32, u32)>,
    marker: Marker,
    style: plotters::style::ShapeStyle,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    chart
        .draw_series(std::iter::empty::<plotters::element::PathElement<(f64, f64)>>())
        .map_err(|e| e.to_string())?
        .label(label)
        .legend(move |at| Glyph {
            at,
            line: Some(dash),
            marker,
            style,
        });
    Ok(())
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
        assert_eq!(
            log_ticks(1e-12, 0.1).len(),
            12,
            "every decade of the delta axis"
        );
        assert!(log_ticks(0.0, 1.0).is_empty());
        // the lowest curve of the t plot (0.018) lay below the lowest labelled decade (0.1)
        assert_eq!(log_floor(0.018, 1e3), 0.01);
        assert_eq!(log_floor(1.95, 4e6), 1.0);
        assert!((log_floor(0.015, 0.2) - 0.01).abs() < 1e-12);
        let top = log_headroom(0.01, 0.1, 0.3);
        assert!(top > 0.1 && ((0.1f64.log10() + 2.0) / (top.log10() + 2.0) - 0.7).abs() < 1e-9);
    }

    #[test]
    fn tick_labels_use_one_format_per_decade_from_1e_minus_9_to_1e12() {
        let labels: Vec<String> = (-9..=12).map(|e| tick_label(10f64.powi(e))).collect();
        assert_eq!(
            labels,
            [
                "1e-9", "1e-8", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3", "0.01", "0.1", "1", "10",
                "100", "1000", "1e4", "1e5", "1e6", "1e7", "1e8", "1e9", "1e10", "1e11", "1e12"
            ]
        );
        // the same rule between decades: no "100000" beside "1e6", 3 significant digits
        assert_eq!(tick_label(150_000.0), "1.5e5");
        assert_eq!(tick_label(2.5e-7), "2.5e-7");
        assert_eq!(tick_label(0.05), "0.05");
        assert_eq!(tick_label(150.0), "150");
        assert_eq!(tick_label(9999.7), "1e4");
        assert_eq!(tick_label(-2e-4), "-2e-4");
        for t in log_ticks(1e-9, 1e12) {
            let l = tick_label(t);
            assert!(!l.contains("00000") && !l.contains('+'), "{l}");
        }
    }

    struct S(&'static str, bool);
    impl Certified for S {
        fn certified(&self) -> bool {
            self.1
        }
    }

    #[test]
    fn uncertified_curves_are_drawn_last_on_top() {
        // the variation-ratio line (uncertified) came before grr-exact and lay under it
        let s = [
            S("blanket-closed", true),
            S("variation-ratio", false),
            S("grr-exact", true),
            S("other-uncertified", false),
        ];
        let names: Vec<&str> = draw_order(&s).iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            [
                "blanket-closed",
                "grr-exact",
                "variation-ratio",
                "other-uncertified"
            ]
        );
    }

    #[test]
    fn overlapping_series_get_distinct_styles() {
        let styles: Vec<_> = (0..5).map(series_style).collect();
        for i in 0..5 {
            for j in 0..i {
                assert_ne!(styles[i].0, styles[j].0, "dash patterns {i} and {j}");
                assert_ne!(styles[i].1, styles[j].1, "markers {i} and {j}");
            }
        }
    }
}
