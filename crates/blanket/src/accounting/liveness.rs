//! Liveness guard (issue 8, item 10): every accountant and calibration entry point returns
//! promptly (a value or a typed error) on any finite input, including local or target
//! epsilons whose exponential overflows (eps >= 709.78) and blanket probabilities that
//! underflow. Before the fix, eps >= 46 hung `calibrate` (the geometric bisection in
//! `grr_exact` took sqrt(lo * hi) with lo * hi underflowing to 0, and `GrrPair::epsilon`
//! bracketed toward an infinite eps0), and at n = 1e12 a Mills-ratio bracket narrower than
//! its own direct computation's error was recomputed at every step.

#[cfg(test)]
mod tests {
    use crate::accounting::{Best, LocalRandomizer, Method};
    use crate::calibrate::{calibrate, max_eps0, Target};
    use crate::params::{Delta, DomainSize, Epsilon, NumUsers};
    use crate::protocol::histogram::HistogramShape;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Log grid over [1e-3, 1e4] plus the values that used to hang or overflow.
    fn eps_grid() -> Vec<f64> {
        let mut v: Vec<f64> = (0..=14)
            .map(|i| 1e-3 * 10f64.powf(i as f64 * 0.5))
            .collect();
        v.extend([
            46.0, 48.0, 50.0, 100.0, 700.0, 709.0, 710.0, 745.0, 1000.0, 1e4,
        ]);
        v
    }

    /// One combination: every method's epsilon, delta and min_gamma, max_eps0 (if
    /// `inverse`) and a histogram calibration. Only checks that an `Ok` value is in range.
    fn run_one(eps: f64, delta: f64, n: u64, m: u64, inverse: bool) {
        let nu = NumUsers::new(n).unwrap();
        let d = Delta::new(delta).unwrap();
        let e = Epsilon::new(eps).unwrap();
        let k = DomainSize::new(m).unwrap();
        let krr = LocalRandomizer::krr(k, eps);
        if let LocalRandomizer::Grr { gamma, .. } = krr {
            assert!(
                (f64::MIN_POSITIVE..1.0).contains(&gamma),
                "krr({m}, {eps}): {gamma}"
            );
        }
        let randomizers = [krr, LocalRandomizer::Generic { eps0: eps }];
        let target = Target {
            eps: e,
            delta: d,
            n: nu,
        };
        for method in Method::ALL.into_iter().chain([Method::Best]) {
            let acct = method.accountant();
            for r in &randomizers {
                if let Ok(x) = acct.epsilon(r, nu, d) {
                    assert!(x >= 0.0, "{method} {r:?} n = {n}: epsilon {x}");
                }
                if let Ok(x) = acct.delta(r, nu, eps) {
                    assert!(
                        (0.0..=1.0).contains(&x),
                        "{method} {r:?} n = {n}: delta {x}"
                    );
                }
            }
            if let Ok(g) = acct.min_gamma(k, nu, e, d) {
                assert!(
                    g > 0.0 && g < 1.0,
                    "{method} m = {m} n = {n} eps = {eps}: {g}"
                );
            }
            if inverse {
                for kk in [Some(k), None] {
                    if let Ok(x) = max_eps0(kk, &target, acct.as_ref()) {
                        assert!(x > 0.0 && x.is_finite(), "{method}: max_eps0 {x}");
                    }
                }
            }
        }
        let _ = calibrate(&HistogramShape { m: k }, &target, &Best::default());
    }

    /// The whole sweep must finish within a generous wall-clock limit (a liveness guard, not
    /// a benchmark: it takes about 30 s on a loaded 2-core machine).
    #[test]
    fn every_entry_point_returns_promptly() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let deltas = [1e-12, 1e-6, 0.3];
            let ms = [2u64, 3, 100, 1 << 20];
            // Every eps with small and moderate n; delta and m cycle. max_eps0 (about 40
            // accountant calls per query whatever the target) only up to n = 1000.
            for (i, eps) in eps_grid().into_iter().enumerate() {
                for (j, &n) in [2u64, 10, 1000, 100_000].iter().enumerate() {
                    let delta = deltas[(i + j) % deltas.len()];
                    let m = ms[(i + 3 * j) % ms.len()];
                    run_one(eps, delta, n, m, n <= 1000);
                }
            }
            // Huge n with the large eps that used to hang, without max_eps0 (whose cost does
            // not depend on the target eps: it scans eps0 up to 64, and at n = 1e12 each of
            // its accountant calls takes seconds, which is cost, not a hang).
            let big = [46.0, 48.0, 50.0, 100.0, 700.0, 1000.0, 1e4];
            for (i, &eps) in big.iter().enumerate() {
                for (j, &n) in [100_000_000u64, 1_000_000_000_000].iter().enumerate() {
                    let delta = deltas[(i + j) % deltas.len()];
                    let m = ms[(i + 3 * j) % ms.len()];
                    run_one(eps, delta, n, m, false);
                }
            }
            let _ = tx.send(());
        });
        match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the sweep did not finish in 180 s"),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the sweep panicked"),
        }
    }

    /// The composition entry points on the same eps grid, k up to 1e9, pure and approximate
    /// components: each returns (Ok or a typed error) within the guard.
    #[test]
    fn composition_entry_points_return_promptly() {
        use crate::accounting::composition::{basic, drv, kov_epsilon, Pld};
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for eps in eps_grid() {
                for k in [1u64, 1000, 1_000_000_000] {
                    for (cd, total) in [(0.0, 1e-12), (1e-13, 0.3), (0.0, 0.3)] {
                        let _ = basic(eps, cd, k);
                        let _ = drv(eps, cd, k, total / 2.0);
                        if let Ok(e) = kov_epsilon(eps, cd, k, total) {
                            assert!(e >= 0.0, "kov {eps} {k}: {e}");
                        }
                        let pld = Pld::from_epsilon_delta(eps, cd, None).and_then(|p| p.compose(k));
                        if let Ok(p) = pld {
                            assert!(p.epsilon(total) >= 0.0, "pld {eps} {k}");
                        }
                    }
                }
            }
            let _ = tx.send(());
        });
        match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the sweep did not finish in 180 s"),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the sweep panicked"),
        }
    }
}
