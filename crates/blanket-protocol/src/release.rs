//! A DP protocol's calibration for the clients' own shuffle, shared by `blanket protocol run`
//! (in memory) and the relay (`blanket serve --role relay`): the guarantee covers the honest,
//! present users only, n' = n - floor(alpha n) - floor(gamma n) (`docs/protocol.md`, "What
//! the guarantee covers"); the alternating variant is certified with the bad-cells accountant
//! (`docs/alternating.md`, "Bad cells").

use crate::params::Variant;
use crate::ProtocolParams;
use blanket::accounting::{AlternatingBadCells, BadCells, Best, LocalRandomizer};
use blanket::calibrate::{Calibration, Target};
use blanket::params::{Delta, DomainSize, Epsilon, NumUsers};
use blanket::protocol::histogram::Histogram;

/// Why a protocol could not be calibrated or certified.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// A parameter of the protocol is out of range.
    #[error("{field} = {value} is out of range (allowed: {allowed})")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
        /// The allowed range.
        allowed: &'static str,
    },
    /// The accountant certifies no guarantee at these parameters.
    #[error("no certified guarantee: {0}")]
    Uncertified(String),
}

fn uncertified(e: impl std::fmt::Display) -> ReleaseError {
    ReleaseError::Uncertified(e.to_string())
}

/// The honest, present users n' = n - floor(alpha n) - M the guarantee covers (M =
/// `params.max_malicious`: floor(gamma n), at least 1 when gamma > 0).
pub fn blanket_users(params: &ProtocolParams) -> u64 {
    u64::from(params.clients)
        .saturating_sub(u64::from(params.max_dropouts))
        .saturating_sub(u64::from(params.max_malicious))
}

/// The calibration target: (eps, delta) for the n' honest, present users.
pub fn target(params: &ProtocolParams, eps: f64, delta: f64) -> Result<Target, ReleaseError> {
    Ok(Target {
        eps: Epsilon::new(eps).map_err(|_| ReleaseError::OutOfRange {
            field: "eps",
            value: eps.to_string(),
            allowed: "finite, > 0",
        })?,
        delta: Delta::new(delta).map_err(|_| ReleaseError::OutOfRange {
            field: "delta",
            value: delta.to_string(),
            allowed: "(0, 1)",
        })?,
        n: NumUsers::new(blanket_users(params)).map_err(|_| ReleaseError::OutOfRange {
            field: "clients",
            value: blanket_users(params).to_string(),
            allowed: "n - floor(alpha n) - floor(gamma n) >= 1",
        })?,
    })
}

/// The accountant of the alternating variant: A^2_pi with the run's bad cells (at most
/// floor(gamma n) malicious, n - floor(alpha n) - floor(gamma n) to n cells), worst placement;
/// with per-lane key committees, up to floor(alpha n) + floor(gamma n) bad cells (malicious
/// messages and public dummies) among n.
pub fn alternating_accountant(
    params: &ProtocolParams,
) -> Result<AlternatingBadCells<Best>, ReleaseError> {
    let (n, d, g) = (
        u64::from(params.clients),
        u64::from(params.max_dropouts),
        u64::from(params.max_malicious),
    );
    let scenario = if params.lane_committees.is_some() {
        // Per-lane key committees: the grid always has all n cells; the
        // cells of absent or refused clients hold public dummies, whose
        // values the adversary knows, so they count as bad cells: at least
        // n - D - G honest cells, at most D + G bad (`docs/protocol.md`,
        // "Per-lane key committees and threshold re-encryption", step 2).
        BadCells::new(n.saturating_sub(d).saturating_sub(g), n, d + g)
    } else {
        BadCells::for_protocol(n, d, g)
    }
    .map_err(uncertified)?;
    Ok(AlternatingBadCells::new(scenario, Best::default()))
}

/// How the alternating guarantee was certified (`docs/alternating.md`, "Bad cells"): the
/// worst case over the grids the run can produce.
#[derive(Debug, Clone, PartialEq)]
pub struct AlternatingBound {
    /// The bound that certified the binding class.
    pub bound: &'static str,
    /// Accepted messages in the grid: at least `honest_cells_min`, at most `cells_max`, at
    /// most `bad_cells_max` malicious.
    pub honest_cells_min: u64,
    /// See `honest_cells_min`.
    pub cells_max: u64,
    /// See `honest_cells_min`.
    pub bad_cells_max: u64,
    /// Worst case: good cells in the target's row (target included).
    pub worst_row_good_cells: u64,
    /// Worst case: other full rows.
    pub worst_other_full_rows: u64,
    /// Largest mean number of bad cells per column.
    pub bad_per_column_mean_max: f64,
}

/// The placement the alternating guarantee assumes.
pub const ALTERNATING_PLACEMENT: &str =
    "worst case: the bad cells anywhere in the grid, chosen after the public placement pi";

/// How the alternating guarantee was certified, for GRR over m values at gamma.
pub fn alternating_bound(
    acct: &AlternatingBadCells<Best>,
    m: u32,
    gamma: f64,
    eps: f64,
) -> Result<AlternatingBound, ReleaseError> {
    let scenario = acct.scenario();
    let curve = acct
        .curve_for(&LocalRandomizer::Grr { m, gamma })
        .map_err(uncertified)?;
    let (classes, mu) = scenario.worst_classes();
    let (_, b) = curve.delta_with_bound(eps);
    Ok(AlternatingBound {
        bound: b.name(),
        honest_cells_min: scenario.honest_min(),
        cells_max: scenario.cells_max(),
        bad_cells_max: scenario.bad_max(),
        worst_row_good_cells: classes.iter().map(|c| c.row_good).min().unwrap_or(0),
        worst_other_full_rows: classes.iter().map(|c| c.h_other).min().unwrap_or(0),
        bad_per_column_mean_max: mu,
    })
}

/// A histogram calibrated for the honest, present users of a run.
pub struct HistogramRelease {
    /// The protocol (GRR randomizer and analyzer).
    pub h: Histogram,
    /// Its calibration (`certified` is the guarantee for n' users).
    pub cal: Calibration<()>,
    /// Alternating variant only: how the guarantee was certified with bad cells.
    pub bound: Option<AlternatingBound>,
}

impl HistogramRelease {
    /// The certification method's name (`alternating-bad-cells (..)` for the alternating
    /// variant).
    pub fn method(&self) -> String {
        match (&self.bound, &self.cal.certified) {
            (Some(b), _) => format!("alternating-bad-cells ({})", b.bound),
            (None, Some(g)) => g.method.name().to_string(),
            (None, None) => "uncertified".into(),
        }
    }
}

/// Calibrates the histogram over `domain` categories for (eps, delta) at the n' honest,
/// present users of `params`: the amortized variant with the best single-shuffle accountant,
/// the alternating variant with the bad-cells accountant. Refuses (naming the field) when
/// the accountant certifies nothing.
pub fn calibrate_histogram(
    params: &ProtocolParams,
    domain: u64,
    eps: f64,
    delta: f64,
) -> Result<HistogramRelease, ReleaseError> {
    let t = target(params, eps, delta)?;
    let m = DomainSize::new(domain).map_err(|_| ReleaseError::OutOfRange {
        field: "domain",
        value: domain.to_string(),
        allowed: "2..=2^32-1",
    })?;
    let (h, cal, bound) = match params.variant {
        Variant::Amortized => {
            let (h, cal) = Histogram::calibrate(m, &t, &Best::default()).map_err(uncertified)?;
            (h, cal, None)
        }
        Variant::Alternating => {
            let acct = alternating_accountant(params)?;
            let (h, cal) = Histogram::calibrate(m, &t, &acct).map_err(|e| {
                ReleaseError::Uncertified(format!(
                    "{e}; over the alternating shuffler with up to {} bad cells (malicious{}) among {} clients, {} dropped out (worst placement of the bad cells; docs/alternating.md, \"Bad cells\")",
                    acct.scenario().bad_max(),
                    if params.lane_committees.is_some() { " and dummies" } else { "" },
                    params.clients,
                    params.max_dropouts
                ))
            })?;
            let e = cal.certified.as_ref().map_or(eps, |g| g.epsilon);
            let bound = alternating_bound(&acct, m.get(), cal.gamma.get(), e)?;
            (h, cal, Some(bound))
        }
    };
    if cal.certified.is_none() {
        return Err(ReleaseError::Uncertified(
            "the accountant certifies no guarantee for this randomizer at these parameters".into(),
        ));
    }
    Ok(HistogramRelease { h, cal, bound })
}

/// The trust assumption of the shuffler (spec 05, "Setting"; `docs/protocol.md`).
pub const TRUST: &str = "semi-honest relay; at most floor(gamma n) malicious and floor(alpha n) dropped-out clients, fixed before the public randomness; privacy of the shuffle fails with probability at most 2^-sigma, delivery with at most 2^-eta";

/// The alternating variant's trust assumption: the shuffler's, and the placement of the bad
/// cells taken at its worst (`docs/alternating.md`, "Bad cells").
pub const TRUST_ALTERNATING: &str = "semi-honest relay; at most floor(gamma n) malicious and floor(alpha n) dropped-out clients; the grid holds the accepted messages (n - floor(alpha n) - floor(gamma n) to n of them, at most floor(gamma n) malicious) and the malicious cells may be placed anywhere, after the public placement pi (the guarantee is the worst case over placements); privacy of the shuffle fails with probability at most 2^-sigma (every lane's chain holds an honest shuffler otherwise), delivery with at most 2^-eta";

/// The alternating variant's trust assumption with per-lane key committees.
pub const TRUST_ALTERNATING_LANE_KEYS: &str = "semi-honest relay; at most floor(gamma n) malicious and floor(alpha n) dropped-out clients; per-lane key committees (each with fewer than t malicious members except with probability inside 2^-sigma); the grid holds all n cells, of which at most floor(alpha n) + floor(gamma n) are bad (malicious messages, and public dummies in the cells of absent or refused clients) and the bad cells may be placed anywhere, after the public placement pi (the guarantee is the worst case over placements); privacy of the shuffle fails with probability at most 2^-sigma, delivery with at most 2^-eta";

/// The trust assumption of a run with `params`.
pub fn trust(params: &ProtocolParams) -> &'static str {
    match (params.variant, params.lane_committees) {
        (Variant::Amortized, _) => TRUST,
        (Variant::Alternating, None) => TRUST_ALTERNATING,
        (Variant::Alternating, Some(_)) => TRUST_ALTERNATING_LANE_KEYS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_certified_for_the_honest_present_users_within_target() {
        let p = ProtocolParams::new(30, 0.05, 0.05, 40, 10, 1).unwrap();
        assert_eq!(blanket_users(&p), 28);
        let r = calibrate_histogram(&p, 4, 2.0, 1e-3).unwrap();
        let g = r.cal.certified.as_ref().unwrap();
        assert!(g.epsilon <= 2.0 && g.delta <= 1e-3, "{g:?}");
        assert!(r.bound.is_none());
    }

    #[test]
    fn lane_keys_count_dummies_as_bad_cells() {
        let p =
            ProtocolParams::for_variant(Variant::Alternating, 2000, 0.05, 0.05, 40, 10, 1).unwrap();
        let q = p.with_lane_keys().unwrap();
        let a = alternating_accountant(&p).unwrap();
        let b = alternating_accountant(&q).unwrap();
        assert_eq!(a.scenario().bad_max(), 100);
        assert_eq!(b.scenario().bad_max(), 200);
        assert_eq!(b.scenario().honest_min(), 1800);
        assert_eq!(b.scenario().cells_max(), 2000);
        assert_eq!(trust(&q), TRUST_ALTERNATING_LANE_KEYS);
        // Still certified, and never stronger than with M bad cells.
        let ra = calibrate_histogram(&p, 4, 2.0, 1e-3).unwrap();
        let rb = calibrate_histogram(&q, 4, 2.0, 1e-3).unwrap();
        let (ga, gb) = (ra.cal.certified.unwrap(), rb.cal.certified.unwrap());
        assert!(gb.epsilon <= 2.0 && gb.delta <= 1e-3, "{gb:?}");
        assert!(
            rb.cal.gamma.get() >= ra.cal.gamma.get() - 1e-12,
            "{ga:?} {gb:?}"
        );
    }

    #[test]
    fn bad_targets_name_the_field() {
        let p = ProtocolParams::new(30, 0.05, 0.05, 40, 10, 1).unwrap();
        for (m, eps, delta, field) in [
            (4, -1.0, 1e-3, "eps"),
            (4, 1.0, 2.0, "delta"),
            (1, 1.0, 1e-3, "domain"),
        ] {
            match calibrate_histogram(&p, m, eps, delta) {
                Err(ReleaseError::OutOfRange { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {:?}", other.err()),
            }
        }
    }
}
