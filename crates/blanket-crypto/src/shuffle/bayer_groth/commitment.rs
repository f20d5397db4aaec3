//! Pedersen vector commitments (BG12, preliminaries, "generalized Pedersen
//! commitment"; SP `GetCommitment`, `GetCommitmentVector`):
//! `com(a_1..a_k; r) = r H + sum_l a_l G_l` for `k <= n`, perfectly hiding
//! and computationally binding when nobody knows a discrete-log relation
//! between `H, G_1, ..., G_n`.
//!
//! Generators (nothing up the sleeve, blanket's labels):
//! `H = HashToRistretto(SHA-512("blanket/bayer-groth/commitment-key/v1/h"))`,
//! `G_l = HashToRistretto(SHA-512("blanket/bayer-groth/commitment-key/v1/g" || l_le64))`
//! for `l = 1..n` (Elligator; distinct labels from the Terelius-Wikstrom
//! generators).

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::MultiscalarMul;
use rayon::prelude::*;
use sha2::Sha512;

use super::Arrangement;
use crate::shuffle::ShuffleError;

const H_LABEL: &[u8] = b"blanket/bayer-groth/commitment-key/v1/h";
const G_LABEL: &[u8] = b"blanket/bayer-groth/commitment-key/v1/g";

/// The commitment key `(H, G_1, ..., G_n)`. It depends only on `n`, so one
/// key serves every list whose arrangement has at most `n` columns
/// ([`CommitmentKey::for_len`]); `n` is about `sqrt(2 N)`, so a key costs
/// little (about 160 generators for `N = 10,000`).
pub struct CommitmentKey {
    h: RistrettoPoint,
    gs: Vec<RistrettoPoint>,
}

impl CommitmentKey {
    /// `H` and the first `n` generators `G_1..G_n`.
    pub fn new(n: usize) -> Self {
        let h = RistrettoPoint::hash_from_bytes::<Sha512>(H_LABEL);
        let gs = (1..=n as u64)
            .into_par_iter()
            .map(|l| {
                let mut buf = Vec::with_capacity(G_LABEL.len() + 8);
                buf.extend_from_slice(G_LABEL);
                buf.extend_from_slice(&l.to_le_bytes());
                RistrettoPoint::hash_from_bytes::<Sha512>(&buf)
            })
            .collect();
        CommitmentKey { h, gs }
    }

    /// The key for lists of `len` ciphertexts (`n` columns of
    /// [`Arrangement::for_len`]).
    pub fn for_len(len: usize) -> Result<Self, ShuffleError> {
        Ok(Self::new(Arrangement::for_len(len)?.n))
    }

    /// Number of `G_l`.
    pub fn len(&self) -> usize {
        self.gs.len()
    }

    /// Whether there is no `G_l`.
    pub fn is_empty(&self) -> bool {
        self.gs.is_empty()
    }

    /// `H`.
    pub fn h(&self) -> &RistrettoPoint {
        &self.h
    }

    /// `G_1..G_n`.
    pub fn gs(&self) -> &[RistrettoPoint] {
        &self.gs
    }

    pub(crate) fn check(&self, n: usize) -> Result<(), ShuffleError> {
        if self.gs.len() < n {
            return Err(ShuffleError::NotEnoughGenerators {
                have: self.gs.len(),
                need: n,
            });
        }
        Ok(())
    }

    /// `com(a; r) = r H + sum_l a_l G_l` (constant time: dalek's Straus; the
    /// committed values are secret). Requires `a.len() <= n`.
    pub(crate) fn commit(&self, a: &[Scalar], r: &Scalar) -> RistrettoPoint {
        debug_assert!(a.len() <= self.gs.len());
        RistrettoPoint::multiscalar_mul(
            std::iter::once(r).chain(a),
            std::iter::once(&self.h).chain(&self.gs[..a.len()]),
        )
    }

    /// Commitments to several vectors, on the rayon pool.
    pub(crate) fn commit_all(&self, cols: &[Vec<Scalar>], rs: &[Scalar]) -> Vec<RistrettoPoint> {
        cols.par_iter()
            .zip(rs.par_iter())
            .map(|(a, r)| self.commit(a, r))
            .collect()
    }

    /// `com(b; s) = s H + b G_1`, a commitment to one value.
    pub(crate) fn commit_scalar(&self, b: &Scalar, s: &Scalar) -> RistrettoPoint {
        self.commit(std::slice::from_ref(b), s)
    }

    /// `sum_l G_l` over the first `n` generators: `com((1, ..., 1); 0)`.
    pub(crate) fn sum_gs(&self, n: usize) -> RistrettoPoint {
        self.gs[..n].iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homomorphic_and_distinct() {
        let ck = CommitmentKey::new(4);
        let a = [Scalar::from(3u8), Scalar::from(5u8)];
        let b = [Scalar::from(7u8), Scalar::from(11u8)];
        let (r, s) = (Scalar::from(13u8), Scalar::from(17u8));
        let sum: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(
            ck.commit(&a, &r) + ck.commit(&b, &s),
            ck.commit(&sum, &(r + s))
        );
        assert_eq!(ck.commit_scalar(&a[0], &r), ck.commit(&a[..1], &r));
        let mut all: Vec<RistrettoPoint> = ck.gs().to_vec();
        all.push(*ck.h());
        for i in 0..all.len() {
            for j in 0..i {
                assert_ne!(all[i], all[j]);
            }
        }
        // Deterministic: the same key every time.
        assert_eq!(CommitmentKey::new(4).gs(), ck.gs());
        assert_eq!(CommitmentKey::new(2).gs(), &ck.gs()[..2]);
    }
}
