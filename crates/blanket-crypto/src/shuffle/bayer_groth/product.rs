//! Product argument (BG12, "product argument"; SP `GenProductArgument` /
//! `VerifyProductArgument`): given `c_A_i = com(a_i; r_i)`, `i = 1..m`, and
//! a public `b`, prove `prod_(i,l) a_(i,l) = b`.
//!
//! For `m >= 2` the prover commits to the entry-wise product
//! `b_vec = a_1 o ... o a_m` (`c_b = com(b_vec; s)`), and gives a Hadamard
//! argument (`b_vec` is that product) and a single value product argument
//! (`prod_l b_vec_l = b`); for `m = 1` only the single value product argument
//! on `c_A_1`.

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;

use super::hadamard::{self, HadamardProof};
use super::single_value_product::{self as svp, SvpProof};
use super::{append_pts, Batch, CommitmentKey, Pt, Rd};
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::DecodeError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProductProof {
    /// `c_b` and the Hadamard argument (only for `m >= 2`).
    pub(crate) hadamard: Option<(Pt, HadamardProof)>,
    pub(crate) svp: SvpProof,
}

impl ProductProof {
    pub(crate) fn counts(m: usize, n: usize) -> (usize, usize) {
        let (sp, ss) = SvpProof::counts(n);
        if m >= 2 {
            let (hp, hs) = HadamardProof::counts(m, n);
            (1 + hp + sp, hs + ss)
        } else {
            (sp, ss)
        }
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        if let Some((c, h)) = &self.hadamard {
            out.extend_from_slice(c.c.as_bytes());
            h.write(out);
        }
        self.svp.write(out);
    }

    pub(crate) fn read(rd: &mut Rd, m: usize, n: usize) -> Result<Self, DecodeError> {
        let hadamard = if m >= 2 {
            let c = rd.pt()?;
            Some((c, HadamardProof::read(rd, m, n)?))
        } else {
            None
        };
        Ok(ProductProof {
            hadamard,
            svp: SvpProof::read(rd, n)?,
        })
    }
}

/// Prove `prod a = b` for the columns `a` with randomness `r`.
pub(crate) fn prove(
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    a: &[Vec<Scalar>],
    r: &[Scalar],
    rng: &mut ChaCha20Rng,
) -> ProductProof {
    if a.len() == 1 {
        return ProductProof {
            hadamard: None,
            svp: svp::prove(ck, tr, &a[0], r[0], rng),
        };
    }
    let n = a[0].len();
    let mut bvec = a[0].clone();
    for col in &a[1..] {
        for (o, v) in bvec.iter_mut().zip(col) {
            *o *= v;
        }
    }
    let s = Scalar::random(rng);
    let c_b = Pt::new(ck.commit(&bvec, &s));
    append_pts(tr, b"product/c_b", std::slice::from_ref(&c_b));
    let h = hadamard::prove(ck, tr, a, r, s, rng);
    debug_assert_eq!(bvec.len(), n);
    let svp = svp::prove(ck, tr, &bvec, s, rng);
    ProductProof {
        hadamard: Some((c_b, h)),
        svp,
    }
}

/// Verify `prod = b` for the commitments `c_a`.
pub(crate) fn verify(
    batch: &mut Batch,
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    c_a: &[RistrettoPoint],
    b: Scalar,
    n: usize,
    p: &ProductProof,
) -> Result<(), ShuffleError> {
    match (&p.hadamard, c_a.len()) {
        (None, 1) => svp::verify(batch, tr, &c_a[0], b, n, &p.svp),
        (Some((c_b, h)), m) if m >= 2 => {
            append_pts(tr, b"product/c_b", std::slice::from_ref(c_b));
            hadamard::verify(batch, ck, tr, c_a, &c_b.p, n, h)?;
            svp::verify(batch, tr, &c_b.p, b, n, &p.svp)
        }
        _ => Err(ShuffleError::VerificationFailed),
    }
}
