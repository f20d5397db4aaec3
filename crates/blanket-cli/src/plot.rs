//! Helpers shared by the plots (`account curve`, `experiment`): the font lookup.

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
