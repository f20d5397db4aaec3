//! Randomness sources. Every sampler in blanket takes `R: CryptoRng`, so one code path
//! serves both real clients (seeded from the OS) and reproducible simulations (seeded by
//! the caller). Both are ChaCha20: a simulation's seed is the only difference.

pub use rand_chacha::ChaCha20Rng;
pub use rand_core::{CryptoRng, RngCore, SeedableRng};
use thiserror::Error;

/// The operating system's random source could not be read.
#[derive(Debug, Error)]
#[error("could not seed the random generator from the operating system: {0}")]
pub struct OsRngError(String);

/// A ChaCha20 CSPRNG seeded from the operating system: what real clients use.
pub fn secure_rng() -> Result<ChaCha20Rng, OsRngError> {
    ChaCha20Rng::try_from_os_rng().map_err(|e| OsRngError(e.to_string()))
}

/// A ChaCha20 CSPRNG seeded from `seed`: reproducible simulations only, never real clients.
pub fn simulation_rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// An independent reproducible stream `stream` of the simulation seeded by `seed`
/// (ChaCha's stream id), for parallel simulation that does not depend on thread count.
pub fn simulation_stream(seed: u64, stream: u64) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}
