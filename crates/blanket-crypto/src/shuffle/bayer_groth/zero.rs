//! Zero argument (BG12, "zero argument"; SP `GenZeroArgument` /
//! `VerifyZeroArgument`): given commitments `c_A_i = com(a_i; r_i)` and
//! `c_B_i = com(b_i; s_i)`, `i = 1..m`, prove `sum_i a_i *_y b_i = 0` for the
//! bilinear map `a *_y b = sum_l a_l b_l y^l` (BG12, Hadamard product argument).
//!
//! Indexing (blanket's, equivalent to the paper's up to renaming): the
//! prover adds a random `a_0` in front of the `a`s and a random `b_(m+1)`
//! behind the `b`s; with `a(X) = sum_(i=0..m) X^i a_i` and
//! `b(X) = sum_(j=1..m+1) X^(m+1-j) b_j`, the coefficient `d_k` of `X^k` in
//! `a(X) *_y b(X)` (`k = 0..2m`) is `sum_(i + m + 1 - j = k) a_i *_y b_j`,
//! and `d_(m+1) = sum_i a_i *_y b_i = 0` is the statement.

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use super::{append_pts, combine, powers, pts, put_pts, put_scalars, Batch, CommitmentKey, Pt, Rd};
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::DecodeError;

/// `(c_A_0, c_B_(m+1), c_D_k for k != m+1, a', b', r', s', t')`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ZeroProof {
    pub(crate) c_a0: Pt,
    pub(crate) c_bm1: Pt,
    pub(crate) c_d: Vec<Pt>, // 2m points: k = 0..2m without m+1
    pub(crate) a: Vec<Scalar>,
    pub(crate) b: Vec<Scalar>,
    pub(crate) r: Scalar,
    pub(crate) s: Scalar,
    pub(crate) t: Scalar,
}

impl ZeroProof {
    pub(crate) fn counts(m: usize, n: usize) -> (usize, usize) {
        (2 + 2 * m, 2 * n + 3)
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        put_pts(out, &[self.c_a0, self.c_bm1]);
        put_pts(out, &self.c_d);
        put_scalars(out, &self.a);
        put_scalars(out, &self.b);
        put_scalars(out, &[self.r, self.s, self.t]);
    }

    pub(crate) fn read(rd: &mut Rd, m: usize, n: usize) -> Result<Self, DecodeError> {
        Ok(ZeroProof {
            c_a0: rd.pt()?,
            c_bm1: rd.pt()?,
            c_d: rd.pts(2 * m)?,
            a: rd.scs(n)?,
            b: rd.scs(n)?,
            r: rd.sc()?,
            s: rd.sc()?,
            t: rd.sc()?,
        })
    }
}

/// `a *_y b` with `ys = [y, y^2, ..., y^n]`.
fn star(a: &[Scalar], b_y: &[Scalar]) -> Scalar {
    a.iter().zip(b_y).map(|(x, z)| x * z).sum()
}

/// Prove `sum_i a_i *_y b_i = 0` (the caller has absorbed the statement's
/// commitments or what they derive from).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prove(
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    a: &[Vec<Scalar>],
    ra: &[Scalar],
    b: &[Vec<Scalar>],
    sb: &[Scalar],
    y: Scalar,
    rng: &mut ChaCha20Rng,
) -> ZeroProof {
    let m = a.len();
    let n = a[0].len();
    // Step 1: a_0, b_(m+1), r_0, s_(m+1) random.
    let a0: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let bm1: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let r0 = Scalar::random(rng);
    let sm1 = Scalar::random(rng);
    // All a's (index 0..m) and all b's (index 1..m+1, stored at j - 1).
    let aa: Vec<&[Scalar]> = std::iter::once(&a0[..])
        .chain(a.iter().map(|v| &v[..]))
        .collect();
    let bb: Vec<&[Scalar]> = b
        .iter()
        .map(|v| &v[..])
        .chain(std::iter::once(&bm1[..]))
        .collect();
    // b_j weighted by y^l once, so each *_y is a plain dot product.
    let ys: Vec<Scalar> = powers(y, n + 1)[1..].to_vec();
    let bby: Vec<Vec<Scalar>> = bb
        .par_iter()
        .map(|v| v.iter().zip(&ys).map(|(x, z)| x * z).collect())
        .collect();
    // Step 2: d_k = sum_(i + m + 1 - j = k) a_i *_y b_j, k = 0..2m.
    let d: Vec<Scalar> = (0..=2 * m)
        .into_par_iter()
        .map(|k| {
            let mut acc = Scalar::ZERO;
            for (i, ai) in aa.iter().enumerate() {
                // j = i + m + 1 - k in 1..=m+1
                let j = (i + m + 1) as isize - k as isize;
                if (1..=(m + 1) as isize).contains(&j) {
                    acc += star(ai, &bby[j as usize - 1]);
                }
            }
            acc
        })
        .collect();
    debug_assert_eq!(d[m + 1], Scalar::ZERO);
    // Step 3: t_k random, t_(m+1) = 0; c_D_k = com(d_k; t_k).
    let t: Vec<Scalar> = (0..=2 * m)
        .map(|k| {
            if k == m + 1 {
                Scalar::ZERO
            } else {
                Scalar::random(rng)
            }
        })
        .collect();
    let mut first = vec![ck.commit(&a0, &r0), ck.commit(&bm1, &sm1)];
    let cds: Vec<RistrettoPoint> = (0..=2 * m)
        .into_par_iter()
        .filter(|&k| k != m + 1)
        .map(|k| ck.commit_scalar(&d[k], &t[k]))
        .collect();
    first.extend(cds);
    let all = pts(first);
    append_pts(tr, b"zero/commitments", &all);
    // Step 4: challenge x.
    let x = tr.challenge_scalar(b"zero/x");
    let xs = powers(x, 2 * m + 1);
    // Step 5: a' = sum x^i a_i, r' = sum x^i r_i, b' = sum x^(m+1-j) b_j,
    // s' = sum x^(m+1-j) s_j, t' = sum x^k t_k.
    let mut a_resp = vec![Scalar::ZERO; n];
    let mut b_resp = vec![Scalar::ZERO; n];
    for (i, ai) in aa.iter().enumerate() {
        for (o, v) in a_resp.iter_mut().zip(ai.iter()) {
            *o += xs[i] * v;
        }
    }
    for (jm1, bj) in bb.iter().enumerate() {
        let e = xs[m - jm1]; // m + 1 - j with j = jm1 + 1
        for (o, v) in b_resp.iter_mut().zip(bj.iter()) {
            *o += e * v;
        }
    }
    let ras: Scalar = std::iter::once(&r0)
        .chain(ra)
        .enumerate()
        .map(|(i, r)| xs[i] * r)
        .sum();
    let sbs: Scalar = sb
        .iter()
        .chain(std::iter::once(&sm1))
        .enumerate()
        .map(|(jm1, s)| xs[m - jm1] * s)
        .sum();
    let ts: Scalar = t.iter().zip(&xs).map(|(t, x)| t * x).sum();
    ZeroProof {
        c_a0: all[0],
        c_bm1: all[1],
        c_d: all[2..].to_vec(),
        a: a_resp,
        b: b_resp,
        r: ras,
        s: sbs,
        t: ts,
    }
}

/// Verify (BG12, zero argument, verification): with the challenge `x`,
/// `sum_(i=0..m) x^i c_A_i = com(a'; r')`,
/// `sum_(j=1..m+1) x^(m+1-j) c_B_j = com(b'; s')`,
/// `sum_(k=0..2m) x^k c_D_k = com(a' *_y b'; t')` with `c_D_(m+1) = 0`
/// (the identity: `com(0; 0)`, never sent).
pub(crate) fn verify(
    batch: &mut Batch,
    tr: &mut ProofTranscript,
    c_a: &[RistrettoPoint],
    c_b: &[RistrettoPoint],
    y: Scalar,
    n: usize,
    p: &ZeroProof,
) -> Result<(), ShuffleError> {
    let m = c_a.len();
    if c_b.len() != m || p.c_d.len() != 2 * m || p.a.len() != n || p.b.len() != n {
        return Err(ShuffleError::VerificationFailed);
    }
    let mut all = vec![p.c_a0, p.c_bm1];
    all.extend_from_slice(&p.c_d);
    append_pts(tr, b"zero/commitments", &all);
    let x = tr.challenge_scalar(b"zero/x");
    let xs = powers(x, 2 * m + 1);
    // sum x^i c_A_i - com(a'; r') = 0
    let w = batch.weight();
    batch.point(w, p.c_a0.p);
    let lhs = combine(&xs[1..=m], c_a);
    batch.point(w, lhs);
    batch.commit(-w, &p.a, p.r);
    // sum x^(m+1-j) c_B_j - com(b'; s') = 0
    let w = batch.weight();
    let e: Vec<Scalar> = (1..=m).map(|j| xs[m + 1 - j]).collect();
    batch.point(w, combine(&e, c_b));
    batch.point(w, p.c_bm1.p);
    batch.commit(-w, &p.b, p.s);
    // sum x^k c_D_k - com(a' *_y b'; t') = 0
    let w = batch.weight();
    let ek: Vec<Scalar> = (0..=2 * m).filter(|&k| k != m + 1).map(|k| xs[k]).collect();
    let cd: Vec<RistrettoPoint> = p.c_d.iter().map(|q| q.p).collect();
    batch.point(w, combine(&ek, &cd));
    let ys = powers(y, n + 1);
    let ab: Scalar = (0..n).map(|l| p.a[l] * p.b[l] * ys[l + 1]).sum();
    batch.commit(-w, &[ab], p.t);
    Ok(())
}
