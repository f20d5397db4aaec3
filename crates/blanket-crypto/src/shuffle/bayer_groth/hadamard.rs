//! Hadamard product argument (BG12, "Hadamard product argument"; SP `GenHadamardArgument` /
//! `VerifyHadamardArgument`): given `c_A_i = com(a_i; r_i)`, `i = 1..m`
//! (`m >= 2`), and `c_b = com(b; s)`, prove `b = a_1 o a_2 o ... o a_m`
//! (entry-wise product).
//!
//! The prover commits to the partial products `b_1 = a_1`,
//! `b_i = b_(i-1) o a_i`, `b_m = b` (`c_B_1 = c_A_1` and `c_B_m = c_b` are
//! not sent), draws `x, y`, and runs the zero argument on
//! `sum_(i=1..m-1) a_(i+1) *_y d_i - 1 *_y d = 0` with `d_i = x^i b_i`
//! (`c_D_i = x^i c_B_i`) and `d = sum_(i=1..m-1) x^i b_(i+1)`
//! (`c_D = sum x^i c_B_(i+1)`), and `c_(-1) = com(-1, ..., -1; 0)`. The
//! identity holds because `a_(i+1) *_y b_i = 1 *_y b_(i+1)`.

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;

use super::zero::{self, ZeroProof};
use super::{append_pts, combine, powers, pts, put_pts, Batch, CommitmentKey, Pt, Rd};
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::DecodeError;

/// `(c_B_2..c_B_(m-1), zero argument)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HadamardProof {
    pub(crate) c_b: Vec<Pt>,
    pub(crate) zero: ZeroProof,
}

impl HadamardProof {
    pub(crate) fn counts(m: usize, n: usize) -> (usize, usize) {
        let (zp, zs) = ZeroProof::counts(m, n);
        (m - 2 + zp, zs)
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        put_pts(out, &self.c_b);
        self.zero.write(out);
    }

    pub(crate) fn read(rd: &mut Rd, m: usize, n: usize) -> Result<Self, DecodeError> {
        Ok(HadamardProof {
            c_b: rd.pts(m - 2)?,
            zero: ZeroProof::read(rd, m, n)?,
        })
    }
}

/// Prove `b = a_1 o ... o a_m` for `c_A_i = com(a_i; r_i)`, `c_b = com(b; s)`.
pub(crate) fn prove(
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    a: &[Vec<Scalar>],
    r: &[Scalar],
    s: Scalar,
    rng: &mut ChaCha20Rng,
) -> HadamardProof {
    let m = a.len();
    let n = a[0].len();
    debug_assert!(m >= 2);
    // Step 1: partial products b_i and their randomness (s_1 = r_1, s_m = s,
    // s_2..s_(m-1) random).
    let mut b: Vec<Vec<Scalar>> = Vec::with_capacity(m);
    b.push(a[0].clone());
    for i in 1..m {
        let next = b[i - 1].iter().zip(&a[i]).map(|(x, y)| x * y).collect();
        b.push(next);
    }
    let mut sb: Vec<Scalar> = (0..m).map(|_| Scalar::random(rng)).collect();
    sb[0] = r[0];
    sb[m - 1] = s;
    let c_mid = pts(ck.commit_all(&b[1..m - 1], &sb[1..m - 1]));
    append_pts(tr, b"hadamard/c_B", &c_mid);
    // Step 2: challenges x, y.
    let x = tr.challenge_scalar(b"hadamard/x");
    let y = tr.challenge_scalar(b"hadamard/y");
    let xs = powers(x, m);
    // Step 3: zero argument on (a_2..a_m, -1) and (d_1..d_(m-1), d).
    let mut za: Vec<Vec<Scalar>> = a[1..].to_vec();
    za.push(vec![-Scalar::ONE; n]);
    let mut zra: Vec<Scalar> = r[1..].to_vec();
    zra.push(Scalar::ZERO);
    let mut zb: Vec<Vec<Scalar>> = (1..m)
        .map(|i| b[i - 1].iter().map(|v| xs[i] * v).collect())
        .collect();
    let mut zsb: Vec<Scalar> = (1..m).map(|i| xs[i] * sb[i - 1]).collect();
    let mut d = vec![Scalar::ZERO; n];
    let mut t = Scalar::ZERO;
    for i in 1..m {
        for (o, v) in d.iter_mut().zip(&b[i]) {
            *o += xs[i] * v;
        }
        t += xs[i] * sb[i];
    }
    zb.push(d);
    zsb.push(t);
    let zero = zero::prove(ck, tr, &za, &zra, &zb, &zsb, y, rng);
    HadamardProof { c_b: c_mid, zero }
}

/// Verify: rebuild `c_B_1 = c_A_1`, `c_B_m = c_b`, `c_D_i = x^i c_B_i`,
/// `c_D = sum x^i c_B_(i+1)`, `c_(-1) = -sum_l G_l`, and verify the zero
/// argument on them.
pub(crate) fn verify(
    batch: &mut Batch,
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    c_a: &[RistrettoPoint],
    c_bvec: &RistrettoPoint,
    n: usize,
    p: &HadamardProof,
) -> Result<(), ShuffleError> {
    let m = c_a.len();
    if m < 2 || p.c_b.len() != m - 2 {
        return Err(ShuffleError::VerificationFailed);
    }
    append_pts(tr, b"hadamard/c_B", &p.c_b);
    let x = tr.challenge_scalar(b"hadamard/x");
    let y = tr.challenge_scalar(b"hadamard/y");
    let xs = powers(x, m);
    let mut cb: Vec<RistrettoPoint> = Vec::with_capacity(m);
    cb.push(c_a[0]);
    cb.extend(p.c_b.iter().map(|q| q.p));
    cb.push(*c_bvec);
    let mut za: Vec<RistrettoPoint> = c_a[1..].to_vec();
    za.push(-ck.sum_gs(n));
    let mut zb: Vec<RistrettoPoint> = (1..m).map(|i| xs[i] * cb[i - 1]).collect();
    zb.push(combine(&xs[1..m], &cb[1..m]));
    zero::verify(batch, tr, &za, &zb, y, n, &p.zero)
}
