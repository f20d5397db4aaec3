//! Split-and-mix exact summation in Z_q (Ishai, Kushilevitz, Ostrovsky, Sahai, FOCS 2006;
//! spec `04-multi-message.md`): each client splits its input into m additive shares, one
//! uniform shuffle mixes all n m shares, the analyzer outputs their sum mod q.
//!
//! # How many shares: [`m_required`]
//! The protocol is sigma-secure if, for any two input vectors with the same sum mod q, the
//! analyzer's views are within total variation distance 2^-sigma. Balle, Bell, Gascon,
//! Nissim ("Private Summation in the Multi-Message Shuffle Model", CCS 2020, arXiv
//! 2002.00817; first as "Improved Summation from Shuffling", arXiv 1909.11225) and Ghazi,
//! Manurangsi, Pagh, Velingker (EUROCRYPT 2020, arXiv 1909.11073) prove
//! m = O(1 + (sigma + log q) / log n) suffices; their explicit-constant statements could not
//! be recovered from the sources available here (see `docs/multi-message.md`). blanket
//! therefore uses its own bound, proved in `docs/multi-message.md` (a second-moment argument
//! of the same shape as theirs):
//!
//! TV(view(x), view(x')) <= sqrt(B_n), B_1 = 0,
//! B_r = sum_{a=1}^{r-1} C(r-1, a-1) C(r, a) / C(r m, a m) * (q - 1) * (1 + B_{r-a}),
//!
//! evaluated by [`crate::protocol::ikos_bound`]: exactly for n <= 129, and for any n up to
//! [`MAX_USERS`] by a proved relaxation (windowed recursion plus a monotonicity extension),
//! with floating-point error rounded towards the safe side.
//!
//! It holds for one uniform shuffle of all n m shares (the view is the multiset of shares),
//! not for m separate shufflers nor the alternating shuffler. At n = 10^4, q = 2^32,
//! sigma = 40 it gives m = 10, below the 12 quoted by Balle et al. (both are sufficient
//! counts; their derivation was not available to compare).

use thiserror::Error;

use crate::analyzer::ModularSum;
use crate::field::{FieldError, Modulus};
use crate::protocol::ikos_bound::ln_bound;
use crate::rng::{SecureRng, SimulationRng};

/// Largest number of clients [`m_required`] evaluates its bound for (n m stays below 2^53,
/// where f64 holds integers exactly). The cost does not grow with n beyond a few thousand
/// clients ([`crate::protocol::ikos_bound`]).
pub const MAX_USERS: u64 = 1_000_000_000_000;

/// Largest share count [`m_required`] searches.
pub const MAX_SHARES: u32 = 4096;

/// Largest security parameter sigma [`m_required`] accepts.
pub const MAX_SIGMA: u32 = 512;

/// A parameter of the split-and-mix protocol outside its range.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IkosError {
    /// An element, modulus or share count rejected by `field`.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The number of clients n is outside 1..=MAX_USERS.
    #[error("users n must be in 1..={max}, got {n}")]
    UsersOutOfRange {
        /// The rejected n.
        n: u64,
        /// [`MAX_USERS`].
        max: u64,
    },
    /// The security parameter sigma is outside 1..=MAX_SIGMA.
    #[error("sigma must be in 1..={max}, got {sigma}")]
    SigmaOutOfRange {
        /// The rejected sigma.
        sigma: u32,
        /// [`MAX_SIGMA`].
        max: u32,
    },
    /// The share count m is outside min..=MAX_SHARES (min = 2 for the protocol: one share
    /// reveals every input; min = 1 for [`distance_bound_log2`], an analysis function).
    #[error("shares m must be in {min}..={max}, got {m}")]
    SharesOutOfRange {
        /// The rejected m.
        m: u32,
        /// The smallest admissible m.
        min: u32,
        /// [`MAX_SHARES`].
        max: u32,
    },
    /// No share count up to MAX_SHARES meets the bound.
    #[error("no share count m <= {max} makes n = {n}, q = {q} sigma = {sigma}-secure")]
    NoShareCount {
        /// Clients.
        n: u64,
        /// Modulus.
        q: u128,
        /// Security parameter.
        sigma: u32,
        /// [`MAX_SHARES`].
        max: u32,
    },
}

/// The split-and-mix protocol over Z_q with m shares per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ikos {
    modulus: Modulus,
    shares: u32,
}

impl Ikos {
    /// m shares per client, `2 <= m <= MAX_SHARES` (one share would reveal every input).
    /// Choose m with [`m_required`].
    pub fn new(modulus: Modulus, shares: u32) -> Result<Self, IkosError> {
        if !(2..=MAX_SHARES).contains(&shares) {
            return Err(IkosError::SharesOutOfRange {
                m: shares,
                min: 2,
                max: MAX_SHARES,
            });
        }
        Ok(Self { modulus, shares })
    }

    /// The smallest share count that makes n clients sigma-secure ([`m_required`]).
    pub fn for_security(n: u64, modulus: Modulus, sigma: u32) -> Result<Self, IkosError> {
        Self::new(modulus, m_required(n, modulus, sigma)?)
    }

    /// The modulus q.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// Shares per client, m.
    pub fn shares(&self) -> u32 {
        self.shares
    }

    /// Client side: the m shares of `x` in Z_q (all to be sent through the shuffler).
    pub fn randomize(&self, x: u64, rng: &mut SecureRng) -> Result<Vec<u64>, IkosError> {
        Ok(self.modulus.share(x, self.shares as usize, rng)?)
    }

    /// [`Ikos::randomize`] with a seeded RNG, for simulations only.
    pub fn randomize_simulated(
        &self,
        x: u64,
        rng: &mut SimulationRng,
    ) -> Result<Vec<u64>, IkosError> {
        Ok(self.modulus.share(x, self.shares as usize, rng)?)
    }

    /// An empty analyzer state: absorb every shuffled share, merge shards freely.
    pub fn analyzer(&self) -> ModularSum {
        ModularSum::new(self.modulus)
    }

    /// log2 of blanket's bound on the analyzer's distance between two inputs with equal sums
    /// for n clients ([`distance_bound_log2`]).
    pub fn distance_bound_log2(&self, n: u64) -> Result<f64, IkosError> {
        distance_bound_log2(n, self.shares, self.modulus)
    }
}

fn check_users(n: u64) -> Result<usize, IkosError> {
    if (1..=MAX_USERS).contains(&n) {
        Ok(n as usize)
    } else {
        Err(IkosError::UsersOutOfRange { n, max: MAX_USERS })
    }
}

fn ln_q_minus_1(q: Modulus) -> f64 {
    ((q.q() - 1) as f64).ln()
}

/// log2 of blanket's upper bound on the total variation distance between the analyzer's
/// views (the multiset of all n m shares after one uniform shuffle) for any two input
/// vectors with the same sum mod q: min(1, sqrt(B_n)), with B_n from the recursion in the
/// module docs (derivation: `docs/multi-message.md`). `0.0` means no guarantee.
pub fn distance_bound_log2(n: u64, m: u32, q: Modulus) -> Result<f64, IkosError> {
    let n = check_users(n)?;
    if !(1..=MAX_SHARES).contains(&m) {
        return Err(IkosError::SharesOutOfRange {
            m,
            min: 1,
            max: MAX_SHARES,
        });
    }
    let ln_b = ln_bound(n as u64, m, ln_q_minus_1(q));
    Ok((0.5 * ln_b / core::f64::consts::LN_2).min(0.0))
}

/// ln of a lower bound on B_n, rounded down: the a = 1 and a = n - 1 terms of the recursion
/// with 1 + B >= 1, together (q - 1) n^2 / C(nm, m) for n >= 3 and 2 (q - 1) / C(2m, m) for
/// n = 2 (where they are one term).
fn ln_first_term(n: usize, m: usize, q: Modulus) -> f64 {
    let nm = n * m;
    // ln C(nm, m) = sum_{i<m} ln((nm - i) / (m - i))
    let ln_choose: f64 = (0..m)
        .map(|i| ((nm - i) as f64 / (m - i) as f64).ln())
        .sum();
    let pairs = if n == 2 { 2.0 } else { (n as f64).powi(2) };
    ((q.q() - 1) as f64).ln() + pairs.ln() - ln_choose - 1e-6
}

/// The smallest number of shares m for which blanket's bound makes split-and-mix with n
/// clients over Z_q sigma-secure: sqrt(U_n) <= 2^-sigma, U_n >= B_n computed by
/// [`crate::protocol::ikos_bound`] (module docs, `docs/multi-message.md`; blanket's
/// derivation, not a published theorem). m whose two extreme terms alone exceed
/// 2^(-2 sigma) are skipped without evaluating the bound. n = 1 needs one share (equal sums
/// mean equal inputs), but the protocol's minimum, 2, is returned. Valid for
/// 1 <= n <= [`MAX_USERS`] = 10^12.
pub fn m_required(n: u64, q: Modulus, sigma: u32) -> Result<u32, IkosError> {
    let users = check_users(n)?;
    if !(1..=MAX_SIGMA).contains(&sigma) {
        return Err(IkosError::SigmaOutOfRange {
            sigma,
            max: MAX_SIGMA,
        });
    }
    if users == 1 {
        // Any m is secure (equal sums mean equal inputs); the protocol's minimum is 2.
        return Ok(2);
    }
    let target = -2.0 * f64::from(sigma) * core::f64::consts::LN_2;
    // m = 1 never passes: c(r, b) >= 1 then, so B_n >= q - 1 >= 1.
    for m in 2..=MAX_SHARES {
        if ln_first_term(users, m as usize, q) > target {
            continue;
        }
        if ln_bound(n, m, ln_q_minus_1(q)) <= target {
            return Ok(m);
        }
    }
    Err(IkosError::NoShareCount {
        n,
        q: q.q(),
        sigma,
        max: MAX_SHARES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Aggregator;
    use crate::rng::simulation_rng;
    use crate::shuffle::{Shuffler, UniformShuffler};
    use std::collections::HashMap;

    /// Exact distribution of the multiset of all n m shares for input `x`, as counts out of
    /// q^(n (m-1)) equally likely choices of the free shares; a multiset is keyed by its
    /// count vector in base n m + 1.
    fn view_counts(x: &[u64], m: usize, q: u64) -> HashMap<u64, u64> {
        let n = x.len();
        let free = n * (m - 1);
        let total = q.pow(free as u32);
        let base = (n * m + 1) as u64;
        let mut out = HashMap::new();
        let mut digits = vec![0u64; free];
        for code in 0..total {
            let mut c = code;
            for d in digits.iter_mut() {
                *d = c % q;
                c /= q;
            }
            let mut counts = vec![0u64; q as usize];
            for (i, &xi) in x.iter().enumerate() {
                let own = &digits[i * (m - 1)..(i + 1) * (m - 1)];
                let mut partial = 0;
                for &s in own {
                    counts[s as usize] += 1;
                    partial = (partial + s) % q;
                }
                counts[((xi + q - partial) % q) as usize] += 1;
            }
            let key = counts.iter().rev().fold(0u64, |k, &c| k * base + c);
            *out.entry(key).or_insert(0) += 1;
        }
        out
    }

    /// Largest exact total variation distance over all pairs of inputs with equal sums.
    fn exact_max_tv(n: usize, m: usize, q: u64) -> f64 {
        let mut by_sum: HashMap<u64, Vec<HashMap<u64, u64>>> = HashMap::new();
        for code in 0..q.pow(n as u32) {
            let mut c = code;
            let x: Vec<u64> = (0..n)
                .map(|_| {
                    let d = c % q;
                    c /= q;
                    d
                })
                .collect();
            let s = x.iter().sum::<u64>() % q;
            by_sum.entry(s).or_default().push(view_counts(&x, m, q));
        }
        let total = q.pow((n * (m - 1)) as u32);
        let mut worst = 0u64;
        for views in by_sum.values() {
            for (i, a) in views.iter().enumerate() {
                for b in &views[i + 1..] {
                    // sum |a - b| over the union of keys = 2 * TV * total (integers).
                    let mut l1 = 0u64;
                    for (k, &ca) in a {
                        l1 += ca.abs_diff(*b.get(k).unwrap_or(&0));
                    }
                    for (k, &cb) in b {
                        if !a.contains_key(k) {
                            l1 += cb;
                        }
                    }
                    worst = worst.max(l1);
                }
            }
        }
        worst as f64 / 2.0 / total as f64
    }

    /// Every tiny instance: the exact worst-case distance is within blanket's bound.
    #[test]
    fn exact_enumeration_within_bound() {
        let mut informative = 0;
        for (n, m, q) in [
            (2, 2, 2),
            (2, 3, 2),
            (2, 2, 3),
            (2, 3, 3),
            (2, 5, 2),
            (2, 5, 3),
            (3, 2, 2),
            (3, 2, 3),
            (3, 3, 2),
            (3, 3, 3),
            (3, 4, 2),
            (3, 4, 3),
            (4, 2, 2),
            (4, 3, 2),
            (4, 3, 3),
            (5, 3, 2),
        ] {
            let tv = exact_max_tv(n, m, q);
            let bound = distance_bound_log2(n as u64, m as u32, Modulus::new(q.into()).unwrap())
                .unwrap()
                .exp2();
            assert!(tv <= bound, "n={n} m={m} q={q}: exact {tv} > bound {bound}");
            if bound < 1.0 && tv > 0.0 {
                informative += 1;
            }
        }
        assert!(informative >= 5, "only {informative} informative instances");
    }

    /// m = 1 reveals the multiset of inputs: exact distance 1 for (0, 2) vs (1, 1) mod 3.
    #[test]
    fn one_share_is_insecure() {
        assert_eq!(exact_max_tv(2, 1, 3), 1.0);
        assert_eq!(
            distance_bound_log2(2, 1, Modulus::new(3).unwrap()).unwrap(),
            0.0
        );
    }

    /// B_2 = 2 (q - 1) / C(2m, m) in closed form.
    #[test]
    fn two_users_closed_form() {
        for (m, q) in [(3u32, 5u128), (10, 1 << 32), (40, 1 << 64)] {
            let choose: f64 = (0..m)
                .map(|i| f64::from(2 * m - i) / f64::from(m - i))
                .product();
            let exact = 0.5 * (2.0 * (q - 1) as f64 / choose).log2();
            let got = distance_bound_log2(2, m, Modulus::new(q).unwrap()).unwrap();
            assert!(
                got >= exact.min(0.0) && got - exact.min(0.0) < 1e-6,
                "{got} {exact}"
            );
        }
    }

    /// The screening lower bound never exceeds the recursion (else `m_required` would skip an
    /// m that passes).
    #[test]
    fn screening_is_a_lower_bound() {
        for n in [2usize, 3, 4, 10, 50] {
            for m in [1usize, 2, 3, 5, 9] {
                for q in [2u128, 3, 1 << 32] {
                    let q = Modulus::new(q).unwrap();
                    let full = ln_bound(n as u64, m as u32, ln_q_minus_1(q));
                    assert!(ln_first_term(n, m, q) <= full, "n={n} m={m}");
                }
            }
        }
    }

    /// The anchor of the spec: n = 10^4, q = 2^32, sigma = 40.
    #[test]
    fn anchor_share_count() {
        let q = Modulus::power_of_two(32).unwrap();
        let m = m_required(10_000, q, 40).unwrap();
        assert_eq!(m, 10);
        assert!(distance_bound_log2(10_000, m, q).unwrap() <= -40.0);
        assert!(distance_bound_log2(10_000, m - 1, q).unwrap() > -40.0);
    }

    /// Valid from n = 10^2 to 10^12: m_required is non-increasing in n and non-decreasing in
    /// q and sigma over the table's grid, and each answer is certified and minimal.
    #[test]
    fn m_required_monotone_over_the_table_grid() {
        for sigma in [40u32, 80] {
            let mut by_q = Vec::new();
            for bits in [32u32, 64] {
                let q = Modulus::power_of_two(bits).unwrap();
                let ms: Vec<u32> = (2..=12)
                    .map(|e| m_required(10u64.pow(e), q, sigma).unwrap())
                    .collect();
                assert!(
                    ms.windows(2).all(|w| w[1] <= w[0]),
                    "sigma={sigma} q=2^{bits}: {ms:?}"
                );
                by_q.push(ms);
            }
            assert!(by_q[0].iter().zip(&by_q[1]).all(|(a, b)| a <= b));
        }
        let q = Modulus::power_of_two(32).unwrap();
        for n in [10u64.pow(6), 10u64.pow(8)] {
            let m = m_required(n, q, 40).unwrap();
            assert!(distance_bound_log2(n, m, q).unwrap() <= -40.0);
            assert!(distance_bound_log2(n, m - 1, q).unwrap() > -40.0);
            assert!(m_required(n, q, 80).unwrap() >= m);
        }
    }

    /// The m_required table of `docs/multi-message.md`: n = 10^2..10^8, q = 2^32, 2^64,
    /// sigma = 40, 80. `cargo test -p blanket --lib ikos::tests::m_required_table -- --ignored
    /// --nocapture`.
    #[test]
    #[ignore = "prints the docs table"]
    fn m_required_table() {
        println!("| n | q = 2^32, sigma = 40 | q = 2^32, sigma = 80 | q = 2^64, sigma = 40 | q = 2^64, sigma = 80 |");
        println!("|---|---|---|---|---|");
        for e in 2..=8u32 {
            let n = 10u64.pow(e);
            let mut row = format!("| 1e{e} |");
            for bits in [32u32, 64] {
                for sigma in [40u32, 80] {
                    let q = Modulus::power_of_two(bits).unwrap();
                    let m = m_required(n, q, sigma).unwrap();
                    let log2 = distance_bound_log2(n, m, q).unwrap();
                    row.push_str(&format!(" {m} ({log2:.1}) |"));
                }
            }
            println!("{row}");
        }
    }

    #[test]
    fn m_required_is_minimal_and_monotone() {
        for (n, q, sigma) in [
            (2u64, 3u128, 10u32),
            (10, 1 << 16, 20),
            (100, (1 << 64) - 59, 40),
            (1000, 1 << 64, 80),
        ] {
            let q = Modulus::new(q).unwrap();
            let m = m_required(n, q, sigma).unwrap();
            let s = f64::from(sigma);
            assert!(distance_bound_log2(n, m, q).unwrap() <= -s);
            if m > 1 {
                assert!(distance_bound_log2(n, m - 1, q).unwrap() > -s);
            }
            assert!(m_required(n, q, sigma + 10).unwrap() >= m);
        }
        assert_eq!(m_required(1, Modulus::new(7).unwrap(), 40), Ok(2));
    }

    #[test]
    fn parameter_ranges() {
        let q = Modulus::new(7).unwrap();
        assert_eq!(
            m_required(0, q, 40),
            Err(IkosError::UsersOutOfRange {
                n: 0,
                max: MAX_USERS
            })
        );
        assert!(m_required(MAX_USERS + 1, q, 40).is_err());
        assert!(matches!(
            m_required(10, q, 0),
            Err(IkosError::SigmaOutOfRange { sigma: 0, .. })
        ));
        assert!(Ikos::new(q, 0).is_err());
        let e = Ikos::new(q, 1).unwrap_err().to_string();
        assert!(e.contains("shares m") && e.contains("2..=4096"), "{e}");
        assert!(Ikos::new(q, MAX_SHARES + 1).is_err());
        let e = IkosError::UsersOutOfRange { n: 0, max: 5 }.to_string();
        assert!(e.contains("users n") && e.contains("1..=5"), "{e}");
    }

    /// n = 10^6 random inputs (q = 2^32 and a prime-ish q near 2^64), m from `m_required`,
    /// one uniform shuffle of all n m shares: the analyzer's sum is exact.
    #[test]
    fn million_clients_sum_exactly() {
        let mut rng = simulation_rng(1_000_000);
        let n = 1_000_000u64;
        for q in [1u128 << 32, (1 << 64) - 59] {
            let q = Modulus::new(q).unwrap();
            let protocol = Ikos::for_security(n, q, 40).unwrap();
            assert!(protocol.distance_bound_log2(n).unwrap() <= -40.0);
            let inputs: Vec<u64> = (0..n).map(|_| q.uniform(&mut rng)).collect();
            let mut messages = Vec::with_capacity(n as usize * protocol.shares() as usize);
            for &x in &inputs {
                messages.extend(protocol.randomize_simulated(x, &mut rng).unwrap());
            }
            UniformShuffler.shuffle(&mut messages, &mut rng);
            let mut total = protocol.analyzer();
            total.absorb_all(&messages).unwrap();
            assert_eq!(total.reports(), n * u64::from(protocol.shares()));
            assert_eq!(total.sum(), q.sum(inputs.iter().copied()));
        }
    }

    /// End to end: shares of every client, one uniform shuffle, sharded analyzers merged.
    #[test]
    fn shuffled_shares_sum_exactly() {
        let mut rng = simulation_rng(2026);
        for q in [2u128, 1000, 1 << 32, (1 << 64) - 59, 1 << 64] {
            let q = Modulus::new(q).unwrap();
            let protocol = Ikos::for_security(200, q, 40).unwrap();
            let inputs: Vec<u64> = (0..200).map(|_| q.uniform(&mut rng)).collect();
            let mut messages = Vec::new();
            for &x in &inputs {
                messages.extend(protocol.randomize_simulated(x, &mut rng).unwrap());
            }
            UniformShuffler.shuffle(&mut messages, &mut rng);
            let mut total = protocol.analyzer();
            for chunk in messages.chunks(333) {
                let mut shard = protocol.analyzer();
                shard.absorb_all(chunk).unwrap();
                total.merge(shard).unwrap();
            }
            assert_eq!(total.reports(), 200 * u64::from(protocol.shares()));
            assert_eq!(total.sum(), q.sum(inputs.iter().copied()));
        }
    }
}
