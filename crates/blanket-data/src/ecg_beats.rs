//! Heartbeat vectors from the embedded ECG excerpt, derived the way the Kaggle "ECG Heartbeat
//! Categorization" set (used by Scott et al. 2021) was built from MIT-BIH (Kachuee, Fazeli,
//! Sarrafzadeh, "ECG Heartbeat Classification: A Deep Transferable Representation", 2018):
//!
//! 1. resample the 360 Hz signal to 125 Hz (linear interpolation);
//! 2. cut it into 10 s windows (1250 samples; a shorter last window is dropped);
//! 3. min-max normalize each window to [0, 1];
//! 4. find the R peaks: local maxima (first difference changes sign from + to -) with
//!    normalized value >= 0.9;
//! 5. T = median of the window's R-R intervals; from each R peak take 1.2 T samples (a beat
//!    whose segment would leave the window is dropped);
//! 6. zero-pad (or truncate) each segment to 187 samples.
//!
//! That yields about a hundred beats from the five minutes. For experiments with tens of
//! thousands of users there are also [`sliding_windows`]: every offset of a d-sample window of
//! the normalized 125 Hz signal.

use crate::ecg::{signal_mv, SAMPLE_RATE_HZ};

/// Sampling rate of the heartbeat vectors, in Hz.
pub const BEAT_RATE_HZ: f64 = 125.0;
/// Samples per 10 s window at 125 Hz.
pub const WINDOW_SAMPLES: usize = 1250;
/// Length of a heartbeat vector (Kaggle set).
pub const BEAT_LEN: usize = 187;
/// Threshold on the normalized value of an R-peak candidate.
pub const PEAK_THRESHOLD: f64 = 0.9;

/// Linear-interpolation resampling of a signal from `from_hz` to `to_hz`: output sample i is
/// the signal at time i / to_hz, for every such time within the input.
pub fn resample_linear(x: &[f64], from_hz: f64, to_hz: f64) -> Vec<f64> {
    if x.is_empty() || !(from_hz > 0.0 && to_hz > 0.0) {
        return Vec::new();
    }
    let step = from_hz / to_hz;
    let last = (x.len() - 1) as f64;
    let count = (last / step).floor() as usize + 1;
    (0..count)
        .map(|i| {
            let pos = i as f64 * step;
            let j = pos.floor() as usize;
            let frac = pos - j as f64;
            match x.get(j + 1) {
                Some(&next) => x[j] + frac * (next - x[j]),
                None => x[j],
            }
        })
        .collect()
}

/// Min-max normalizes a window to [0, 1] in place (a constant window becomes all zeros).
pub fn normalize_window(w: &mut [f64]) {
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let span = hi - lo;
    for v in w.iter_mut() {
        *v = if span > 0.0 {
            ((*v - lo) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
    }
}

/// The excerpt at 125 Hz, cut into 10 s windows, each min-max normalized to [0, 1].
pub fn normalized_windows() -> Vec<Vec<f64>> {
    let s = resample_linear(&signal_mv(), SAMPLE_RATE_HZ, BEAT_RATE_HZ);
    s.chunks_exact(WINDOW_SAMPLES)
        .map(|c| {
            let mut w = c.to_vec();
            normalize_window(&mut w);
            w
        })
        .collect()
}

/// R-peak candidates of a normalized window: indices i with w[i] >= threshold where the
/// first difference turns from positive to non-positive (plateaus count once, at their start).
pub fn r_peaks(w: &[f64], threshold: f64) -> Vec<usize> {
    (1..w.len().saturating_sub(1))
        .filter(|&i| w[i] >= threshold && w[i] > w[i - 1] && w[i] >= w[i + 1])
        .collect()
}

/// The beats of one normalized window (steps 4 to 6 of the module documentation).
pub fn window_beats(w: &[f64]) -> Vec<Vec<f64>> {
    let peaks = r_peaks(w, PEAK_THRESHOLD);
    if peaks.len() < 2 {
        return Vec::new();
    }
    let mut rr: Vec<usize> = peaks.windows(2).map(|p| p[1] - p[0]).collect();
    rr.sort_unstable();
    let median = if rr.len() % 2 == 1 {
        rr[rr.len() / 2] as f64
    } else {
        (rr[rr.len() / 2 - 1] + rr[rr.len() / 2]) as f64 / 2.0
    };
    let len = (1.2 * median).round() as usize;
    peaks
        .iter()
        .filter(|&&p| p + len <= w.len())
        .map(|&p| {
            let mut beat = vec![0.0; BEAT_LEN];
            let take = len.min(BEAT_LEN);
            beat[..take].copy_from_slice(&w[p..p + take]);
            beat
        })
        .collect()
}

/// All heartbeat vectors of the excerpt, 187 samples each, values in [0, 1].
pub fn beats() -> Vec<Vec<f64>> {
    normalized_windows()
        .iter()
        .flat_map(|w| window_beats(w))
        .collect()
}

/// Every d-sample window (every offset) of the normalized 125 Hz signal (the 10 s windows
/// concatenated): 37500 - d + 1 vectors in [0, 1]^d. Empty for d = 0 or d too long.
pub fn sliding_windows(d: usize) -> Vec<Vec<f64>> {
    let s: Vec<f64> = normalized_windows().concat();
    if d == 0 || d > s.len() {
        return Vec::new();
    }
    s.windows(d).map(<[f64]>::to_vec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resampling_is_linear_and_keeps_the_duration() {
        let x: Vec<f64> = (0..361).map(f64::from).collect(); // 1 s at 360 Hz, a ramp
        let y = resample_linear(&x, 360.0, 125.0);
        assert_eq!(y.len(), 126); // times 0, 1/125, ..., 125/125 = 1 s
        for (i, v) in y.iter().enumerate() {
            assert!((v - i as f64 * 2.88).abs() < 1e-9, "{i}: {v}");
        }
        let full = resample_linear(&signal_mv(), SAMPLE_RATE_HZ, BEAT_RATE_HZ);
        assert_eq!(full.len(), 37_500);
    }

    #[test]
    fn windows_are_normalized() {
        let w = normalized_windows();
        assert_eq!(w.len(), 30);
        for win in &w {
            assert_eq!(win.len(), WINDOW_SAMPLES);
            assert!(win.iter().all(|v| (0.0..=1.0).contains(v)));
            assert!(win.contains(&0.0) && win.contains(&1.0));
        }
        let mut c = vec![2.0; 4];
        normalize_window(&mut c);
        assert_eq!(c, vec![0.0; 4]);
    }

    #[test]
    fn peaks_and_beats_on_a_synthetic_window() {
        // Peaks of height 1 every 100 samples on a low baseline: median RR 100, beats of
        // 120 samples then zeros; the last peak's segment leaves the window and is dropped.
        let mut w = vec![0.1; 450];
        for p in [50, 150, 250, 350] {
            w[p] = 1.0;
            w[p + 1] = 0.5;
        }
        assert_eq!(r_peaks(&w, 0.9), vec![50, 150, 250, 350]);
        let b = window_beats(&w);
        assert_eq!(b.len(), 3);
        for beat in &b {
            assert_eq!(beat.len(), BEAT_LEN);
            assert_eq!(beat[0], 1.0);
            assert_eq!(beat[1], 0.5);
            assert_eq!(beat[119], 0.1);
            assert!(beat[120..].iter().all(|&v| v == 0.0));
        }
    }

    #[test]
    fn excerpt_beats_and_sliding_windows() {
        let b = beats();
        assert!((60..=400).contains(&b.len()), "{} beats", b.len());
        assert!(b
            .iter()
            .all(|v| v.len() == BEAT_LEN && v.iter().all(|x| (0.0..=1.0).contains(x))));
        // A beat starts at its R peak.
        assert!(b.iter().all(|v| v[0] >= PEAK_THRESHOLD));
        let s = sliding_windows(100);
        assert_eq!(s.len(), 37_500 - 99);
        assert!(s.iter().all(|v| v.len() == 100));
        assert!(sliding_windows(0).is_empty());
        assert!(sliding_windows(40_000).is_empty());
    }
}
