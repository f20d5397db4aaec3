//! Arithmetic in Z_q for any modulus 2 <= q <= 2^64, additive secret sharing into m shares,
//! and reconstruction: the group of the split-and-mix (IKOS) summation protocol
//! (Ishai, Kushilevitz, Ostrovsky, Sahai, FOCS 2006; spec `04-multi-message.md`).
//!
//! Elements are `u64` values in `0..q`. A power-of-two modulus (including q = 2^64, where
//! Z_q is `u64` with wrapping arithmetic) takes a mask-only fast path; any other modulus
//! uses overflow-checked addition and 128-bit multiplication.

use rand_core::CryptoRng;
use thiserror::Error;

use crate::sample::uniform_u64;

/// A modulus, an element or a share count outside its allowed range.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FieldError {
    /// The modulus q is outside 2..=2^64.
    #[error("modulus q must be in 2..=2^64, got {q}")]
    ModulusOutOfRange {
        /// The rejected modulus.
        q: u128,
    },
    /// A power-of-two modulus with an exponent outside 1..=64.
    #[error("modulus bits must be in 1..=64, got {bits}")]
    BitsOutOfRange {
        /// The rejected exponent.
        bits: u32,
    },
    /// An element that is not reduced modulo q.
    #[error("element {value} is outside Z_q = 0..={max}")]
    ElementOutOfRange {
        /// The rejected value.
        value: u64,
        /// q - 1.
        max: u64,
    },
    /// A share count of zero.
    #[error("shares m must be >= 1, got {m}")]
    SharesOutOfRange {
        /// The rejected count.
        m: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// q = mask + 1 = 2^bits, 1 <= bits <= 64.
    PowerOfTwo { mask: u64 },
    /// Any other q, 3 <= q < 2^64.
    General { q: u64 },
}

/// The modulus q of Z_q, validated: 2 <= q <= 2^64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Modulus(Kind);

impl Modulus {
    /// Validates `2 <= q <= 2^64`.
    pub fn new(q: u128) -> Result<Self, FieldError> {
        if !(2..=1u128 << 64).contains(&q) {
            return Err(FieldError::ModulusOutOfRange { q });
        }
        if q.is_power_of_two() {
            Ok(Self(Kind::PowerOfTwo {
                mask: (q - 1) as u64,
            }))
        } else {
            Ok(Self(Kind::General { q: q as u64 }))
        }
    }

    /// q = 2^bits for `1 <= bits <= 64`.
    pub fn power_of_two(bits: u32) -> Result<Self, FieldError> {
        if !(1..=64).contains(&bits) {
            return Err(FieldError::BitsOutOfRange { bits });
        }
        Ok(Self(Kind::PowerOfTwo {
            mask: u64::MAX >> (64 - bits),
        }))
    }

    /// The modulus q (up to 2^64, hence `u128`).
    #[inline]
    pub fn q(self) -> u128 {
        match self.0 {
            Kind::PowerOfTwo { mask } => u128::from(mask) + 1,
            Kind::General { q } => u128::from(q),
        }
    }

    /// The largest element, q - 1.
    #[inline]
    pub fn max(self) -> u64 {
        match self.0 {
            Kind::PowerOfTwo { mask } => mask,
            Kind::General { q } => q - 1,
        }
    }

    /// Whether q is a power of two (the mask-only fast path).
    #[inline]
    pub fn is_power_of_two(self) -> bool {
        matches!(self.0, Kind::PowerOfTwo { .. })
    }

    /// Whether `x` is a reduced element of Z_q.
    #[inline]
    pub fn contains(self, x: u64) -> bool {
        x <= self.max()
    }

    /// `x` as an element, or an error if it is not reduced.
    #[inline]
    pub fn element(self, x: u64) -> Result<u64, FieldError> {
        if self.contains(x) {
            Ok(x)
        } else {
            Err(FieldError::ElementOutOfRange {
                value: x,
                max: self.max(),
            })
        }
    }

    /// x mod q for any `u64`.
    #[inline]
    pub fn reduce(self, x: u64) -> u64 {
        match self.0 {
            Kind::PowerOfTwo { mask } => x & mask,
            Kind::General { q } => x % q,
        }
    }

    /// a + b mod q for reduced a, b.
    #[inline]
    pub fn add(self, a: u64, b: u64) -> u64 {
        debug_assert!(self.contains(a) && self.contains(b));
        match self.0 {
            Kind::PowerOfTwo { mask } => a.wrapping_add(b) & mask,
            Kind::General { q } => {
                let (s, carry) = a.overflowing_add(b);
                if carry || s >= q {
                    s.wrapping_sub(q)
                } else {
                    s
                }
            }
        }
    }

    /// -a mod q for reduced a.
    #[inline]
    pub fn neg(self, a: u64) -> u64 {
        debug_assert!(self.contains(a));
        match self.0 {
            Kind::PowerOfTwo { mask } => a.wrapping_neg() & mask,
            Kind::General { q } => {
                if a == 0 {
                    0
                } else {
                    q - a
                }
            }
        }
    }

    /// a - b mod q for reduced a, b.
    #[inline]
    pub fn sub(self, a: u64, b: u64) -> u64 {
        debug_assert!(self.contains(a) && self.contains(b));
        match self.0 {
            Kind::PowerOfTwo { mask } => a.wrapping_sub(b) & mask,
            Kind::General { q } => {
                if a >= b {
                    a - b
                } else {
                    a.wrapping_sub(b).wrapping_add(q)
                }
            }
        }
    }

    /// a * b mod q for reduced a, b.
    #[inline]
    pub fn mul(self, a: u64, b: u64) -> u64 {
        debug_assert!(self.contains(a) && self.contains(b));
        match self.0 {
            Kind::PowerOfTwo { mask } => a.wrapping_mul(b) & mask,
            Kind::General { q } => ((u128::from(a) * u128::from(b)) % u128::from(q)) as u64,
        }
    }

    /// The sum mod q of reduced elements.
    pub fn sum<I: IntoIterator<Item = u64>>(self, elements: I) -> u64 {
        elements.into_iter().fold(0, |acc, e| self.add(acc, e))
    }

    /// A uniform element of Z_q: masked raw bits for a power of two (exact), Lemire's
    /// multiply-and-reject (`sample::uniform_u64`) otherwise: no modulo bias either way.
    #[inline]
    pub fn uniform<R: CryptoRng + ?Sized>(self, rng: &mut R) -> u64 {
        match self.0 {
            Kind::PowerOfTwo { mask } => rng.next_u64() & mask,
            Kind::General { q } => uniform_u64(rng, q),
        }
    }

    /// Splits `x` into `shares.len()` additive shares: all but the last uniform and
    /// independent, the last `x - (sum of the others)`, so the shares sum to `x` mod q and any
    /// `shares.len() - 1` of them are uniform and independent of `x`.
    pub fn share_into<R: CryptoRng + ?Sized>(
        self,
        x: u64,
        shares: &mut [u64],
        rng: &mut R,
    ) -> Result<(), FieldError> {
        let x = self.element(x)?;
        let Some((last, rest)) = shares.split_last_mut() else {
            return Err(FieldError::SharesOutOfRange { m: 0 });
        };
        let mut partial = 0;
        for s in rest {
            *s = self.uniform(rng);
            partial = self.add(partial, *s);
        }
        *last = self.sub(x, partial);
        Ok(())
    }

    /// `m` additive shares of `x` (see [`Modulus::share_into`]).
    pub fn share<R: CryptoRng + ?Sized>(
        self,
        x: u64,
        m: usize,
        rng: &mut R,
    ) -> Result<Vec<u64>, FieldError> {
        let mut shares = vec![0; m];
        self.share_into(x, &mut shares, rng)?;
        Ok(shares)
    }

    /// The secret back from all its shares: their sum mod q. Rejects unreduced shares.
    pub fn reconstruct(self, shares: &[u64]) -> Result<u64, FieldError> {
        shares
            .iter()
            .try_fold(0, |acc, &s| Ok(self.add(acc, self.element(s)?)))
    }
}

impl core::fmt::Display for Modulus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.q())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};
    use rand_core::RngCore;

    const TWO_64: u128 = 1 << 64;

    fn moduli() -> Vec<Modulus> {
        [
            2,
            3,
            5,
            7,
            1000,
            (1 << 31) - 1,
            1 << 32,
            (1 << 32) + 15,
            (1 << 63) + 1,
            TWO_64 - 59,
            TWO_64 - 1,
            TWO_64,
        ]
        .into_iter()
        .map(|q| Modulus::new(q).unwrap())
        .collect()
    }

    fn edge_elements(q: u128) -> Vec<u64> {
        let max = (q - 1) as u64;
        let mut v = vec![0, 1, max, max - 1, max / 2, max / 2 + 1];
        v.retain(|&x| u128::from(x) < q);
        v
    }

    #[test]
    fn arithmetic_matches_u128_reference() {
        let mut rng = simulation_rng(0xF1E1D);
        for m in moduli() {
            let q = m.q();
            let mut elements = edge_elements(q);
            elements.extend((0..200).map(|_| m.uniform(&mut rng)));
            for &a in &elements {
                assert!(m.contains(a));
                for &b in elements.iter().take(60) {
                    let (a128, b128) = (u128::from(a), u128::from(b));
                    assert_eq!(
                        u128::from(m.add(a, b)),
                        (a128 + b128) % q,
                        "{a}+{b} mod {q}"
                    );
                    assert_eq!(
                        u128::from(m.sub(a, b)),
                        (a128 + q - b128) % q,
                        "{a}-{b} mod {q}"
                    );
                    assert_eq!(
                        u128::from(m.mul(a, b)),
                        (a128 * b128) % q,
                        "{a}*{b} mod {q}"
                    );
                }
                assert_eq!(u128::from(m.neg(a)), (q - u128::from(a)) % q);
                assert_eq!(m.add(a, m.neg(a)), 0);
            }
            for _ in 0..200 {
                let x = rng.next_u64();
                assert_eq!(u128::from(m.reduce(x)), u128::from(x) % q);
            }
        }
    }

    #[test]
    fn modulus_range_and_fast_path() {
        assert!(matches!(
            Modulus::new(1),
            Err(FieldError::ModulusOutOfRange { q: 1 })
        ));
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(TWO_64 + 1).is_err());
        assert!(Modulus::power_of_two(0).is_err());
        assert!(Modulus::power_of_two(65).is_err());
        assert_eq!(
            Modulus::power_of_two(64).unwrap(),
            Modulus::new(TWO_64).unwrap()
        );
        assert_eq!(Modulus::power_of_two(32).unwrap().q(), 1 << 32);
        assert!(Modulus::new(1 << 20).unwrap().is_power_of_two());
        assert!(!Modulus::new(3).unwrap().is_power_of_two());
        assert_eq!(Modulus::new(TWO_64).unwrap().max(), u64::MAX);
        let m = Modulus::new(3).unwrap();
        assert_eq!(
            m.element(3),
            Err(FieldError::ElementOutOfRange { value: 3, max: 2 })
        );
        let e = FieldError::ModulusOutOfRange { q: 1 }.to_string();
        assert!(e.contains("modulus q") && e.contains("2..=2^64"), "{e}");
    }

    #[test]
    fn share_reconstruct_round_trip() {
        let mut rng = simulation_rng(7);
        for m in moduli() {
            for &x in &edge_elements(m.q()) {
                for count in [1, 2, 3, 12] {
                    let shares = m.share(x, count, &mut rng).unwrap();
                    assert_eq!(shares.len(), count);
                    assert!(shares.iter().all(|&s| m.contains(s)));
                    assert_eq!(m.reconstruct(&shares).unwrap(), x);
                }
            }
            assert_eq!(
                m.share(0, 0, &mut rng),
                Err(FieldError::SharesOutOfRange { m: 0 })
            );
        }
        let m = Modulus::new(5).unwrap();
        assert!(m.share(5, 3, &mut rng).is_err());
        assert!(m.reconstruct(&[1, 5]).is_err());
    }

    /// Each share position, and the last (computed) share, is uniform on Z_q whatever the
    /// secret: chi-square at significance about 1e-6 (`chi_square_critical`), fixed seed.
    #[test]
    fn shares_are_uniform() {
        let mut rng = simulation_rng(0x5A4E);
        for (q, x) in [(7u128, 3u64), (16, 15), (5, 0)] {
            let m = Modulus::new(q).unwrap();
            let k = q as usize;
            let trials = 40_000;
            let count = 3;
            let mut observed = vec![vec![0u64; k]; count];
            for _ in 0..trials {
                for (j, s) in m.share(x, count, &mut rng).unwrap().into_iter().enumerate() {
                    observed[j][s as usize] += 1;
                }
            }
            let expected = vec![trials as f64 / k as f64; k];
            for (j, o) in observed.iter().enumerate() {
                let stat = chi_square(o, &expected);
                assert!(
                    stat < chi_square_critical(k - 1),
                    "q={q} share {j}: chi2 {stat}"
                );
            }
        }
    }
}
