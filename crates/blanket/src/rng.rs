//! Randomness sources, as two distinct types so that a real client cannot run on a
//! reproducible seed by accident:
//!
//! * [`SecureRng`]: ChaCha12 seeded from the operating system, constructible *only* from the
//!   OS ([`SecureRng::from_os`]). Every client-facing randomize API takes `&mut SecureRng`
//!   (e.g. [`crate::protocol::Histogram::randomize`],
//!   [`crate::protocol::ScalarSum::randomize_value`], [`crate::protocol::VectorSum::randomize`],
//!   [`crate::randomizer::Grr::randomize`]).
//! * [`SimulationRng`]: ChaCha12 seeded by the caller, constructible *only* from a seed
//!   ([`SimulationRng::seeded`], [`SimulationRng::stream`]). Simulations, audits and tests take
//!   it, through the `*_simulated` twins of the client APIs and [`crate::simulate`].
//!
//! Both are the same generator; the seed is the only difference, so one sampling code path
//! (generic over `R: CryptoRng`, internal) serves both, and the types decide who may call it.
//!
//! The generator is ChaCha with 12 rounds, as in `rand`'s `StdRng`: the best
//! published attacks on ChaCha reach 7 rounds, and Aumasson ("Too Much Crypto", IACR ePrint
//! 2019/1492) argues 8 rounds suffice; 12 keeps a 5-round margin at about 1.6 times the speed
//! of ChaCha20 (docs/performance.md).
//!
//! **Rule for the front ends still to come:** the `submit` command, the service's client
//! side, and the Python binding's `rng=None` default must use [`SecureRng::from_os`]; a seed
//! may only ever reach a [`SimulationRng`]. Neither type converts into the other.
//!
//! A simulation generator cannot be passed to a client path:
//!
//! ```compile_fail
//! use blanket::params::{DomainSize, Gamma};
//! use blanket::protocol::Histogram;
//! use blanket::rng::SimulationRng;
//!
//! let h = Histogram::new(DomainSize::new(4).unwrap(), Gamma::new(0.5).unwrap());
//! let mut rng = SimulationRng::seeded(7);
//! let _ = h.randomize(1, &mut rng); // error: expected `&mut SecureRng`
//! ```
//!
//! while the OS-seeded one can (and a simulation uses the `_simulated` twin):
//!
//! ```
//! use blanket::params::{DomainSize, Gamma};
//! use blanket::protocol::Histogram;
//! use blanket::rng::{SecureRng, SimulationRng};
//!
//! let h = Histogram::new(DomainSize::new(4).unwrap(), Gamma::new(0.5).unwrap());
//! let mut rng = SecureRng::from_os().unwrap();
//! assert!(h.randomize(1, &mut rng).unwrap() < 4);
//! let mut sim = SimulationRng::seeded(7);
//! assert!(h.randomize_simulated(1, &mut sim).unwrap() < 4);
//! ```

/// The ChaCha variant behind [`SecureRng`] and [`SimulationRng`] (also used for the generators
/// the parallel shuffle derives from them).
pub(crate) type Chacha = rand_chacha::ChaCha12Rng;
use crate::sample::{sealed, BitSource, Leftover};
use rand_core::SeedableRng;
pub use rand_core::{CryptoRng, RngCore};
use thiserror::Error;

/// The operating system's random source could not be read.
#[derive(Debug, Error)]
#[error("could not seed the random generator from the operating system: {0}")]
pub struct OsRngError(String);

/// A ChaCha12 CSPRNG seeded from the operating system: what real clients use. It can only be
/// built by [`SecureRng::from_os`] (no seed, no `Clone`, no conversion from a
/// [`SimulationRng`]).
///
/// Besides whole words ([`RngCore`]) it serves a few bits at a time ([`BitSource`]): the
/// unused bits of the last word it drew for that are kept for the next decision (each bit is
/// used at most once), so a client's blanket coin costs 8 bits of generator output, not 32.
pub struct SecureRng {
    core: Chacha,
    spare: Leftover,
}

impl SecureRng {
    /// A generator seeded from the operating system's random source.
    pub fn from_os() -> Result<Self, OsRngError> {
        Chacha::try_from_os_rng()
            .map(|core| Self {
                core,
                spare: Leftover::default(),
            })
            .map_err(|e| OsRngError(e.to_string()))
    }
}

impl core::fmt::Debug for SecureRng {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecureRng(..)") // never print the state
    }
}

impl RngCore for SecureRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.core.next_u32()
    }
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.core.next_u64()
    }
    #[inline]
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.core.fill_bytes(dst)
    }
}

impl CryptoRng for SecureRng {}

impl sealed::Sealed for SecureRng {}

impl BitSource for SecureRng {
    #[inline]
    fn bits(&mut self, w: u32) -> u64 {
        self.spare.bits(&mut self.core, w)
    }
}

/// A ChaCha12 CSPRNG seeded by the caller: reproducible simulations, audits and tests only,
/// never real clients. It can only be built from a seed. Like [`SecureRng`], it also serves
/// a few bits at a time ([`BitSource`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulationRng {
    core: Chacha,
    spare: Leftover,
}

impl SimulationRng {
    fn new(core: Chacha) -> Self {
        Self {
            core,
            spare: Leftover::default(),
        }
    }

    /// The generator seeded by `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self::new(Chacha::seed_from_u64(seed))
    }

    /// An independent reproducible stream `stream` of the simulation seeded by `seed`
    /// (ChaCha's stream id), for parallel simulation that does not depend on thread count.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let mut rng = Chacha::seed_from_u64(seed);
        rng.set_stream(stream);
        Self::new(rng)
    }
}

impl RngCore for SimulationRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.core.next_u32()
    }
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.core.next_u64()
    }
    #[inline]
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.core.fill_bytes(dst)
    }
}

impl CryptoRng for SimulationRng {}

impl sealed::Sealed for SimulationRng {}

impl BitSource for SimulationRng {
    #[inline]
    fn bits(&mut self, w: u32) -> u64 {
        self.spare.bits(&mut self.core, w)
    }
}

/// [`SecureRng::from_os`].
pub fn secure_rng() -> Result<SecureRng, OsRngError> {
    SecureRng::from_os()
}

/// [`SimulationRng::seeded`]: reproducible simulations only, never real clients.
pub fn simulation_rng(seed: u64) -> SimulationRng {
    SimulationRng::seeded(seed)
}

/// [`SimulationRng::stream`].
pub fn simulation_stream(seed: u64, stream: u64) -> SimulationRng {
    SimulationRng::stream(seed, stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::BitSource;

    #[test]
    fn simulation_streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(SimulationRng::stream(3, 1), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(SimulationRng::stream(3, 1), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(SimulationRng::stream(3, 2), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut x = SecureRng::from_os().unwrap();
        let mut y = SecureRng::from_os().unwrap();
        assert_ne!(x.next_u64(), y.next_u64());
        assert_eq!(format!("{x:?}"), "SecureRng(..)");
    }

    #[test]
    fn bits_are_fresh_pieces_of_the_words_never_reused() {
        // `bits` serves the words of the generator high bits first, keeping the unused ones;
        // whole-word draws in between take the next words of the stream and leave the kept
        // bits alone; too few kept bits for a piece are discarded.
        let mut a = SimulationRng::seeded(11);
        let mut b = SimulationRng::seeded(11);
        let w1 = a.next_u64();
        assert_eq!(b.bits(8), w1 >> 56);
        assert_eq!(b.next_u32(), a.next_u32());
        assert_eq!(b.next_u64(), a.next_u64());
        assert_eq!(b.bits(16), (w1 >> 40) & 0xffff);
        assert_eq!(b.bits(32), (w1 >> 8) & 0xffff_ffff);
        // 8 bits of w1 are left: a 16-bit piece takes a new word.
        let w2 = a.next_u64();
        assert_eq!(b.bits(16), w2 >> 48);
        assert_eq!(b.bits(8), (w2 >> 40) & 0xff);
        // The OS-seeded generator serves bits the same way (values unknown, range checked).
        let mut s = SecureRng::from_os().unwrap();
        assert!((0..100).all(|_| s.bits(8) < 256 && s.bits(1) < 2));
    }
}
