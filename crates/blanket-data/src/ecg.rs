//! The embedded MIT-BIH record 208 excerpt (lead MLII, 360 Hz, millivolts; see
//! `data/README.md` for the source and licence).

/// The CSV text as shipped: a comment line, the header `mv`, then 108000 values.
pub const CSV: &str = include_str!("../../../data/mitbih_208_excerpt.csv");

/// Sampling rate of the excerpt, in Hz.
pub const SAMPLE_RATE_HZ: f64 = 360.0;

/// The signal in millivolts, in time order.
pub fn signal_mv() -> Vec<f64> {
    CSV.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .collect()
}

/// The signal min-max normalized to [0, 1] over the whole excerpt.
pub fn signal_unit() -> Vec<f64> {
    let s = signal_mv();
    let (lo, hi) = s
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let span = hi - lo;
    s.iter()
        .map(|&x| ((x - lo) / span).clamp(0.0, 1.0))
        .collect()
}

/// The signal quantized into `bins` equal-width categories over its range: category
/// `floor(bins * (x - min) / (max - min))`, the maximum falling in the last bin.
pub fn signal_categories(bins: u32) -> Vec<u32> {
    let b = f64::from(bins.max(1));
    signal_unit()
        .into_iter()
        .map(|u| ((u * b) as u32).min(bins.saturating_sub(1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_matches_its_readme() {
        let s = signal_mv();
        assert_eq!(s.len(), 108_000);
        let mean = s.iter().sum::<f64>() / s.len() as f64;
        assert!((mean - (-0.16510875)).abs() < 1e-9, "{mean}");
        let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / s.len() as f64;
        assert!((var.sqrt() - 0.5992474).abs() < 1e-6);
        let u = signal_unit();
        assert!(u.iter().all(|x| (0.0..=1.0).contains(x)));
        let c = signal_categories(16);
        assert!(c.iter().all(|&x| x < 16));
        assert!(c.contains(&15) && c.contains(&0));
    }
}
