//! DPDS: decentralized sampling with n-party additive secret sharing over Z_q (Tjuawinata et
//! al., Algorithm 2; spec `06-frequency.md`, "DPDS").
//!
//! Roles (user u_i is also the helper that aggregates what it receives):
//! 1. [`Dpds::user_round1`]: b_i ~ Bernoulli(p) (exact); tau_i = b_i x_i (x_i one-hot in
//!    {0,1}^N; the zero vector if b_i = 0, which is still shared); s_(i,k) uniform in Z_q^N
//!    for k < n, s_(i,n) = tau_i - sum_(k<n) s_(i,k); s_(i,k) goes to u_k, s_(i,i) is kept.
//! 2. [`Dpds::helper_round2`]: u_k sends t_k = sum_i s_(i,k) to the server.
//! 3. [`Dpds::server_reconstruct`]: tau_hat = sum_k t_k mod q (q > n, so no wrap:
//!    tau_hat_j = sum_i b_i [v_i = j] exactly), psi_hat = tau_hat / (p n).
//!
//! Same output distribution as DPCS; honest-but-curious security against up to n - 1 users or
//! the server, not both.
//!
//! **Fast mode** ([`DpdsMode::Fast`]): the literal protocol materializes n^2 N shares. Its
//! output is a deterministic function of the b_i alone: sum_k t_k = sum_i sum_k s_(i,k) =
//! sum_i tau_i in Z_q for *every* choice of the uniform shares, and q > n makes the residue the
//! integer count. Drawing the b_i from the same stream in the same order therefore gives the
//! *identical* output, in O(n + N) work. The server's view (t_1, ..., t_n) is, in the literal
//! protocol, uniform on {t : sum_k t_k = tau_hat}: user 1's share vector is uniform on the
//! hyperplane sum_k s_(1,k) = tau_1 and independent of everything else, and adding an
//! independent vector to a uniform element of a coset of the hyperplane H = {sum = 0} keeps it
//! uniform on the shifted coset. [`DpdsMode::FastWithServerView`] samples it that way
//! (t_1..t_(n-1) uniform, t_n = tau_hat - sum), O(n N). Fast-mode costs are the literal
//! protocol's, charged by the closed forms ([`Dpds::closed_form_costs`]); the literal mode
//! counts them as it runs, and the tests check the two agree.

use rand_core::CryptoRng;

use super::{
    build_report, check_items, holders, scale, ConditionPolicy, Costs, FrequencyError,
    FrequencyEstimate, RoleCost, Sampling,
};
use crate::field::Modulus;
use crate::rng::{simulation_stream, SecureRng, SimulationRng};

/// The trust statement of DPDS.
pub const TRUST: &str = "no trusted party: honest-but-curious; private against up to n - 1 \
                         colluding users or the server, not both; needs authenticated, \
                         encrypted pairwise channels";

/// Most shares (n^2 N) the literal mode materializes (2^22 field elements, 32 MiB).
pub const LITERAL_MAX_SHARES: u128 = 1 << 22;

/// How [`Dpds::simulate`] runs the sharing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DpdsMode {
    /// Every share s_(i,k) is drawn, sent and summed (n^2 N <= [`LITERAL_MAX_SHARES`]).
    Literal,
    /// The output from the participation bits alone (identical to the literal output for the
    /// same seed); no server view.
    Fast,
    /// [`DpdsMode::Fast`] plus a server view (t_1..t_n) with the literal distribution.
    FastWithServerView,
}

/// One DPDS run: the estimate, and the helper sums t_k as the server received them (literal
/// mode, or sampled in [`DpdsMode::FastWithServerView`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DpdsRun {
    /// Estimate, report, costs.
    pub output: FrequencyEstimate,
    /// t_k for k = 1..n (the server's view), when materialized.
    pub helper_sums: Option<Vec<Vec<u64>>>,
}

/// DPDS for n users over items 0..N in Z_q.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dpds {
    users: u64,
    items: u32,
    sampling: Sampling,
    modulus: Modulus,
    policy: ConditionPolicy,
}

impl Dpds {
    /// Validates n >= 1, N >= 1, 2 <= q <= 2^64 and q > n (field large enough for n).
    pub fn new(
        users: u64,
        items: u32,
        sampling: Sampling,
        q: u128,
        policy: ConditionPolicy,
    ) -> Result<Self, FrequencyError> {
        if users == 0 {
            return Err(super::out_of_range("n", "an integer >= 1", users));
        }
        check_items(items)?;
        let modulus = Modulus::new(q)?;
        if q <= u128::from(users) {
            return Err(FrequencyError::FieldTooSmall { q, n: users });
        }
        Ok(Self {
            users,
            items,
            sampling,
            modulus,
            policy,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The per-role cost of one literal run, in blanket's convention (`docs/frequency.md`):
    /// per user: messages n sent, n - 1 received; elements n N sent ((n - 1) N shares + N to
    /// the server), (n - 1) N received, N kept; 1 + (n - 1) N random samples (one Bernoulli,
    /// (n - 1) N uniform elements); 2 (n - 1) N additions. Server: n messages, n N elements
    /// received, (n - 1) N additions, N multiplications.
    pub fn closed_form_costs(&self) -> Costs {
        literal_costs(self.users, u64::from(self.items), 1, 0)
    }

    fn participate<R: CryptoRng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        cost: &mut RoleCost,
    ) -> Result<Vec<u64>, FrequencyError> {
        super::check_item(0, item, self.items)?;
        let b = self.sampling.bernoulli().sample(rng);
        cost.random_samples += 1;
        let mut tau = vec![0u64; self.items as usize];
        tau[item as usize] = u64::from(b);
        Ok(tau)
    }

    fn share<R: CryptoRng + ?Sized>(
        &self,
        user: usize,
        tau: &[u64],
        rng: &mut R,
        cost: &mut RoleCost,
    ) -> Vec<Vec<u64>> {
        debug_assert!(user < self.users as usize);
        share_vector(self.modulus, self.users as usize, tau, rng, cost)
    }

    /// User role, round 1, with OS randomness: the share vectors s_(user,k) for k = 0..n
    /// (entry `user` is kept, the others are sent to user k).
    pub fn user_round1(
        &self,
        user: usize,
        item: u32,
        rng: &mut SecureRng,
        cost: &mut RoleCost,
    ) -> Result<Vec<Vec<u64>>, FrequencyError> {
        let tau = self.participate(item, rng, cost)?;
        Ok(self.share(user, &tau, rng, cost))
    }

    /// [`Dpds::user_round1`] with simulation randomness: participation from `participation`,
    /// shares from `shares` (separate streams so that literal and fast modes see the same b_i).
    pub fn user_round1_simulated(
        &self,
        user: usize,
        item: u32,
        participation: &mut SimulationRng,
        shares: &mut SimulationRng,
        cost: &mut RoleCost,
    ) -> Result<Vec<Vec<u64>>, FrequencyError> {
        let tau = self.participate(item, participation, cost)?;
        Ok(self.share(user, &tau, shares, cost))
    }

    /// Helper role (user k), round 2: t_k = sum of the n share vectors addressed to k (its own
    /// included), sent to the server.
    pub fn helper_round2(&self, received: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
        helper_sum(self.modulus, received, cost)
    }

    /// Server role: tau_hat = sum_k t_k mod q (the integer counts, since q > n).
    pub fn server_reconstruct(&self, sums: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
        server_sum(self.modulus, sums, cost)
    }

    /// The whole protocol on simulation randomness: participation bits from
    /// `simulation_stream(seed, 0)`, shares from `simulation_stream(seed, 1)`. `data` must
    /// have n entries.
    pub fn simulate(
        &self,
        data: &[u32],
        mode: DpdsMode,
        seed: u64,
    ) -> Result<DpdsRun, FrequencyError> {
        if data.len() as u64 != self.users {
            return Err(super::out_of_range(
                "n",
                "equal to the number of users the protocol was built for",
                data.len(),
            ));
        }
        let pi = holders(data, self.items)?;
        let report = build_report(
            "dpds",
            TRUST,
            &self.sampling,
            self.policy,
            &pi,
            Some(self.modulus.q()),
        )?;
        let mut part = simulation_stream(seed, 0);
        let mut share_rng = simulation_stream(seed, 1);
        let n = self.users as usize;
        let nn = self.items as usize;
        let (counts, helper_sums, mut costs) = match mode {
            DpdsMode::Literal => {
                let (counts, sums, costs) =
                    literal_run(self.modulus, self.items, data, |i, x, cost| {
                        self.user_round1_simulated(i, x, &mut part, &mut share_rng, cost)
                    })?;
                (counts, Some(sums), costs)
            }
            DpdsMode::Fast | DpdsMode::FastWithServerView => {
                let bernoulli = self.sampling.bernoulli();
                let mut counts = vec![0u64; nn];
                for &x in data {
                    counts[x as usize] += u64::from(bernoulli.sample(&mut part));
                }
                let sums = (mode == DpdsMode::FastWithServerView)
                    .then(|| sample_server_view(self.modulus, n, &counts, &mut share_rng));
                let mut costs = self.closed_form_costs();
                costs.server.multiplications = 0; // added by `scale` below
                (counts, sums, costs)
            }
        };
        let estimate = scale(&counts, self.sampling.p(), self.users, &mut costs.server);
        Ok(DpdsRun {
            output: FrequencyEstimate {
                sampled_counts: counts,
                estimate,
                report,
                costs,
            },
            helper_sums,
        })
    }
}

/// (t_1..t_n) uniform subject to sum_k t_k = totals (mod q): the literal server view of an
/// n-party additive sharing whose shares sum to `totals` (module docs).
pub(crate) fn sample_server_view<R: CryptoRng + ?Sized>(
    q: Modulus,
    n: usize,
    totals: &[u64],
    rng: &mut R,
) -> Vec<Vec<u64>> {
    let mut sums = vec![vec![0u64; totals.len()]; n];
    for (j, &c) in totals.iter().enumerate() {
        let mut acc = 0;
        for t in sums.iter_mut().take(n - 1) {
            t[j] = q.uniform(rng);
            acc = q.add(acc, t[j]);
        }
        sums[n - 1][j] = q.sub(c, acc);
    }
    sums
}

/// n additive shares of the vector `tau` over Z_q (per coordinate: n - 1 uniform, the last
/// tau_j minus their sum), counting (n - 1) N uniform samples and (n - 1) N additions, and the
/// sending of n - 1 vectors (one share vector kept).
pub(crate) fn share_vector<R: CryptoRng + ?Sized>(
    q: Modulus,
    n: usize,
    tau: &[u64],
    rng: &mut R,
    cost: &mut RoleCost,
) -> Vec<Vec<u64>> {
    let mut shares = vec![vec![0u64; tau.len()]; n];
    for (j, &t) in tau.iter().enumerate() {
        let mut partial: Option<u64> = None;
        for share in shares.iter_mut().take(n - 1) {
            let s = q.uniform(rng);
            cost.random_samples += 1;
            share[j] = s;
            partial = Some(match partial {
                None => s,
                Some(acc) => {
                    cost.additions += 1;
                    q.add(acc, s)
                }
            });
        }
        shares[n - 1][j] = match partial {
            None => t,
            Some(acc) => {
                cost.additions += 1;
                q.sub(t, acc)
            }
        };
    }
    let (others, nn) = (n as u64 - 1, tau.len() as u64);
    cost.messages_sent += others;
    cost.elements_sent += others * nn;
    cost.elements_kept += nn;
    shares
}

/// The per-role cost of one literal run of n-party additive sharing of N-vectors (DPDS,
/// DPDG; `docs/frequency.md`) when a user's encoding takes `encode_samples` random samples and
/// `encode_additions` additions: per user n messages sent, n - 1 received; n N elements sent
/// ((n - 1) N shares + N to the server), (n - 1) N received, N kept; the encoding's samples
/// plus (n - 1) N uniform elements; the encoding's additions plus 2 (n - 1) N (sharing and
/// helper sum). Server: n messages, n N elements received, (n - 1) N additions, N
/// multiplications (the scaling).
pub(crate) fn literal_costs(n: u64, nn: u64, encode_samples: u64, encode_additions: u64) -> Costs {
    Costs {
        per_user: RoleCost {
            messages_sent: n,
            messages_received: n - 1,
            elements_sent: n * nn,
            elements_received: (n - 1) * nn,
            elements_kept: nn,
            random_samples: encode_samples + (n - 1) * nn,
            additions: encode_additions + 2 * (n - 1) * nn,
            multiplications: 0,
        },
        server: RoleCost {
            messages_received: n,
            elements_received: n * nn,
            additions: (n - 1) * nn,
            multiplications: nn,
            ..RoleCost::default()
        },
    }
}

/// Helper role (user k): t_k = sum of the n share vectors addressed to k (its own included),
/// counting the n - 1 received and the one sent to the server.
pub(crate) fn helper_sum(q: Modulus, received: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
    let t = sum_vectors(q, received, cost);
    let (others, nn) = (received.len() as u64 - 1, t.len() as u64);
    cost.messages_received += others;
    cost.elements_received += others * nn;
    cost.messages_sent += 1;
    cost.elements_sent += nn;
    t
}

/// Server role: sum_k t_k mod q of the helpers' sums, counting what it receives.
pub(crate) fn server_sum(q: Modulus, sums: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
    let t = sum_vectors(q, sums, cost);
    cost.messages_received += sums.len() as u64;
    cost.elements_received += sums.len() as u64 * t.len() as u64;
    t
}

/// (the server's sum mod q, the helper sums, the costs) of [`literal_run`].
pub(crate) type LiteralRun = (Vec<u64>, Vec<Vec<u64>>, Costs);

/// The literal run of n-party additive sharing (DPDS, DPDG) over the users' `data`: user i's
/// share vectors from `round1(i, data[i], its cost)` (entry k goes to user k), every helper's
/// sum, the server's sum. Returns (the server's sum mod q, the helper sums, the costs), or
/// [`FrequencyError::LiteralTooLarge`] past [`LITERAL_MAX_SHARES`] shares (n^2 N).
pub(crate) fn literal_run<F>(
    q: Modulus,
    items: u32,
    data: &[u32],
    mut round1: F,
) -> Result<LiteralRun, FrequencyError>
where
    F: FnMut(usize, u32, &mut RoleCost) -> Result<Vec<Vec<u64>>, FrequencyError>,
{
    let n = data.len();
    let total = (n as u128).pow(2) * u128::from(items);
    if total > LITERAL_MAX_SHARES {
        return Err(FrequencyError::LiteralTooLarge {
            shares: total,
            max: LITERAL_MAX_SHARES,
        });
    }
    let mut user_costs = vec![RoleCost::default(); n];
    let mut inbox: Vec<Vec<Vec<u64>>> = vec![Vec::with_capacity(n); n];
    for (i, &x) in data.iter().enumerate() {
        let shares = round1(i, x, &mut user_costs[i]).map_err(|e| with_user(e, i))?;
        for (k, s) in shares.into_iter().enumerate() {
            inbox[k].push(s);
        }
    }
    let sums: Vec<Vec<u64>> = inbox
        .iter()
        .zip(user_costs.iter_mut())
        .map(|(received, c)| helper_sum(q, received, c))
        .collect();
    let mut server = RoleCost::default();
    let total = server_sum(q, &sums, &mut server);
    assert!(
        user_costs.iter().all(|c| *c == user_costs[0]),
        "every user does the same work"
    );
    let costs = Costs {
        per_user: user_costs[0],
        server,
    };
    Ok((total, sums, costs))
}

/// The coordinate-wise sum mod q of `vectors` (at least one), counting (len - 1) N additions.
pub(crate) fn sum_vectors(q: Modulus, vectors: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
    let mut acc = vectors[0].clone();
    for v in &vectors[1..] {
        for (a, &b) in acc.iter_mut().zip(v) {
            *a = q.add(*a, b);
        }
        cost.additions += acc.len() as u64;
    }
    acc
}

pub(crate) fn with_user(e: FrequencyError, user: usize) -> FrequencyError {
    match e {
        FrequencyError::ItemOutOfDomain { item, items, .. } => {
            FrequencyError::ItemOutOfDomain { user, item, items }
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{data_with, variances};
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};
    use rand_core::RngCore;

    fn random_data(rng: &mut SimulationRng, n: usize, items: u32) -> Vec<u32> {
        (0..n)
            .map(|_| (rng.next_u64() % u64::from(items)) as u32)
            .collect()
    }

    #[test]
    fn dpds_noise_off_both_modes_reconstruct_exact_counts() {
        let mut rng = simulation_rng(5);
        for trial in 0..30u64 {
            let n = 1 + (rng.next_u64() % 40) as usize;
            let items = 1 + (trial % 6) as u32;
            let data = random_data(&mut rng, n, items);
            let pi = holders(&data, items).unwrap();
            // Smallest admissible field, a prime, and 2^64.
            for q in [n as u128 + 1, 1_000_003, 1u128 << 64] {
                let s = Sampling::new(1.0, 1e-9).unwrap();
                let proto = Dpds::new(
                    n as u64,
                    items,
                    s,
                    q,
                    ConditionPolicy::ReleaseWithViolations,
                )
                .unwrap();
                for mode in [
                    DpdsMode::Literal,
                    DpdsMode::Fast,
                    DpdsMode::FastWithServerView,
                ] {
                    let run = proto.simulate(&data, mode, trial).unwrap();
                    assert_eq!(run.output.sampled_counts, pi, "n {n} q {q} {mode:?}");
                    if let Some(sums) = run.helper_sums {
                        let m = proto.modulus();
                        for (j, &c) in pi.iter().enumerate() {
                            assert_eq!(m.sum(sums.iter().map(|t| t[j])), c);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dpds_literal_and_fast_identical_for_the_same_seed() {
        let mut rng = simulation_rng(9);
        for seed in 0..40u64 {
            let data = random_data(&mut rng, 25, 4);
            let s = Sampling::new(0.37, 1e-9).unwrap();
            let proto = Dpds::new(25, 4, s, 101, ConditionPolicy::ReleaseWithViolations).unwrap();
            let lit = proto
                .simulate(&data, DpdsMode::Literal, seed)
                .unwrap()
                .output;
            let fast = proto.simulate(&data, DpdsMode::Fast, seed).unwrap().output;
            assert_eq!(lit, fast);
        }
    }

    /// The server's view (t_1, t_2) for n = 3, one item, q = 7: uniform on Z_7^2 (t_3 is then
    /// determined) in both modes. 9800 runs each, 49 cells (expected 200), chi-square against
    /// the critical value at about 1e-6 significance.
    #[test]
    fn dpds_server_view_same_distribution_in_both_modes() {
        let s = Sampling::new(0.5, 0.1).unwrap();
        let proto = Dpds::new(3, 1, s, 7, ConditionPolicy::Refuse).unwrap();
        let data = [0u32, 0, 0];
        for mode in [DpdsMode::Literal, DpdsMode::FastWithServerView] {
            let mut cells = vec![0u64; 49];
            let runs = 9800u64;
            for seed in 0..runs {
                let t = proto
                    .simulate(&data, mode, seed)
                    .unwrap()
                    .helper_sums
                    .unwrap();
                cells[(t[0][0] * 7 + t[1][0]) as usize] += 1;
            }
            let expected = vec![runs as f64 / 49.0; 49];
            let chi = chi_square(&cells, &expected);
            assert!(
                chi < chi_square_critical(48),
                "{mode:?}: chi-square {chi:.1}"
            );
        }
    }

    /// Var[psi_hat_j] = psi_j (1 - p) / (p n), fast mode, n = 1000, 4000 repetitions (sample
    /// variance relative standard error ~2.2%); tolerance 12%.
    #[test]
    fn dpds_observed_variance_matches_formula() {
        let pi = [400u64, 350, 200, 50];
        let data = data_with(&pi);
        let s = Sampling::from_epsilon(0.5, 0.04).unwrap();
        let proto = Dpds::new(1000, 4, s, 1 << 32, ConditionPolicy::Refuse).unwrap();
        let runs: Vec<Vec<f64>> = (0..4000)
            .map(|seed| {
                proto
                    .simulate(&data, DpdsMode::Fast, seed)
                    .unwrap()
                    .output
                    .estimate
            })
            .collect();
        let predicted = proto
            .simulate(&data, DpdsMode::Fast, 0)
            .unwrap()
            .output
            .report
            .predicted_variance;
        for (j, (o, pr)) in variances(&runs).iter().zip(&predicted).enumerate() {
            let ratio = o / pr;
            eprintln!("item {j}: observed {o:.4e} predicted {pr:.4e} ratio {ratio:.4}");
            assert!(
                (ratio - 1.0).abs() < 0.12,
                "item {j}: observed {o:.3e}, predicted {pr:.3e}, ratio {ratio:.3}"
            );
        }
    }

    #[test]
    fn dpds_cost_counters_equal_closed_forms_and_seed() {
        for (n, items) in [(1u64, 1u32), (2, 1), (3, 2), (5, 3), (8, 5)] {
            let data: Vec<u32> = (0..n).map(|i| (i % u64::from(items)) as u32).collect();
            let s = Sampling::new(0.5, 1e-9).unwrap();
            let proto =
                Dpds::new(n, items, s, 1 << 20, ConditionPolicy::ReleaseWithViolations).unwrap();
            let lit = proto
                .simulate(&data, DpdsMode::Literal, n)
                .unwrap()
                .output
                .costs;
            let fast = proto
                .simulate(&data, DpdsMode::Fast, n)
                .unwrap()
                .output
                .costs;
            assert_eq!(lit, proto.closed_form_costs(), "n {n} N {items}");
            assert_eq!(fast, lit);
            let (nn, u) = (u64::from(items), lit.per_user);
            // The seed's per-user formulas (Tjuawinata et al., Sec. on DPDS costs).
            assert_eq!(
                u.elements_sent + u.elements_received + 2 * u.elements_kept,
                2 * n * nn + nn,
                "2 n N + N counts the kept share as sent and received"
            );
            assert_eq!(u.random_samples, 1 + (n - 1) * nn);
            assert_eq!(u.additions, 2 * (n - 1) * nn);
            assert_eq!(lit.server.additions, (n - 1) * nn);
            assert_eq!(lit.server.multiplications, nn);
        }
    }

    #[test]
    fn dpds_rejects_bad_parameters_and_data() {
        let s = Sampling::new(0.5, 0.1).unwrap();
        assert_eq!(
            Dpds::new(10, 2, s, 10, ConditionPolicy::Refuse).unwrap_err(),
            FrequencyError::FieldTooSmall { q: 10, n: 10 }
        );
        assert!(Dpds::new(10, 2, s, 11, ConditionPolicy::Refuse).is_ok());
        assert!(matches!(
            Dpds::new(10, 2, s, 1, ConditionPolicy::Refuse).unwrap_err(),
            FrequencyError::Field(_)
        ));
        let proto = Dpds::new(10, 2, s, 11, ConditionPolicy::Refuse).unwrap();
        let e = proto
            .simulate(&data_with(&[10, 0]), DpdsMode::Literal, 0)
            .unwrap_err();
        assert!(matches!(
            e,
            FrequencyError::ConditionViolated { count: 1, .. }
        ));
        let mut bad = data_with(&[5, 5]);
        bad[7] = 2;
        assert_eq!(
            proto.simulate(&bad, DpdsMode::Fast, 0).unwrap_err(),
            FrequencyError::ItemOutOfDomain {
                user: 7,
                item: 2,
                items: 2
            }
        );
        let big = Dpds::new(3000, 1, s, 1 << 20, ConditionPolicy::Refuse).unwrap();
        assert!(matches!(
            big.simulate(&vec![0; 3000], DpdsMode::Literal, 0)
                .unwrap_err(),
            FrequencyError::LiteralTooLarge { .. }
        ));
        let released = Dpds::new(10, 2, s, 11, ConditionPolicy::ReleaseWithViolations)
            .unwrap()
            .simulate(&data_with(&[10, 0]), DpdsMode::Fast, 0)
            .unwrap();
        assert!(released
            .output
            .report
            .notes
            .iter()
            .any(|n| n.starts_with("VIOLATION")));
    }
}
