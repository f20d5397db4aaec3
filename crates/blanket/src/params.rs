//! Validated parameter newtypes: built once with a typed error naming the field and the
//! allowed range, trusted everywhere after.

use serde::Serialize;
use thiserror::Error;

/// A parameter outside its allowed range.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamError {
    /// `field` got `value`, which is outside `allowed`.
    #[error("{field} must be {allowed}, got {}", compact(value))]
    OutOfRange {
        /// The parameter's name as the user knows it (CLI flag or JSON key).
        field: &'static str,
        /// The allowed range, in words.
        allowed: &'static str,
        /// The rejected value, printed.
        value: String,
    },
}

/// A rejected value as the error echoes it: a float printed in full (1e300 is 301 digits as
/// `f64::to_string` writes it) is shortened to [`crate::display::echo`]'s notation.
fn compact(value: &str) -> std::borrow::Cow<'_, str> {
    match value.parse::<f64>() {
        Ok(x) if value.len() > 21 => crate::display::echo(x).into(),
        _ => value.into(),
    }
}

fn out_of_range(field: &'static str, allowed: &'static str, value: impl ToString) -> ParamError {
    ParamError::OutOfRange {
        field,
        allowed,
        value: value.to_string(),
    }
}

macro_rules! getter {
    ($t:ident, $inner:ty) => {
        impl $t {
            /// The validated value.
            #[inline]
            pub fn get(self) -> $inner {
                self.0
            }
        }
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

/// Privacy parameter epsilon: finite and > 0 (natural-log scale).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Epsilon(f64);
getter!(Epsilon, f64);

impl Epsilon {
    /// Validates `eps > 0`, finite.
    pub fn new(eps: f64) -> Result<Self, ParamError> {
        if eps.is_finite() && eps > 0.0 {
            Ok(Self(eps))
        } else {
            Err(out_of_range("eps", "a finite number > 0", eps))
        }
    }
}

/// Privacy parameter delta: in the open interval (0, 1).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Delta(f64);
getter!(Delta, f64);

impl Delta {
    /// Validates `0 < delta < 1`.
    pub fn new(delta: f64) -> Result<Self, ParamError> {
        if delta > 0.0 && delta < 1.0 {
            Ok(Self(delta))
        } else {
            Err(out_of_range("delta", "in the open interval (0, 1)", delta))
        }
    }
}

/// Number of users n >= 2 (every user counts, the target included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NumUsers(u64);
getter!(NumUsers, u64);

impl NumUsers {
    /// Largest supported n (2^48): counts and sums stay exact in f64 and u64 arithmetic.
    pub const MAX: u64 = 1 << 48;

    /// Validates `2 <= n <= 2^48`.
    pub fn new(n: u64) -> Result<Self, ParamError> {
        if (2..=Self::MAX).contains(&n) {
            Ok(Self(n))
        } else {
            Err(out_of_range("n", "an integer from 2 to 2^48", n))
        }
    }

    /// Parses a float-like count (e.g. `1e6` from a CLI) exactly; rejects fractions.
    pub fn from_f64(n: f64) -> Result<Self, ParamError> {
        if n.is_finite() && n.fract() == 0.0 && n >= 2.0 && n <= Self::MAX as f64 {
            Ok(Self(n as u64))
        } else {
            Err(out_of_range("n", "an integer from 2 to 2^48", n))
        }
    }
}

/// Size m of a message domain {0, ..., m-1}: 2 <= m <= 2^26.
///
/// The upper limit keeps an analyzer's per-value counters (8 bytes each) under 512 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct DomainSize(u32);
getter!(DomainSize, u32);

impl DomainSize {
    /// Largest supported domain size.
    pub const MAX: u32 = 1 << 26;

    /// Validates `2 <= m <= 2^26`.
    pub fn new(m: u64) -> Result<Self, ParamError> {
        if (2..=Self::MAX as u64).contains(&m) {
            Ok(Self(m as u32))
        } else {
            Err(out_of_range(
                "domain",
                "an integer from 2 to 67108864 (2^26)",
                m,
            ))
        }
    }
}

/// Precision k of randomized rounding: values are encoded in {0, ..., k}; 1 <= k < 2^26.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Precision(u32);
getter!(Precision, u32);

impl Precision {
    /// Validates `1 <= k <= 2^26 - 1` (so that the k + 1 message values form a [`DomainSize`]).
    pub fn new(k: u64) -> Result<Self, ParamError> {
        if (1..DomainSize::MAX as u64).contains(&k) {
            Ok(Self(k as u32))
        } else {
            Err(out_of_range("k", "an integer from 1 to 67108863", k))
        }
    }

    /// The number of message values, k + 1.
    pub fn levels(self) -> DomainSize {
        DomainSize(self.0 + 1)
    }
}

/// Blanket probability gamma of the privacy-blanket randomizer: in the open interval (0, 1).
///
/// gamma = 0 gives no privacy and gamma = 1 carries no information, so both are rejected.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Gamma(f64);
getter!(Gamma, f64);

impl Gamma {
    /// Validates `0 < gamma < 1`.
    pub fn new(gamma: f64) -> Result<Self, ParamError> {
        if gamma > 0.0 && gamma < 1.0 {
            Ok(Self(gamma))
        } else {
            Err(out_of_range("gamma", "in the open interval (0, 1)", gamma))
        }
    }
}

/// A user's real value in the closed interval [0, 1] (NaN rejected).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct UnitValue(f64);
getter!(UnitValue, f64);

impl UnitValue {
    /// Validates `0 <= x <= 1`.
    pub fn new(x: f64) -> Result<Self, ParamError> {
        if (0.0..=1.0).contains(&x) {
            Ok(Self(x))
        } else {
            Err(out_of_range("value", "a number in [0, 1]", x))
        }
    }
}

/// A non-negative rational number num/den with `u64` parts, den >= 1, kept in lowest terms:
/// the exact parameter type of the integer noise samplers ([`crate::sample::DiscreteGaussian`],
/// [`crate::sample::DiscreteLaplace`], [`crate::sample::bernoulli_exp_neg`]), which never round
/// it to a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Rational {
    num: u64,
    den: u64,
}

impl Rational {
    /// num/den reduced to lowest terms; the denominator must be >= 1.
    pub fn new(num: u64, den: u64) -> Result<Self, ParamError> {
        if den == 0 {
            return Err(out_of_range("den", "an integer >= 1", den));
        }
        let g = gcd(num, den);
        Ok(Self {
            num: num / g,
            den: den / g,
        })
    }

    /// The integer n as n/1.
    pub fn integer(n: u64) -> Self {
        Self { num: n, den: 1 }
    }

    /// The numerator (in lowest terms).
    #[inline]
    pub fn num(self) -> u64 {
        self.num
    }

    /// The denominator (in lowest terms, >= 1).
    #[inline]
    pub fn den(self) -> u64 {
        self.den
    }

    /// The nearest `f64` (for reports and tests; the samplers never use it).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl core::fmt::Display for Rational {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// Greatest common divisor (Euclid); gcd(0, b) = b.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsilon_rejects_nonpositive_and_nan() {
        assert!(Epsilon::new(0.5).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Epsilon::new(bad).unwrap_err();
            assert!(e.to_string().starts_with("eps must be"), "{e}");
        }
    }

    #[test]
    fn delta_open_interval() {
        assert!(Delta::new(1e-9).is_ok());
        for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            let e = Delta::new(bad).unwrap_err();
            assert!(e
                .to_string()
                .contains("delta must be in the open interval (0, 1)"));
        }
    }

    #[test]
    fn counts_and_domains() {
        assert!(NumUsers::new(1).is_err());
        assert!(NumUsers::new(2).is_ok());
        assert!(NumUsers::from_f64(1e6).is_ok());
        assert!(NumUsers::from_f64(2.5).is_err());
        assert!(NumUsers::from_f64(f64::NAN).is_err());
        assert!(DomainSize::new(1).is_err());
        assert!(DomainSize::new(1 << 27).is_err());
        assert_eq!(Precision::new(3).unwrap().levels().get(), 4);
        assert!(Precision::new(0).is_err());
    }

    #[test]
    fn gamma_and_unit_values() {
        assert!(Gamma::new(0.0).is_err());
        assert!(Gamma::new(1.0).is_err());
        assert!(Gamma::new(0.3).is_ok());
        assert!(UnitValue::new(0.0).is_ok());
        assert!(UnitValue::new(1.0).is_ok());
        for bad in [-1e-12, 1.0000001, f64::NAN] {
            let e = UnitValue::new(bad).unwrap_err();
            assert!(e.to_string().contains("value must be a number in [0, 1]"));
        }
    }

    #[test]
    fn rationals_reduce_and_reject_zero_denominators() {
        let r = Rational::new(6, 4).unwrap();
        assert_eq!((r.num(), r.den()), (3, 2));
        assert_eq!(r.to_string(), "3/2");
        assert_eq!(Rational::new(0, 7).unwrap(), Rational::integer(0));
        let max = Rational::new(u64::MAX, u64::MAX).unwrap();
        assert_eq!(max, Rational::integer(1));
        let e = Rational::new(1, 0).unwrap_err();
        assert_eq!(e.to_string(), "den must be an integer >= 1, got 0");
    }

    #[test]
    fn huge_rejected_values_are_echoed_compactly() {
        let e = Delta::new(1e300).unwrap_err().to_string();
        assert!(e.ends_with("got 1e300"), "{e}");
        let e = Delta::new(-1e30).unwrap_err().to_string();
        assert!(e.ends_with("got -1e30"), "{e}");
        assert!(Delta::new(2.5)
            .unwrap_err()
            .to_string()
            .ends_with("got 2.5"));
    }
}
