//! The vector-sum guarantee: the reductions of the module documentation (t = 1 exact, t >= 2
//! per coordinate, composed).

use super::*;
use crate::accounting::{round_up, Guarantee, LocalRandomizer, ShuffleAccountant};
use crate::calibrate::LocalPrivacy;
use crate::params::{Delta, Epsilon, NumUsers};
use crate::randomizer::grr::local_epsilon;

/// Advanced composition (Dwork, Rothblum, Vadhan 2010, as Theorem 4.2 of Scott et al.):
/// t mechanisms, each (eps1, delta1)-DP, compose to
/// (sqrt(2 t log(1/delta_hat)) eps1 + t eps1 (e^eps1 - 1), t delta1 + delta_hat); basic
/// composition gives (t eps1, t delta1). Returns the smaller epsilon, rounded up.
pub fn compose_epsilon(eps1: f64, t: u32, delta_hat: f64) -> f64 {
    let tf = f64::from(t);
    if t <= 1 {
        return eps1;
    }
    let basic = tf * eps1;
    let advanced = (2.0 * tf * (1.0 / delta_hat).ln()).sqrt() * eps1 + tf * eps1 * eps1.exp_m1();
    round_up(basic.min(advanced), 8)
}

/// The largest per-instance epsilon whose t-fold composition ([`compose_epsilon`]) is at most
/// `eps` (bisection, returning the certified lower end).
pub fn per_message_epsilon(eps: f64, t: u32, delta_hat: f64) -> f64 {
    if t <= 1 {
        return eps;
    }
    let (mut lo, mut hi) = (0.0f64, eps);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if compose_epsilon(mid, t, delta_hat) <= eps {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi {
            break;
        }
    }
    lo
}

/// For t >= 2: a number of users (the target included) that each of the target's t sampled
/// coordinates has except with probability `tail`: 1 + floor(mu - sqrt(2 mu log(1/tail)))
/// with mu = (n - 1) t / d (multiplicative Chernoff lower tail,
/// Pr[X <= (1 - eta) mu] <= exp(-eta^2 mu / 2)), rounded down. `None` if it is below 2.
pub fn coordinate_users_lower_bound(n: NumUsers, d: u32, t: u32, tail: f64) -> Option<NumUsers> {
    let mu = (n.get() - 1) as f64 * f64::from(t) / f64::from(d);
    let x = mu - (2.0 * mu * (1.0 / tail).ln()).sqrt();
    // Every step above is within a few ulps; shave a relative 1e-12 before flooring.
    let others = (x * (1.0 - 1e-12)).floor();
    if others.is_nan() || others < 1.0 {
        return None;
    }
    NumUsers::new(others as u64 + 1).ok()
}

/// The delta split for t >= 2: (per-instance delta, composition slack, Chernoff tail).
pub(super) fn delta_split(delta: f64, t: u32) -> (f64, f64, f64) {
    (
        delta / (4.0 * f64::from(t)),
        delta / 2.0,
        delta / (4.0 * f64::from(t)),
    )
}

impl VectorSum {
    /// The local (LDP) guarantee of the randomizer: one message is GRR over the k + 1 levels
    /// of a data-independent coordinate, eps0 = log(1 + (k + 1)(1 - gamma) / gamma) (Balle
    /// et al. 2019, Section 3; the randomized rounding before it only adds noise); a user's t
    /// messages compose to t eps0, attained by the inputs 0^d and 1^d (every message is then
    /// level 0 resp. k before GRR, so each of the t likelihood ratios reaches e^eps0).
    pub fn local_privacy(&self) -> LocalPrivacy {
        LocalPrivacy::of_messages(local_epsilon(self.k.levels(), self.grr.gamma()), self.t)
    }

    /// levels) for n users at `delta`, certified by `accountant` through the reductions in the
    /// module documentation; `None` if the accountant certifies none.
    pub fn certify(
        &self,
        n: NumUsers,
        delta: Delta,
        accountant: &dyn ShuffleAccountant,
    ) -> Option<Guarantee> {
        self.certify_target(n, delta, None, accountant)
    }

    /// Like [`VectorSum::certify`]; when `target_eps` is given and the accountant's curve
    /// certifies it exactly (delta(target) <= delta), the guarantee states the target itself
    /// rather than the upper end of the accountant's epsilon search (which can exceed it by
    /// the search's resolution). The method named is the one that certified.
    pub fn certify_target(
        &self,
        n: NumUsers,
        delta: Delta,
        target_eps: Option<Epsilon>,
        accountant: &dyn ShuffleAccountant,
    ) -> Option<Guarantee> {
        let g = self.grr.gamma().get();
        // One shuffled GRR instance: its certified guarantee, tightened to `want` if the
        // curve certifies `want` exactly.
        let instance = |r: LocalRandomizer, users: NumUsers, d: Delta, want: Option<f64>| {
            let mut out = accountant.guarantee(&r, users, d).ok()?;
            if let Some(w) = want.filter(|&w| out.epsilon > w) {
                if let Some(method) = accountant.certify_at(&r, users, w, d.get()) {
                    out = Guarantee {
                        epsilon: w,
                        delta: d.get(),
                        method,
                    };
                }
            }
            Some(out)
        };
        if self.t == 1 {
            let m = u64::from(self.d) * (u64::from(self.k.get()) + 1);
            let m = u32::try_from(m).ok()?;
            let r = LocalRandomizer::Grr { m, gamma: g };
            return instance(r, n, delta, target_eps.map(Epsilon::get));
        }
        let (d1, dh, tail) = delta_split(delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(n, self.d, self.t, tail)?;
        let r = LocalRandomizer::Grr {
            m: self.k.levels().get(),
            gamma: g,
        };
        let want = target_eps.map(|e| per_message_epsilon(e.get(), self.t, dh) * (1.0 - 2e-6));
        let one = instance(r, n1, Delta::new(d1).ok()?, want)?;
        Some(Guarantee {
            epsilon: compose_epsilon(one.epsilon, self.t, dh),
            delta: delta.get(),
            method: one.method,
        })
    }
}
