//! Protocol parameters from the security targets (derivations in
//! `docs/protocol.md`, "Parameters"; spec `05-secure-shuffle.md`, blocks 2-3
//! and "The amortized shuffler" step 3).
//!
//! Adversary: `max_malicious = M` fully malicious clients, `M = floor(gamma n)`
//! but at least 1 when `gamma > 0` ([`malicious_bound`]: for `n < 1/gamma`
//! the floor is 0, which would allow a committee of one client holding the
//! whole key and a chain of one shuffler), and
//! `max_dropouts = floor(alpha n)` honest clients that drop out, both fixed
//! before the public randomness is drawn (static corruption; a dropout set
//! chosen after seeing the roles could silence every committee). The roles
//! come from a uniform permutation of the client ids ([`crate::select`]):
//! first the shuffler list (chain and backups), then the key committee.
//!
//! - Chain length `k`: the smallest `k` with
//!   `prod_{i<k} (M - i) / (n - D - i) <= 2^-(sigma+1)`: the probability that
//!   the first `k` non-dropped entries of the list are all malicious; if
//!   one of them is honest its shuffle is accepted (derived; with
//!   `gamma^k <= 2^-sigma` as the spec's approximation,
//!   `k = ceil(sigma / log2(1/gamma))`).
//! - Backups `b`: the smallest `b` with
//!   `P[HG(n, M + D, k + b) >= b + 1] <= 2^-(eta+1)`: fewer than `k` honest,
//!   present shufflers among the `k + b` listed (output delivery).
//! - Committee `c` and threshold `t`: the smallest `c` for which some `t`
//!   satisfies both `P[HG(n - k - b, M, c) >= t] <= 2^-(sigma+1)` (at most
//!   `t - 1` malicious members: privacy of the key) and
//!   `P[HG(n - k - b, M + D, c) >= c - t + 1] <= 2^-(eta+1)` (at least `t`
//!   honest members stay: the DKG and the decryption complete); `t` the
//!   smallest such (decryption asks `t` members).
//!
//! Hence privacy fails with probability at most `2^-sigma` and delivery
//! with at most `2^-eta` (union bounds). The tails are computed in `f64`
//! from log-factorials (Stirling series, relative error below 1e-12) and
//! compared with a relative margin of 1e-6 on the safe side.

use blanket::shuffle::alternating::GridLayout;
pub use blanket_crypto::shuffle::ProofSystem;

/// Why parameters were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamsError {
    /// A parameter outside its allowed range.
    #[error("{field} = {} is out of range (allowed {allowed})", blanket::display::echo(*value))]
    OutOfRange {
        field: &'static str,
        value: f64,
        allowed: &'static str,
    },
    /// No committee or chain meets the targets with this many clients.
    #[error("no {what} meets sigma = {sigma}, eta = {eta} with n = {n}, {malicious} malicious and {dropouts} dropouts")]
    Infeasible {
        what: &'static str,
        n: u32,
        sigma: u32,
        eta: u32,
        malicious: u32,
        dropouts: u32,
    },
}

/// Shuffle layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One chain of `k` shufflers over the whole list (spec 05, "The
    /// amortized shuffler").
    Amortized,
    /// The 2-round alternating shuffle: the list in an h x w grid by a public
    /// placement, a chain per row (rows in parallel), then a chain per
    /// column (spec 05, "The 2-round alternating shuffle protocol").
    Alternating,
}

/// Who holds the decryption keys of an alternating run (`--key-committees`,
/// the task spec's `key_committees`; `docs/protocol.md`, "Per-lane key
/// committees and threshold re-encryption").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyCommittees {
    /// One committee per row and per column, threshold re-encryption from
    /// rows to columns ([`ProtocolParams::with_lane_keys`]); alternating
    /// variant only. The default of the alternating variant.
    PerLane,
    /// One key committee for the whole run (the amortized variant's only
    /// choice; in the alternating variant every key holder handles all N
    /// ciphertexts).
    Single,
}

impl KeyCommittees {
    /// The allowed values, as the command line and the task spec spell them.
    pub const ALLOWED: &'static str = "per-lane or single";

    /// The name on the command line and in JSON: `per-lane` or `single`.
    pub fn name(self) -> &'static str {
        match self {
            KeyCommittees::PerLane => "per-lane",
            KeyCommittees::Single => "single",
        }
    }

    /// Parse `per-lane` or `single` (`None` otherwise).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "per-lane" => Some(KeyCommittees::PerLane),
            "single" => Some(KeyCommittees::Single),
            _ => None,
        }
    }

    /// The default of a variant: per-lane for the alternating variant,
    /// single for the amortized one.
    pub fn default_for(variant: Variant) -> Self {
        match variant {
            Variant::Alternating => KeyCommittees::PerLane,
            Variant::Amortized => KeyCommittees::Single,
        }
    }

    /// Which the parameters use.
    pub fn of(params: &ProtocolParams) -> Self {
        if params.lane_committees.is_some() {
            KeyCommittees::PerLane
        } else {
            KeyCommittees::Single
        }
    }
}

/// The parameters of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtocolParams {
    /// Shuffle layout.
    pub variant: Variant,
    /// Number of public shuffler lists: 1 (amortized) or
    /// `W = ceil(sqrt(n m))` (alternating: list `j` serves row `j` and then
    /// column `j`).
    pub lanes: u32,
    /// Number of clients n.
    pub clients: u32,
    /// Messages each client submits (1 for a histogram; more for vector
    /// sums and IKOS shares).
    pub messages_per_client: u32,
    /// Statistical security of privacy: failure at most 2^-sigma.
    pub sigma: u32,
    /// Output delivery fails with probability at most 2^-eta.
    pub eta: u32,
    /// D = floor(alpha n).
    pub max_dropouts: u32,
    /// M = floor(gamma n), at least 1 when gamma > 0 ([`malicious_bound`]).
    pub max_malicious: u32,
    /// Key committee size c.
    pub committee: u32,
    /// Decryption threshold t.
    pub threshold: u32,
    /// Chain length k (per lane).
    pub chain: u32,
    /// Backup shufflers b (per list).
    pub backups: u32,
    /// The proof of shuffle every shuffler gives and the relay checks
    /// (`--proof tw|bg`): fixed for the run and bound into every shuffle
    /// proof's context ([`crate::context::shuffle`]), so a proof of one
    /// system is never accepted as the other. [`ProtocolParams::new`] and
    /// [`ProtocolParams::for_variant`] choose Terelius-Wikstrom; see
    /// [`ProtocolParams::with_proof`].
    pub proof: ProofSystem,
    /// Per-lane key committees (`docs/protocol.md`, "Per-lane key
    /// committees and threshold re-encryption"): `Some((K_r, K_c))` row and
    /// column committees, each of `committee` members with threshold
    /// `threshold` (the lane rule of [`crate::lane_keys::LaneCommittees`]);
    /// `None` (the default) for the single key committee. Set only by
    /// [`ProtocolParams::with_lane_keys`] (alternating variant only).
    pub lane_committees: Option<(u32, u32)>,
}

/// `ln(k!)`: exact sum below 32, Stirling series above.
fn ln_fact(k: u64) -> f64 {
    if k < 32 {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let x = k as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

fn ln_choose(n: u64, k: u64) -> f64 {
    ln_fact(n) - ln_fact(k) - ln_fact(n - k)
}

/// The number of malicious clients the parameters tolerate: `floor(gamma n)`,
/// but at least 1 when `gamma > 0` (issue 25, item 3). An operator who allows
/// a malicious fraction allows at least one malicious client; with the bare
/// floor, `n < 1/gamma` would give `M = 0` and the smallest committee (one
/// member, threshold 1) and chain (one shuffler), so that a single client
/// would hold the whole decryption key and be the only shuffler. With
/// `M >= 1` the chain has at least 2 shufflers and the threshold is at least
/// 2 (one malicious client is never a threshold nor a whole chain).
pub fn malicious_bound(n: u32, gamma: f64) -> u32 {
    let m = (gamma * n as f64).floor() as u32;
    if gamma > 0.0 {
        m.max(1)
    } else {
        m
    }
}

/// `P[X >= x]` for X hypergeometric: `draws` from a population of `pop`
/// with `bad` marked.
pub fn hypergeometric_tail(pop: u64, bad: u64, draws: u64, x: u64) -> f64 {
    let bad = bad.min(pop);
    if draws > pop {
        return if x == 0 { 1.0 } else { 0.0 };
    }
    let hi = bad.min(draws);
    let base = ln_choose(pop, draws);
    (x..=hi)
        .filter(|&i| draws - i <= pop - bad)
        .map(|i| (ln_choose(bad, i) + ln_choose(pop - bad, draws - i) - base).exp())
        .sum()
}

/// The smallest committee size `c <= max_c` drawn from `pop` clients (`m`
/// malicious, `d` dropouts) for which some `t` gives
/// `P[HG(pop, m, c) >= t] <= 2^-(sigma+1) / share` and
/// `P[HG(pop, m + d, c) >= c - t + 1] <= 2^-(eta+1) / share`, with the
/// smallest such `t` (`share` = the number of committees in the union
/// bound: 1 for the single key committee, K for the lane committees of
/// [`crate::lane_keys`]).
pub(crate) fn committee_for(
    pop: u64,
    m: u64,
    d: u64,
    max_c: u64,
    sigma: u32,
    eta: u32,
    share: u64,
) -> Option<(u64, u64)> {
    for c in 1..=max_c {
        let Some(t) = (1..=c).find(|&t| below(hypergeometric_tail(pop, m, c, t), sigma, share))
        else {
            continue;
        };
        if below(hypergeometric_tail(pop, m + d, c, c - t + 1), eta, share) {
            return Some((c, t));
        }
    }
    None
}

/// `p <= 2^-(bits+1) / share`, with a relative margin on the safe side.
fn below(p: f64, bits: u32, share: u64) -> bool {
    p <= (-(bits as f64 + 1.0)).exp2() / share as f64 * (1.0 - 1e-6)
}

impl ProtocolParams {
    /// Parameters for `n` clients, dropout bound `alpha`, malicious bound
    /// `gamma`, privacy `sigma`, delivery `eta` and `messages` per client.
    pub fn new(
        n: u32,
        alpha: f64,
        gamma: f64,
        sigma: u32,
        eta: u32,
        messages: u32,
    ) -> Result<Self, ParamsError> {
        Self::for_variant(Variant::Amortized, n, alpha, gamma, sigma, eta, messages)
    }

    /// Parameters for either layout. The alternating layout has up to
    /// `2W` lanes (h <= W rows, w = W columns): each lane's chain must hold an
    /// honest shuffler except with probability `2^-(sigma+1) / (2W)`, and
    /// each of the `W` lists must hold `k` honest, present shufflers except
    /// with probability `2^-(eta+1) / W` (union bounds over the lanes).
    pub fn for_variant(
        variant: Variant,
        n: u32,
        alpha: f64,
        gamma: f64,
        sigma: u32,
        eta: u32,
        messages: u32,
    ) -> Result<Self, ParamsError> {
        let range = |field, value: f64, ok: bool, allowed| {
            if ok {
                Ok(())
            } else {
                Err(ParamsError::OutOfRange {
                    field,
                    value,
                    allowed,
                })
            }
        };
        range("clients", n as f64, n >= 3, ">= 3")?;
        range("alpha", alpha, (0.0..0.5).contains(&alpha), "[0, 0.5)")?;
        range("gamma", gamma, (0.0..0.5).contains(&gamma), "[0, 0.5)")?;
        range("sigma", sigma as f64, (1..=128).contains(&sigma), "1..=128")?;
        range("eta", eta as f64, (1..=64).contains(&eta), "1..=64")?;
        range(
            "messages",
            messages as f64,
            messages >= 1 && messages as usize <= crate::wire::MAX_MESSAGES_PER_CLIENT,
            "1..=1024",
        )?;
        let d = (alpha * n as f64).floor() as u64;
        let m = u64::from(malicious_bound(n, gamma));
        let nn = n as u64;
        let infeasible = |what| ParamsError::Infeasible {
            what,
            n,
            sigma,
            eta,
            malicious: m as u32,
            dropouts: d as u32,
        };
        // The widest grid: all n m messages (dropouts only shrink it).
        let lanes = match variant {
            Variant::Amortized => 1u64,
            Variant::Alternating => GridLayout::new(n as usize * messages as usize).width() as u64,
        };
        let chain_share = if lanes == 1 { 1 } else { 2 * lanes };
        // Chain length.
        let mut k = 0u64;
        let mut p_all = 1.0f64;
        while !below(p_all, sigma, chain_share) {
            if k >= nn - d || k > m {
                break;
            }
            p_all *= (m - k) as f64 / (nn - d - k) as f64;
            k += 1;
        }
        if !below(p_all, sigma, chain_share) {
            return Err(infeasible("shuffler chain"));
        }
        let k = k.max(1);
        // Backups.
        let mut b = 0u64;
        loop {
            if lanes * (k + b) > nn {
                return Err(infeasible("shuffler list"));
            }
            if below(hypergeometric_tail(nn, m + d, k + b, b + 1), eta, lanes) {
                break;
            }
            b += 1;
        }
        // Committee and threshold, from the clients not on the list.
        let pop = nn - lanes * (k + b);
        let max_c = pop.min(crate::wire::MAX_COMMITTEE as u64);
        let (c, t) =
            committee_for(pop, m, d, max_c, sigma, eta, 1).ok_or(infeasible("key committee"))?;
        Ok(ProtocolParams {
            variant,
            lanes: lanes as u32,
            clients: n,
            messages_per_client: messages,
            sigma,
            eta,
            max_dropouts: d as u32,
            max_malicious: m as u32,
            committee: c as u32,
            threshold: t as u32,
            chain: k as u32,
            backups: b as u32,
            proof: ProofSystem::TereliusWikstrom,
            lane_committees: None,
        })
    }

    /// The same run with per-lane key committees: `K_r` row and `K_c`
    /// column committees of `c` members with threshold `t`, from
    /// [`crate::lane_keys::LaneCommittees::for_params`] (which replaces the
    /// single committee's `c` and `t`). Refused for the amortized variant
    /// and when the lane rule has no solution (`ParamsError::Infeasible`).
    pub fn with_lane_keys(self) -> Result<Self, ParamsError> {
        if self.variant != Variant::Alternating {
            return Err(ParamsError::OutOfRange {
                field: "lane_keys",
                value: 1.0,
                allowed: "only with the alternating variant",
            });
        }
        let lc = crate::lane_keys::LaneCommittees::for_params(&ProtocolParams {
            lane_committees: None,
            ..self
        })?;
        Ok(ProtocolParams {
            committee: lc.committee,
            threshold: lc.threshold,
            lane_committees: Some((lc.row_committees, lc.column_committees)),
            ..self
        })
    }

    /// The same run with the key committees `kc`: [`KeyCommittees::Single`]
    /// leaves the parameters as they are (a single committee);
    /// [`KeyCommittees::PerLane`] is [`ProtocolParams::with_lane_keys`]
    /// (refused for the amortized variant and when infeasible).
    pub fn with_key_committees(self, kc: KeyCommittees) -> Result<Self, ParamsError> {
        match kc {
            KeyCommittees::Single => Ok(self),
            KeyCommittees::PerLane => self.with_lane_keys(),
        }
    }

    /// The same parameters with proof system `proof` (the other parameters
    /// do not depend on it).
    pub fn with_proof(self, proof: ProofSystem) -> Self {
        ProtocolParams { proof, ..self }
    }

    /// Length of one public shuffler list.
    pub fn shuffler_list(&self) -> u32 {
        self.chain + self.backups
    }

    /// Clients on all the shuffler lists.
    pub fn shufflers_total(&self) -> u32 {
        self.lanes * self.shuffler_list()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypergeometric_tail_exact_small_case() {
        // 10 items, 3 bad, draw 4: P[X >= 2] = (C(3,2)C(7,2) + C(3,3)C(7,1)) / C(10,4)
        // = (63 + 7) / 210 = 1/3.
        let p = hypergeometric_tail(10, 3, 4, 2);
        assert!((p - 1.0 / 3.0).abs() < 1e-12, "{p}");
        assert!((hypergeometric_tail(10, 3, 4, 0) - 1.0).abs() < 1e-12);
        assert_eq!(hypergeometric_tail(10, 3, 4, 4), 0.0);
        // Stirling branch against the exact sum.
        let exact: f64 = (2..=40u64).map(|i| (i as f64).ln()).sum();
        assert!((ln_fact(40) - exact).abs() < 1e-10);
    }

    #[test]
    fn paper_example_parameters() {
        // n = 10,000, 5% dropouts, 5% malicious, sigma = 40, eta = 10.
        let p = ProtocolParams::new(10_000, 0.05, 0.05, 40, 10, 1).unwrap();
        assert_eq!(p.max_dropouts, 500);
        assert_eq!(p.max_malicious, 500);
        // (500/9500)^9 > 2^-41 >= (500/9500)^10 approximately: k = 10 as in the spec.
        assert_eq!(p.chain, 10);
        assert_eq!((p.committee, p.threshold, p.backups), (22, 14, 7), "{p:?}");
        assert!(p.threshold < p.committee);
        // The committee meets both tails.
        let pop = 10_000 - p.chain as u64 - p.backups as u64;
        let c = p.committee as u64;
        let t = p.threshold as u64;
        assert!(hypergeometric_tail(pop, 500, c, t) <= 2f64.powi(-41));
        assert!(hypergeometric_tail(pop, 1000, c, c - t + 1) <= 2f64.powi(-11));
        // and is the smallest that does.
        let smaller = (1..c).any(|c2| {
            (1..=c2).any(|t2| {
                hypergeometric_tail(pop, 500, c2, t2) <= 2f64.powi(-41)
                    && hypergeometric_tail(pop, 1000, c2, c2 - t2 + 1) <= 2f64.powi(-11)
            })
        });
        assert!(!smaller);
    }

    #[test]
    fn alternating_parameters_at_the_paper_example() {
        let p = ProtocolParams::for_variant(Variant::Alternating, 10_000, 0.05, 0.05, 40, 10, 1)
            .unwrap();
        assert_eq!(p.lanes, 100);
        // The union bound over 200 lanes costs log2(200) / log2(19), about 1.8 shufflers.
        assert!(p.chain == 11 || p.chain == 12, "{p:?}");
        assert!(p.shufflers_total() + p.committee <= 10_000);
    }

    #[test]
    fn no_adversary_means_short_chain_and_tiny_committee() {
        let p = ProtocolParams::new(100, 0.0, 0.0, 40, 10, 1).unwrap();
        assert_eq!((p.chain, p.backups, p.committee, p.threshold), (1, 0, 1, 1));
    }

    /// Issue 25, item 3: for n < 1/gamma the bare floor(gamma n) is 0 and
    /// allowed a committee of 1 (threshold 1) and a chain of 1: one client
    /// held the whole key and was the only shuffler. With at least one
    /// malicious client, no single client holds the key or the chain (or the
    /// parameters are refused, naming what is infeasible).
    #[test]
    fn below_one_over_gamma_no_single_client_holds_the_key() {
        for n in 12..=19u32 {
            assert_eq!(malicious_bound(n, 0.05), 1, "n = {n}");
            match ProtocolParams::new(n, 0.05, 0.05, 40, 10, 1) {
                Ok(p) => {
                    assert_eq!(p.max_malicious, 1, "n = {n}");
                    assert!(p.threshold >= 2, "n = {n}: {p:?}");
                    assert!(p.committee > p.threshold, "n = {n}: {p:?}");
                    assert!(p.chain >= 2, "n = {n}: {p:?}");
                }
                Err(e) => assert!(matches!(e, ParamsError::Infeasible { .. }), "n = {n}: {e}"),
            }
            let p = ProtocolParams::for_variant(Variant::Alternating, n, 0.05, 0.05, 40, 10, 1);
            if let Ok(p) = p {
                assert!(
                    p.threshold >= 2 && p.chain >= 2,
                    "alternating n = {n}: {p:?}"
                );
            }
        }
        // No malicious fraction: no malicious client.
        assert_eq!(malicious_bound(12, 0.0), 0);
        // Above 1/gamma the floor is kept.
        assert_eq!(malicious_bound(200, 0.05), 10);
        assert_eq!(malicious_bound(39, 0.05), 1);
    }

    #[test]
    fn bad_inputs_name_the_field() {
        let e = ProtocolParams::new(100, 0.7, 0.0, 40, 10, 1).unwrap_err();
        assert!(e.to_string().contains("alpha"), "{e}");
        let e = ProtocolParams::new(100, 0.0, 0.0, 0, 10, 1).unwrap_err();
        assert!(e.to_string().contains("sigma"), "{e}");
        // 10 clients cannot hold a 2^-40 committee against 20% malicious.
        assert!(matches!(
            ProtocolParams::new(10, 0.1, 0.2, 40, 10, 1),
            Err(ParamsError::Infeasible { .. })
        ));
    }
}
