//! Single value product argument (BG12, "single value product argument"; SP
//! `GenSingleValueProductArgument` / `VerifySingleValueProductArgument`):
//! given `c_a = com(a; r)` with `a` of length `n >= 2` and a public `b`,
//! prove `prod_l a_l = b`.

use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;

use super::{append_pts, pts, put_pts, put_scalars, Batch, CommitmentKey, Pt, Rd};
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::DecodeError;

/// `(c_d, c_delta, c_Delta, a~, b~, r~, s~)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SvpProof {
    pub(crate) c: Vec<Pt>, // c_d, c_delta, c_Delta
    pub(crate) a_t: Vec<Scalar>,
    pub(crate) b_t: Vec<Scalar>,
    pub(crate) r_t: Scalar,
    pub(crate) s_t: Scalar,
}

impl SvpProof {
    pub(crate) fn counts(n: usize) -> (usize, usize) {
        (3, 2 * n + 2)
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        put_pts(out, &self.c);
        put_scalars(out, &self.a_t);
        put_scalars(out, &self.b_t);
        put_scalars(out, &[self.r_t, self.s_t]);
    }

    pub(crate) fn read(rd: &mut Rd, n: usize) -> Result<Self, DecodeError> {
        Ok(SvpProof {
            c: rd.pts(3)?,
            a_t: rd.scs(n)?,
            b_t: rd.scs(n)?,
            r_t: rd.sc()?,
            s_t: rd.sc()?,
        })
    }
}

fn random_vec(rng: &mut ChaCha20Rng, k: usize) -> Vec<Scalar> {
    (0..k).map(|_| Scalar::random(rng)).collect()
}

/// Prove `prod a = b` for `c_a = com(a; r)` (the caller has absorbed `c_a`
/// and `b`, or values they are derived from, into `tr`).
pub(crate) fn prove(
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    a: &[Scalar],
    r: Scalar,
    rng: &mut ChaCha20Rng,
) -> SvpProof {
    let n = a.len();
    debug_assert!(n >= 2);
    // Partial products b_1 = a_1, b_k = b_(k-1) a_k.
    let mut bp = Vec::with_capacity(n);
    let mut acc = Scalar::ONE;
    for x in a {
        acc *= x;
        bp.push(acc);
    }
    // Step 1 (BG12, single value product argument): d random, r_d random; delta_1 = d_1, delta_n = 0,
    // delta_2..delta_(n-1) random; s_0, s_x random.
    let d = random_vec(rng, n);
    let r_d = Scalar::random(rng);
    let mut delta = random_vec(rng, n);
    delta[0] = d[0];
    delta[n - 1] = Scalar::ZERO;
    let s0 = Scalar::random(rng);
    let sx = Scalar::random(rng);
    // c_d = com(d; r_d)
    // c_delta = com(-delta_1 d_2, ..., -delta_(n-1) d_n; s_0)
    // c_Delta = com(delta_(k+1) - a_(k+1) delta_k - b_k d_(k+1) for k = 1..n-1; s_x)
    let v_small: Vec<Scalar> = (0..n - 1).map(|k| -(delta[k] * d[k + 1])).collect();
    let v_big: Vec<Scalar> = (0..n - 1)
        .map(|k| delta[k + 1] - a[k + 1] * delta[k] - bp[k] * d[k + 1])
        .collect();
    let c = pts(vec![
        ck.commit(&d, &r_d),
        ck.commit(&v_small, &s0),
        ck.commit(&v_big, &sx),
    ]);
    append_pts(tr, b"svp/commitments", &c);
    // Step 2: challenge x.
    let x = tr.challenge_scalar(b"svp/x");
    // Step 3: a~ = x a + d, b~ = x b + delta, r~ = x r + r_d, s~ = x s_x + s_0.
    let a_t = a.iter().zip(&d).map(|(ai, di)| x * ai + di).collect();
    let b_t = bp.iter().zip(&delta).map(|(bi, di)| x * bi + di).collect();
    SvpProof {
        c,
        a_t,
        b_t,
        r_t: x * r + r_d,
        s_t: x * sx + s0,
    }
}

/// Verify (BG12, single value product argument, verification): with the challenge `x`,
/// `x c_a + c_d = com(a~; r~)`,
/// `x c_Delta + c_delta = com(x b~_(k+1) - b~_k a~_(k+1) for k = 1..n-1; s~)`,
/// `b~_1 = a~_1` and `b~_n = x b`. The two group equations go to `batch`.
pub(crate) fn verify(
    batch: &mut Batch,
    tr: &mut ProofTranscript,
    c_a: &curve25519_dalek::ristretto::RistrettoPoint,
    b: Scalar,
    n: usize,
    p: &SvpProof,
) -> Result<(), ShuffleError> {
    if p.c.len() != 3 || p.a_t.len() != n || p.b_t.len() != n || n < 2 {
        return Err(ShuffleError::VerificationFailed);
    }
    append_pts(tr, b"svp/commitments", &p.c);
    let x = tr.challenge_scalar(b"svp/x");
    if p.b_t[0] != p.a_t[0] || p.b_t[n - 1] != x * b {
        return Err(ShuffleError::VerificationFailed);
    }
    let w = batch.weight();
    batch.point(w * x, *c_a);
    batch.point(w, p.c[0].p);
    batch.commit(-w, &p.a_t, p.r_t);
    let w = batch.weight();
    batch.point(w * x, p.c[2].p);
    batch.point(w, p.c[1].p);
    let v: Vec<Scalar> = (0..n - 1)
        .map(|k| x * p.b_t[k + 1] - p.b_t[k] * p.a_t[k + 1])
        .collect();
    batch.commit(-w, &v, p.s_t);
    Ok(())
}
