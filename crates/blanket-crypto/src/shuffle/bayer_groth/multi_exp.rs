//! Multi-exponentiation argument (BG12, "multi-exponentiation argument"; SP
//! `GenMultiExponentiationArgument` / `VerifyMultiExponentiationArgument`).
//!
//! Statement: ciphertext rows `C_1..C_m` (each `n` ciphertexts), a
//! ciphertext `C`, commitments `c_A_i = com(a_i; r_i)` and a commitment
//! `c_b = com(b; s)` to one value; relation
//! `C = Enc(b G; rho) + sum_i C_i^(a_i)`, where `C_i^(a) = sum_l a_l C_(i,l)`
//! and `Enc(M; rho) = (rho G, M + rho pk)`. The shuffle argument uses it with
//! `b = 0`, `s = 0` (`c_b` the identity); the generalisation to a committed
//! `b` is what the row reduction below produces.
//!
//! Row reduction (after BG12, "trading computation for interaction";
//! blanket applies it with the factors of [`super::Arrangement`]): with
//! `mu | m`, rows and exponents are grouped in `m / mu` blocks of `mu`. The
//! prover sends, for `k = 0..2mu-2`, `k != mu-1`,
//! `E_k = Enc(b_k G; tau_k) + sum_blocks sum_(i,j: mu-1-i+j = k) C_(blk,i)^(a_(blk,j))`
//! and `c_b_k = com(b_k; s_k)`; `E_(mu-1) = C` and `c_b_(mu-1) = c_b`. After
//! the challenge `x`, the statement becomes
//! `C'' = sum_k x^k E_k`, `C''_blk = sum_i x^(mu-1-i) C_(blk,i)`,
//! `a''_blk = sum_j x^j a_(blk,j)`, `c_A''_blk = sum_j x^j c_A_(blk,j)`,
//! `c_b'' = sum_k x^k c_b_k`, with `m / mu` rows, since
//! `sum_blk C''_blk^(a''_blk) = sum_k x^k (E_k - Enc(b_k G; tau_k))` (the
//! diagonal `i = j` gives the coefficient `x^(mu-1)`).
//!
//! Base argument (BG12, multi-exponentiation argument, `m` rows left): random `a_0`, `r_0`, and
//! for `k = 0..2m-1`, `k != m`, random `b_k, s_k, tau_k`;
//! `E_k = Enc(b_k G; tau_k) + sum_(i=1..m, j=0..m, j = k-m+i) C_i^(a_j)`,
//! `E_m = C`, `c_B_m = c_b`; challenge `x`; responses
//! `a = sum_j x^j a_j`, `r = sum_j x^j r_j`, `b = sum_k x^k b_k`,
//! `s = sum_k x^k s_k`, `tau = sum_k x^k tau_k`.
//!
//! Rows are never materialised: a reduced row is a list of
//! `(original row, coefficient)` and every `C_i^(a)` is one variable-time
//! multi-scalar multiplication over the original ciphertexts.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE as G_TABLE;
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use super::{append_pts, combine, powers, pts, put_pts, put_scalars, Batch, CommitmentKey, Pt, Rd};
use crate::elgamal::{Ciphertext, PublicKey};
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::DecodeError;

/// A (reduced) row: `sum coef * C_(orig)`.
type Row = Vec<(usize, Scalar)>;

/// One row reduction: `E_k` (two points each) and `c_b_k`, `k != mu-1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reduction {
    pub(crate) e: Vec<Pt>,
    pub(crate) c_b: Vec<Pt>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MultiExpProof {
    pub(crate) reductions: Vec<Reduction>,
    pub(crate) c_a0: Pt,
    /// `c_B_k`, `k = 0..2m-1`, `k != m`.
    pub(crate) c_b: Vec<Pt>,
    /// `E_k` (c1, c2), `k = 0..2m-1`, `k != m`.
    pub(crate) e: Vec<Pt>,
    pub(crate) a: Vec<Scalar>,
    pub(crate) r: Scalar,
    pub(crate) b: Scalar,
    pub(crate) s: Scalar,
    pub(crate) tau: Scalar,
}

impl MultiExpProof {
    pub(crate) fn counts(factors: &[usize], base_m: usize, n: usize) -> (usize, usize) {
        let red: usize = factors.iter().map(|mu| 3 * (2 * mu - 2)).sum();
        (red + 1 + 3 * (2 * base_m - 1), n + 4)
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        for red in &self.reductions {
            put_pts(out, &red.e);
            put_pts(out, &red.c_b);
        }
        put_pts(out, std::slice::from_ref(&self.c_a0));
        put_pts(out, &self.c_b);
        put_pts(out, &self.e);
        put_scalars(out, &self.a);
        put_scalars(out, &[self.r, self.b, self.s, self.tau]);
    }

    pub(crate) fn read(
        rd: &mut Rd,
        factors: &[usize],
        base_m: usize,
        n: usize,
    ) -> Result<Self, DecodeError> {
        let mut reductions = Vec::with_capacity(factors.len());
        for &mu in factors {
            reductions.push(Reduction {
                e: rd.pts(2 * (2 * mu - 2))?,
                c_b: rd.pts(2 * mu - 2)?,
            });
        }
        Ok(MultiExpProof {
            reductions,
            c_a0: rd.pt()?,
            c_b: rd.pts(2 * base_m - 1)?,
            e: rd.pts(2 * (2 * base_m - 1))?,
            a: rd.scs(n)?,
            r: rd.sc()?,
            b: rd.sc()?,
            s: rd.sc()?,
            tau: rd.sc()?,
        })
    }
}

/// `sum over pairs of row^(a)` as a ciphertext, one variable-time
/// multi-scalar multiplication per component. Ciphertexts past `out.len()`
/// are padding (the identity) and are skipped.
fn diag(
    out: &[Ciphertext],
    n: usize,
    pairs: &[(&Row, &[Scalar])],
) -> (RistrettoPoint, RistrettoPoint) {
    let mut sc = Vec::new();
    let mut p1 = Vec::new();
    let mut p2 = Vec::new();
    for (row, a) in pairs {
        for &(orig, coef) in row.iter() {
            for (l, al) in a.iter().enumerate() {
                let q = orig * n + l;
                if q < out.len() {
                    sc.push(coef * al);
                    p1.push(out[q].c1);
                    p2.push(out[q].c2);
                }
            }
        }
    }
    (
        crate::msm::vartime_msm(&sc, &p1),
        crate::msm::vartime_msm(&sc, &p2),
    )
}

/// `Enc(b G; tau) + (d1, d2)`.
fn enc_plus(
    pk: &PublicKey,
    b: &Scalar,
    tau: &Scalar,
    d: (RistrettoPoint, RistrettoPoint),
) -> [RistrettoPoint; 2] {
    [tau * G_TABLE + d.0, b * G_TABLE + tau * pk.point() + d.1]
}

fn lin(xs: &[Scalar], vs: &[&Vec<Scalar>]) -> Vec<Scalar> {
    let n = vs[0].len();
    let mut o = vec![Scalar::ZERO; n];
    for (x, v) in xs.iter().zip(vs) {
        for (oo, vv) in o.iter_mut().zip(v.iter()) {
            *oo += x * vv;
        }
    }
    o
}

/// Prove `sum_x in_k C_k = Enc(0; rho) + sum_i C'_i^(a_i)` for the rows of
/// `out` (padded length `a.len() * n`), with `c_A_i = com(a_i; r_i)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prove(
    ck: &CommitmentKey,
    tr: &mut ProofTranscript,
    pk: &PublicKey,
    out: &[Ciphertext],
    n: usize,
    a: Vec<Vec<Scalar>>,
    r: Vec<Scalar>,
    rho: Scalar,
    factors: &[usize],
    rng: &mut ChaCha20Rng,
) -> MultiExpProof {
    let mut rows: Vec<Row> = (0..a.len()).map(|i| vec![(i, Scalar::ONE)]).collect();
    let (mut a, mut r, mut b, mut s, mut rho) = (a, r, Scalar::ZERO, Scalar::ZERO, rho);
    let mut reductions = Vec::with_capacity(factors.len());
    for &mu in factors {
        let blocks = rows.len() / mu;
        let ks: Vec<usize> = (0..2 * mu - 1).filter(|&k| k != mu - 1).collect();
        let mut bk = vec![b; 2 * mu - 1];
        let mut sk = vec![s; 2 * mu - 1];
        let mut tk = vec![rho; 2 * mu - 1];
        for &k in &ks {
            bk[k] = Scalar::random(rng);
            sk[k] = Scalar::random(rng);
            tk[k] = Scalar::random(rng);
        }
        let e: Vec<[RistrettoPoint; 2]> = ks
            .par_iter()
            .map(|&k| {
                let mut pairs: Vec<(&Row, &[Scalar])> = Vec::new();
                for blk in 0..blocks {
                    for i0 in 0..mu {
                        let j0 = (k + i0) as isize - (mu as isize - 1);
                        if (0..mu as isize).contains(&j0) {
                            pairs.push((&rows[blk * mu + i0], &a[blk * mu + j0 as usize]));
                        }
                    }
                }
                enc_plus(pk, &bk[k], &tk[k], diag(out, n, &pairs))
            })
            .collect();
        let e = pts(e.into_iter().flatten().collect());
        let c_b = pts(ks
            .iter()
            .map(|&k| ck.commit_scalar(&bk[k], &sk[k]))
            .collect());
        append_pts(tr, b"multi-exp/reduction/E", &e);
        append_pts(tr, b"multi-exp/reduction/c_b", &c_b);
        let x = tr.challenge_scalar(b"multi-exp/reduction/x");
        let xs = powers(x, 2 * mu - 1);
        let mut new_rows = Vec::with_capacity(blocks);
        let mut new_a = Vec::with_capacity(blocks);
        let mut new_r = Vec::with_capacity(blocks);
        for blk in 0..blocks {
            let mut row = Row::new();
            for i0 in 0..mu {
                let f = xs[mu - 1 - i0];
                row.extend(rows[blk * mu + i0].iter().map(|&(o, c)| (o, c * f)));
            }
            new_rows.push(row);
            let cols: Vec<&Vec<Scalar>> = (0..mu).map(|j0| &a[blk * mu + j0]).collect();
            new_a.push(lin(&xs[..mu], &cols));
            new_r.push((0..mu).map(|j0| xs[j0] * r[blk * mu + j0]).sum());
        }
        b = bk.iter().zip(&xs).map(|(v, x)| v * x).sum();
        s = sk.iter().zip(&xs).map(|(v, x)| v * x).sum();
        rho = tk.iter().zip(&xs).map(|(v, x)| v * x).sum();
        rows = new_rows;
        a = new_a;
        r = new_r;
        reductions.push(Reduction { e, c_b });
    }

    // Base argument with m rows.
    let m = rows.len();
    let a0: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let r0 = Scalar::random(rng);
    let ks: Vec<usize> = (0..2 * m).filter(|&k| k != m).collect();
    let mut bk = vec![b; 2 * m];
    let mut sk = vec![s; 2 * m];
    let mut tk = vec![rho; 2 * m];
    for &k in &ks {
        bk[k] = Scalar::random(rng);
        sk[k] = Scalar::random(rng);
        tk[k] = Scalar::random(rng);
    }
    let aa: Vec<&Vec<Scalar>> = std::iter::once(&a0).chain(a.iter()).collect();
    let e: Vec<[RistrettoPoint; 2]> = ks
        .par_iter()
        .map(|&k| {
            let mut pairs: Vec<(&Row, &[Scalar])> = Vec::new();
            for i in 1..=m {
                let j = (k + i) as isize - m as isize;
                if (0..=m as isize).contains(&j) {
                    pairs.push((&rows[i - 1], &aa[j as usize][..]));
                }
            }
            enc_plus(pk, &bk[k], &tk[k], diag(out, n, &pairs))
        })
        .collect();
    let c_a0 = Pt::new(ck.commit(&a0, &r0));
    let c_b = pts(ks
        .iter()
        .map(|&k| ck.commit_scalar(&bk[k], &sk[k]))
        .collect());
    let e = pts(e.into_iter().flatten().collect());
    append_pts(tr, b"multi-exp/c_A0", std::slice::from_ref(&c_a0));
    append_pts(tr, b"multi-exp/c_B", &c_b);
    append_pts(tr, b"multi-exp/E", &e);
    let x = tr.challenge_scalar(b"multi-exp/x");
    let xs = powers(x, 2 * m);
    let a_resp = lin(&xs[..=m], &aa);
    let r_resp = std::iter::once(&r0)
        .chain(r.iter())
        .zip(&xs)
        .map(|(v, x)| v * x)
        .sum();
    let dot = |v: &[Scalar]| -> Scalar { v.iter().zip(&xs).map(|(v, x)| v * x).sum() };
    MultiExpProof {
        reductions,
        c_a0,
        c_b,
        e,
        a: a_resp,
        r: r_resp,
        b: dot(&bk),
        s: dot(&sk),
        tau: dot(&tk),
    }
}

/// Verify for the statement `C = sum_k x_in[k] input_k` (never computed:
/// its terms go to the batch), rows of `output` (padded to `c_a.len() * n`
/// with the identity), commitments `c_a`, `b = 0`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn verify(
    batch: &mut Batch,
    tr: &mut ProofTranscript,
    input: &[Ciphertext],
    x_in: &[Scalar],
    output: &[Ciphertext],
    n: usize,
    c_a: &[RistrettoPoint],
    factors: &[usize],
    p: &MultiExpProof,
) -> Result<(), ShuffleError> {
    if p.reductions.len() != factors.len() || p.a.len() != n {
        return Err(ShuffleError::VerificationFailed);
    }
    let mut rows: Vec<Row> = (0..c_a.len()).map(|i| vec![(i, Scalar::ONE)]).collect();
    let mut c_a: Vec<RistrettoPoint> = c_a.to_vec();
    let mut c_b = RistrettoPoint::identity();
    // The target is lambda * C + (t1, t2).
    let mut lambda = Scalar::ONE;
    let mut t = [RistrettoPoint::identity(); 2];
    for (&mu, red) in factors.iter().zip(&p.reductions) {
        if red.e.len() != 2 * (2 * mu - 2)
            || red.c_b.len() != 2 * mu - 2
            || !rows.len().is_multiple_of(mu)
        {
            return Err(ShuffleError::VerificationFailed);
        }
        append_pts(tr, b"multi-exp/reduction/E", &red.e);
        append_pts(tr, b"multi-exp/reduction/c_b", &red.c_b);
        let x = tr.challenge_scalar(b"multi-exp/reduction/x");
        let xs = powers(x, 2 * mu - 1);
        let ks: Vec<usize> = (0..2 * mu - 1).filter(|&k| k != mu - 1).collect();
        let xk: Vec<Scalar> = ks.iter().map(|&k| xs[k]).collect();
        let e1: Vec<RistrettoPoint> = red.e.iter().step_by(2).map(|q| q.p).collect();
        let e2: Vec<RistrettoPoint> = red.e.iter().skip(1).step_by(2).map(|q| q.p).collect();
        let cb: Vec<RistrettoPoint> = red.c_b.iter().map(|q| q.p).collect();
        let f = xs[mu - 1];
        lambda *= f;
        t = [f * t[0] + combine(&xk, &e1), f * t[1] + combine(&xk, &e2)];
        c_b = f * c_b + combine(&xk, &cb);
        let blocks = rows.len() / mu;
        let mut new_rows = Vec::with_capacity(blocks);
        let mut new_ca = Vec::with_capacity(blocks);
        for blk in 0..blocks {
            let mut row = Row::new();
            for i0 in 0..mu {
                let g = xs[mu - 1 - i0];
                row.extend(rows[blk * mu + i0].iter().map(|&(o, c)| (o, c * g)));
            }
            new_rows.push(row);
            new_ca.push(combine(&xs[..mu], &c_a[blk * mu..(blk + 1) * mu]));
        }
        rows = new_rows;
        c_a = new_ca;
    }
    let m = rows.len();
    if p.c_b.len() != 2 * m - 1 || p.e.len() != 2 * (2 * m - 1) {
        return Err(ShuffleError::VerificationFailed);
    }
    append_pts(tr, b"multi-exp/c_A0", std::slice::from_ref(&p.c_a0));
    append_pts(tr, b"multi-exp/c_B", &p.c_b);
    append_pts(tr, b"multi-exp/E", &p.e);
    let x = tr.challenge_scalar(b"multi-exp/x");
    let xs = powers(x, 2 * m);
    let ks: Vec<usize> = (0..2 * m).filter(|&k| k != m).collect();

    // c_A0 + sum_i x^i c_A_i = com(a; r)
    let w = batch.weight();
    batch.point(w, p.c_a0.p);
    for (i, ca) in c_a.iter().enumerate() {
        batch.point(w * xs[i + 1], *ca);
    }
    batch.commit(-w, &p.a, p.r);
    // sum_k x^k c_B_k = com(b; s), c_B_m = c_b
    let w = batch.weight();
    for (&k, cb) in ks.iter().zip(&p.c_b) {
        batch.point(w * xs[k], cb.p);
    }
    batch.point(w * xs[m], c_b);
    batch.commit(-w, &[p.b], p.s);
    // sum_k x^k E_k = Enc(b G; tau) + sum_i x^(m-i) C_i^(a), E_m = target.
    let w1 = batch.weight();
    let w2 = batch.weight();
    for (idx, &k) in ks.iter().enumerate() {
        batch.point(w1 * xs[k], p.e[2 * idx].p);
        batch.point(w2 * xs[k], p.e[2 * idx + 1].p);
    }
    batch.point(w1 * xs[m], t[0]);
    batch.point(w2 * xs[m], t[1]);
    let lm1 = w1 * xs[m] * lambda;
    let lm2 = w2 * xs[m] * lambda;
    for (ct, xi) in input.iter().zip(x_in) {
        batch.point(lm1 * xi, ct.c1);
        batch.point(lm2 * xi, ct.c2);
    }
    batch.base(-(w1 * p.tau) - w2 * p.b);
    batch.pk(-(w2 * p.tau));
    for (i, row) in rows.iter().enumerate() {
        let f = xs[m - 1 - i]; // x^(m - i) for 1-based i
        for &(orig, coef) in row {
            let kappa = f * coef;
            for (l, al) in p.a.iter().enumerate() {
                let q = orig * n + l;
                if q < output.len() {
                    let sc = kappa * al;
                    batch.point(-(w1 * sc), output[q].c1);
                    batch.point(-(w2 * sc), output[q].c2);
                }
            }
        }
    }
    Ok(())
}
