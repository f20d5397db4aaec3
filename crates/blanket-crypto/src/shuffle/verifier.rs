//! Verification (Haenni et al. Algorithm 9, `CheckProof`), batched.
//!
//! Each of the `N + 5` equations of the spec's appendix is written as
//! `RHS_k - t_k = 0`; the verifier draws weights `rho_k` (from the transcript
//! and fresh OS randomness, so the prover cannot predict them) and checks
//! `sum_k rho_k (RHS_k - t_k) = 0` with one variable-time multi-scalar
//! multiplication over the `8N + 8` points
//! `G, pk, h, t_1..t_42, h_j, c_j, c^_i, t^_i, a_j, b_j, a'_i, b'_i`.
//! A false equation survives with probability at most 1/l per attempt
//! (l ~ 2^252).
//!
//! Coefficients (c the challenge, u_j the per-position challenges,
//! u = prod u_j):
//! - G:    rho_1 s_1 + rho_2 s_2 + rho_3 s_3 - rho_42 s_4 + sum rho^_i s^_i
//! - pk:   -rho_41 s_4
//! - h:    rho_2 c u + rho^_1 s'_1           (c^_0 = h)
//! - h_j:  rho_1 c + rho_3 s'_j
//! - c_j:  -rho_1 c - rho_3 c u_j
//! - c^_i: -rho^_i c + rho^_{i+1} s'_{i+1}  (i < N);  -rho^_N c - rho_2 c (i = N)
//! - a_j:  -rho_41 c u_j;   b_j: -rho_42 c u_j
//! - a'_i: rho_41 s'_i;     b'_i: rho_42 s'_i
//! - t_k:  -rho_k;          t^_i: -rho^_i

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, IsIdentity, VartimeMultiscalarMul};
use rand_core::OsRng;
use rayon::prelude::*;

use super::proof::ShuffleProof;
use super::prover::statement_transcript;
use super::{Generators, ShuffleError};
use crate::elgamal::{Ciphertext, PublicKey};
use crate::msm::chunk_len;
use crate::transcript::ProofTranscript;

/// Recompute the Fiat-Shamir challenges `u_1..u_N` and `c` of a proof.
pub(crate) fn challenges(
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    proof: &ShuffleProof,
    context: &[u8],
) -> (ProofTranscript, Vec<Scalar>, Scalar) {
    let mut tr = statement_transcript(pk, input, output, context);
    tr.append_points(b"perm-commitment", &proof.c.enc);
    let u = tr.challenge_scalars(b"u", input.len());
    tr.append_points(b"chain", &proof.c_hat.enc);
    tr.append_points(b"t", &proof.t_enc);
    tr.append_points(b"t-hat", &proof.t_hat.enc);
    let c = tr.challenge_scalar(b"c");
    (tr, u, c)
}

/// Verify that `output` is a re-randomized permutation of `input` under `pk`,
/// for the given `context`. Runs on the rayon pool.
pub fn verify(
    gens: &Generators,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    proof: &ShuffleProof,
    context: &[u8],
) -> Result<(), ShuffleError> {
    // Item 3 of issue 9: never accept a proof under the identity key (a
    // `PublicKey` cannot be the identity; this guards the invariant).
    if pk.point().is_identity() {
        return Err(ShuffleError::IdentityKey);
    }
    let n = input.len();
    gens.check(n)?;
    if output.len() != n {
        return Err(ShuffleError::LengthMismatch {
            input: n,
            output: output.len(),
        });
    }
    if proof.len() != n
        || proof.c_hat.pts.len() != n
        || proof.t_hat.pts.len() != n
        || proof.s_hat.len() != n
        || proof.s_prime.len() != n
    {
        return Err(ShuffleError::ProofLengthMismatch {
            proof: proof.len(),
            list: n,
        });
    }
    let hs = &gens.hs()[..n];

    let (tr, u, c) = challenges(pk, input, output, proof, context);

    // Batching weights.
    let mut wrng = tr.verifier_rng(&mut OsRng);
    let rho: [Scalar; 5] = std::array::from_fn(|_| Scalar::random(&mut wrng));
    let mut seed = [0u8; 32];
    rand_core::RngCore::fill_bytes(&mut wrng, &mut seed);
    let rho_hat = super::random_scalars(seed, n);
    let [rho1, rho2, rho3, rho41, rho42] = rho;
    let [s1, s2, s3, s4] = proof.s;

    let u_prod: Scalar = u.par_iter().product();
    let rho_hat_s_hat: Scalar = rho_hat
        .par_iter()
        .zip(proof.s_hat.par_iter())
        .map(|(a, b)| a * b)
        .sum();

    // Fixed part.
    let fixed_scalars = [
        rho1 * s1 + rho2 * s2 + rho3 * s3 - rho42 * s4 + rho_hat_s_hat,
        -(rho41 * s4),
        rho2 * c * u_prod + rho_hat[0] * proof.s_prime[0],
        -rho1,
        -rho2,
        -rho3,
        -rho41,
        -rho42,
    ];
    let [t1, t2, t3, t41, t42] = proof.t;
    let fixed_points = [G, *pk.point(), *gens.h(), t1, t2, t3, t41, t42];
    let fixed = RistrettoPoint::vartime_multiscalar_mul(&fixed_scalars, &fixed_points);

    // Per-index part, one multi-scalar multiplication per chunk.
    let rho1_c = rho1 * c;
    let rho3_c = rho3 * c;
    let rho41_c = rho41 * c;
    let rho42_c = rho42 * c;
    let rho2_c = rho2 * c;
    let chunk = chunk_len(n);
    let n_chunks = n.div_ceil(chunk);
    let total = (0..n_chunks)
        .into_par_iter()
        .map(|k| {
            let lo = k * chunk;
            let hi = (lo + chunk).min(n);
            let m = hi - lo;
            let mut sc = Vec::with_capacity(8 * m);
            let mut pt = Vec::with_capacity(8 * m);
            for i in lo..hi {
                let sp = proof.s_prime[i];
                let uc = u[i];
                // h_i
                sc.push(rho1_c + rho3 * sp);
                pt.push(hs[i]);
                // c_i
                sc.push(-(rho1_c + rho3_c * uc));
                pt.push(proof.c.pts[i]);
                // c^_i
                let mut x = -(rho_hat[i] * c);
                if i + 1 < n {
                    x += rho_hat[i + 1] * proof.s_prime[i + 1];
                } else {
                    x -= rho2_c;
                }
                sc.push(x);
                pt.push(proof.c_hat.pts[i]);
                // t^_i
                sc.push(-rho_hat[i]);
                pt.push(proof.t_hat.pts[i]);
                // a_i, b_i (input)
                sc.push(-(rho41_c * uc));
                pt.push(input[i].c2);
                sc.push(-(rho42_c * uc));
                pt.push(input[i].c1);
                // a'_i, b'_i (output)
                sc.push(rho41 * sp);
                pt.push(output[i].c2);
                sc.push(rho42 * sp);
                pt.push(output[i].c1);
            }
            RistrettoPoint::vartime_multiscalar_mul(&sc, &pt)
        })
        .reduce(RistrettoPoint::identity, |a, b| a + b);
    if (total + fixed).is_identity() {
        Ok(())
    } else {
        Err(ShuffleError::VerificationFailed)
    }
}
