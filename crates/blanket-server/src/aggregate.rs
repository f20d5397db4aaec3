//! The analyzer's per-batch work: open every sealed report of a batch, absorb the messages
//! into the core's mergeable analyzer state ([`blanket::analyzer::Counts`] for a histogram,
//! [`blanket::analyzer::IntegerSum`] for a scalar sum, [`blanket::analyzer::CoordinateSums`]
//! for a vector sum, [`crate::multi::IkosState`] over [`blanket::analyzer::ModularSum`] for
//! an IKOS sum), and keep the state between batches.

use crate::crypto::KeyPair;
use crate::multi::{self, IkosState};
use crate::problem::Rejection;
use crate::task::{ikos_parts, Protocol, TaskConfig};
use crate::wire::{ReportId, Sealed, TaskId};
use blanket::analyzer::{AggregateError, Aggregator, CoordinateSums, Counts, IntegerSum};
use blanket::field::Modulus;
use blanket::params::{DomainSize, Gamma, Precision};
use blanket::protocol::{Histogram, ScalarSum};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// An analyzer state of one of the task's protocols.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Histogram: counts per message value.
    Counts(Counts),
    /// Scalar sum: the sum and count of levels.
    Sum(IntegerSum),
    /// Vector sum: per-coordinate counts and sums of levels.
    Vector(CoordinateSums),
    /// IKOS sum: decoded batch sums mod q.
    Ikos(IkosState),
}

/// A state as stored (JSON); the 128-bit sum is a decimal string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Stored {
    Counts {
        counts: Vec<u64>,
    },
    Sum {
        max: u32,
        sum: String,
        count: u64,
    },
    Vector {
        max: u32,
        counts: Vec<u64>,
        sums: Vec<String>,
    },
    Ikos {
        q: String,
        decoded: String,
        shares: u64,
    },
}

fn corrupt(what: &str) -> Rejection {
    Rejection::Storage(format!("stored analyzer state is invalid: {what}"))
}

fn shape_error(e: AggregateError) -> Rejection {
    Rejection::Storage(format!("analyzer states do not merge: {e}"))
}

impl State {
    /// The empty state of the task's protocol.
    pub fn empty(config: &TaskConfig) -> Result<Self, Rejection> {
        Ok(match config.request.protocol {
            Protocol::Histogram { domain } => {
                Self::Counts(Counts::new(DomainSize::new(domain)?.get()))
            }
            Protocol::ScalarSum { k } => {
                Self::Sum(IntegerSum::new(Precision::new(k.unwrap_or(0))?.get()))
            }
            Protocol::VectorSum { d, t, k } => {
                let p = multi::vector_protocol(d, t, k, config.gamma)?;
                Self::Vector(CoordinateSums::new(p.d(), p.k().get()))
            }
            Protocol::IkosSum { sigma, calibrated } => {
                let (_, c) = ikos_parts(sigma, calibrated)?;
                Self::Ikos(IkosState::new(
                    Modulus::power_of_two(c.modulus_bits)
                        .map_err(|e| corrupt(&format!("modulus: {e}")))?,
                ))
            }
        })
    }

    /// Adds one message.
    pub fn absorb(&mut self, m: u32) -> Result<(), AggregateError> {
        match self {
            Self::Counts(c) => c.absorb(m),
            Self::Sum(s) => s.absorb(m),
            Self::Vector(v) => v.absorb(multi::decode_coordinate(m, v.max())),
            Self::Ikos(s) => s.absorb(m),
        }
    }

    /// Ends a batch: an IKOS batch is decoded on its own (a no-op for the other states).
    pub fn close_batch(&mut self) {
        if let Self::Ikos(s) = self {
            s.close();
        }
    }

    /// Adds another state of the same task.
    pub fn merge(&mut self, other: Self) -> Result<(), Rejection> {
        match (self, other) {
            (Self::Counts(a), Self::Counts(b)) => a.merge(b).map_err(shape_error),
            (Self::Sum(a), Self::Sum(b)) => a.merge(b).map_err(shape_error),
            (Self::Vector(a), Self::Vector(b)) => a.merge(b).map_err(shape_error),
            (Self::Ikos(a), Self::Ikos(b)) => a.merge(b).map_err(shape_error),
            _ => Err(corrupt("states of different protocols mixed")),
        }
    }

    /// Reports absorbed.
    pub fn reports(&self) -> u64 {
        match self {
            Self::Counts(c) => c.reports(),
            Self::Sum(s) => s.reports(),
            Self::Vector(v) => v.reports(),
            Self::Ikos(s) => s.reports(),
        }
    }

    /// The state as stored.
    pub fn to_json(&self) -> String {
        let s = match self {
            Self::Counts(c) => Stored::Counts {
                counts: c.counts().to_vec(),
            },
            Self::Sum(s) => Stored::Sum {
                max: s.max(),
                sum: s.sum().to_string(),
                count: s.reports(),
            },
            Self::Vector(v) => Stored::Vector {
                max: v.max(),
                counts: v.counts().to_vec(),
                sums: v.sums().iter().map(u128::to_string).collect(),
            },
            Self::Ikos(s) => {
                let mut s = s.clone();
                s.close();
                Stored::Ikos {
                    q: s.modulus().q().to_string(),
                    decoded: s.decoded().to_string(),
                    shares: s.reports(),
                }
            }
        };
        serde_json::to_string(&s).unwrap_or_default()
    }

    /// A stored state.
    pub fn from_json(json: &str) -> Result<Self, Rejection> {
        let s: Stored = serde_json::from_str(json).map_err(|e| corrupt(&e.to_string()))?;
        match s {
            Stored::Counts { counts } => Counts::from_counts(counts)
                .map(Self::Counts)
                .ok_or_else(|| corrupt("counts")),
            Stored::Sum { max, sum, count } => {
                let sum: u128 = sum.parse().map_err(|_| corrupt("sum"))?;
                IntegerSum::from_parts(max, sum, count)
                    .map(Self::Sum)
                    .ok_or_else(|| corrupt("sum"))
            }
            Stored::Vector { max, counts, sums } => {
                let sums = sums
                    .iter()
                    .map(|s| s.parse::<u128>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| corrupt("vector sums"))?;
                CoordinateSums::from_parts(max, counts, sums)
                    .map(Self::Vector)
                    .ok_or_else(|| corrupt("vector sums"))
            }
            Stored::Ikos { q, decoded, shares } => {
                let q: u128 = q.parse().map_err(|_| corrupt("ikos modulus"))?;
                let decoded: i128 = decoded.parse().map_err(|_| corrupt("ikos sum"))?;
                IkosState::from_parts(q, decoded, shares)
                    .map(Self::Ikos)
                    .ok_or_else(|| corrupt("ikos modulus"))
            }
        }
    }

    /// The protocol's unbiased estimate from this state (JSON for the release).
    pub fn estimate(&self, config: &TaskConfig) -> Result<serde_json::Value, Rejection> {
        let gamma = || Gamma::new(config.gamma);
        let v = match (self, config.request.protocol) {
            (Self::Counts(c), Protocol::Histogram { domain }) => {
                let h = Histogram::new(DomainSize::new(domain)?, gamma()?);
                let e = h.estimate(c).map_err(shape_error)?;
                serde_json::json!({
                    "counts": e.counts,
                    "frequencies": e.frequencies(),
                    "reports": e.reports,
                })
            }
            (Self::Sum(s), Protocol::ScalarSum { k }) => {
                let p = ScalarSum::new(Precision::new(k.unwrap_or(0))?, gamma()?);
                let e = p.estimate(s).map_err(shape_error)?;
                serde_json::json!({ "sum": e.sum, "mean": e.mean, "reports": e.reports })
            }
            (Self::Vector(v), Protocol::VectorSum { d, t, k }) => {
                let p = multi::vector_protocol(d, t, k, config.gamma)?;
                let e = p.estimate(v).map_err(shape_error)?;
                serde_json::json!({
                    "mean": e.mean,
                    "sum": e.sum,
                    "reports": v.reports(),
                    "users": v.reports() / u64::from(p.t()),
                    "reports_per_coordinate": e.reports,
                    "unreported": e.unreported,
                })
            }
            (Self::Ikos(s), Protocol::IkosSum { sigma, calibrated }) => {
                let (_, c) = ikos_parts(sigma, calibrated)?;
                let mut s = s.clone();
                s.close();
                let sum = s.decoded() as f64 / f64::from(c.precision);
                let users = s.reports() / u64::from(c.shares);
                serde_json::json!({
                    "sum": sum,
                    "mean": sum / users.max(1) as f64,
                    "reports": s.reports(),
                    "users": users,
                })
            }
            _ => return Err(corrupt("state does not match the task's protocol")),
        };
        Ok(v)
    }
}

/// One opened batch: its state and how many reports were left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// Messages of the batch that opened and lie in the message domain, absorbed.
    pub state: State,
    /// Reports that did not open or whose message is outside the domain.
    pub rejected: u64,
    /// Reports whose encapsulated key the task had already seen.
    pub duplicates: u64,
}

/// Opens every report of a batch under its report id (in parallel): the message of each, or
/// `None` for one that does not open.
pub fn open_all(keys: &KeyPair, task: &TaskId, sealed: &[(ReportId, Sealed)]) -> Vec<Option<u32>> {
    sealed
        .par_iter()
        .map(|(id, s)| keys.open(task, id, &s.enc, &s.ct).ok())
        .collect()
}

/// Absorbs the opened messages whose keys are `fresh` (first time seen for the task). The
/// caller decides freshness on opened reports only ([`crate::analyzer::Analyzer::accept_batch`]):
/// a report that does not open is `rejected`, never a duplicate, and claims nothing.
pub fn absorb_batch(
    config: &TaskConfig,
    messages: &[Option<u32>],
    fresh: &[bool],
) -> Result<Opened, Rejection> {
    let mut state = State::empty(config)?;
    let (mut rejected, mut duplicates) = (0, 0);
    for (m, &new) in messages.iter().zip(fresh) {
        if !new {
            duplicates += 1;
            continue;
        }
        match m {
            Some(m) if state.absorb(*m).is_ok() => {}
            _ => rejected += 1,
        }
    }
    state.close_batch();
    Ok(Opened {
        state,
        rejected,
        duplicates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{calibrate_task, TaskRequest};

    fn config(protocol: Protocol) -> TaskConfig {
        calibrate_task(
            TaskId([3; 16]),
            TaskRequest {
                protocol,
                eps: 1.0,
                delta: 1e-6,
                expected_users: 5000,
                min_batch: 1000,
                deadline_unix: 1 << 40,
                budget_eps: 2.0,
                budget_delta: 2e-6,
            },
        )
        .unwrap()
    }

    #[test]
    fn absorb_counts_rejects_and_duplicates() {
        let c = config(Protocol::Histogram { domain: 4 });
        let msgs = [Some(0), Some(3), Some(4), None, Some(1), Some(1)];
        let fresh = [true, true, true, true, true, false];
        let o = absorb_batch(&c, &msgs, &fresh).unwrap();
        assert_eq!(o.rejected, 2);
        assert_eq!(o.duplicates, 1);
        assert_eq!(
            o.state,
            State::Counts(Counts::from_counts(vec![1, 1, 0, 1]).unwrap())
        );
        let back = State::from_json(&o.state.to_json()).unwrap();
        assert_eq!(back, o.state);
    }

    #[test]
    fn sum_state_round_trips_and_merges() {
        let c = config(Protocol::ScalarSum { k: Some(4) });
        let o = absorb_batch(&c, &[Some(4), Some(2), Some(5)], &[true; 3]).unwrap();
        assert_eq!(o.rejected, 1);
        let mut a = State::from_json(&o.state.to_json()).unwrap();
        a.merge(o.state.clone()).unwrap();
        assert_eq!(a.reports(), 4);
        assert!(State::from_json(r#"{"kind":"sum","max":4,"sum":"99","count":2}"#).is_err());
        let e = a.estimate(&c).unwrap();
        assert_eq!(e["reports"], 4);
    }
}
