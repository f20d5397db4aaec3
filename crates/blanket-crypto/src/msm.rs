//! Multi-scalar multiplication helpers that split the work across the rayon
//! pool (one chunk per thread; a 1-thread pool runs one chunk).

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, MultiscalarMul, VartimeMultiscalarMul};
use rayon::prelude::*;

/// Smallest chunk worth a task of its own.
const MIN_CHUNK: usize = 256;

/// Chunk size that gives about one chunk per thread.
pub(crate) fn chunk_len(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(threads).max(MIN_CHUNK).max(1)
}

/// Variable-time `sum s_i P_i` (Pippenger/Straus as dalek picks); for public
/// scalars only.
pub(crate) fn vartime_msm(scalars: &[Scalar], points: &[RistrettoPoint]) -> RistrettoPoint {
    debug_assert_eq!(scalars.len(), points.len());
    let c = chunk_len(scalars.len());
    scalars
        .par_chunks(c)
        .zip(points.par_chunks(c))
        .map(|(s, p)| RistrettoPoint::vartime_multiscalar_mul(s, p))
        .reduce(RistrettoPoint::identity, |a, b| a + b)
}

/// Constant-time `sum s_i P_i` (dalek's constant-time Straus), for secret
/// scalars.
pub(crate) fn ct_msm(scalars: &[Scalar], points: &[RistrettoPoint]) -> RistrettoPoint {
    debug_assert_eq!(scalars.len(), points.len());
    let c = chunk_len(scalars.len());
    scalars
        .par_chunks(c)
        .zip(points.par_chunks(c))
        .map(|(s, p)| RistrettoPoint::multiscalar_mul(s, p))
        .reduce(RistrettoPoint::identity, |a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;

    #[test]
    fn msm_matches_naive() {
        let s: Vec<Scalar> = (1..700u64).map(|i| Scalar::from(i * i + 3)).collect();
        let p: Vec<RistrettoPoint> = (1..700u64).map(|i| Scalar::from(i) * G).collect();
        let naive = s
            .iter()
            .zip(&p)
            .fold(RistrettoPoint::identity(), |a, (s, p)| a + s * p);
        assert_eq!(vartime_msm(&s, &p), naive);
        assert_eq!(ct_msm(&s, &p), naive);
        assert_eq!(vartime_msm(&[], &[]), RistrettoPoint::identity());
    }
}
