//! The shuffle argument (BG12, "shuffle argument"; SP `GenShuffleArgument` /
//! `VerifyShuffleArgument`), non-interactive by a merlin transcript.
//!
//! Statement: `pk`, input `C_0..C_(N-1)`, output `C'_0..C'_(N-1)`, context.
//! Witness: `psi` and `rho_i` with `C'_i = C_psi(i) + Enc(0; rho_i)` (the
//! convention of [`crate::shuffle::ShuffleWitness`]). Indices are 0-based,
//! lists padded to `m n` (see [`super::Arrangement`]), `psi(i) = i` on the
//! padding.
//!
//! 1. `a = (psi(0), ..., psi(mn-1))` in `m` columns of `n`; send
//!    `c_A = com(A; r)`; challenge `x`.
//! 2. `b_i = x^psi(i)`; send `c_B = com(B; s)`; challenges `y`, `z`.
//! 3. Product argument for `c_D + c_(-z) = com(d - z; t)`, with
//!    `c_D = y c_A + c_B`, `d = y a + b`, `t = y r + s`,
//!    `c_(-z) = com(-z, ..., -z; 0)`, and the public product
//!    `prod_(k=0..mn-1) (y k + x^k - z)`.
//! 4. Multi-exponentiation argument for
//!    `sum_k x^k C_k = Enc(0; rho) + sum_i b_i C'_i` with
//!    `rho = -sum_i b_i rho_i` and the commitments `c_B`.

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use rand_core::{CryptoRng, OsRng, RngCore};
use rayon::prelude::*;
use zeroize::Zeroizing;

use super::{
    append_pts, multi_exp, powers, product, pts, Arrangement, Batch, BgProof, CommitmentKey,
    BG_DOMAIN,
};
use crate::elgamal::{Ciphertext, PublicKey};
use crate::shuffle::{ShuffleError, ShuffleWitness};
use crate::transcript::ProofTranscript;

/// The statement part of the transcript, absorbed before any challenge.
fn statement_transcript(
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    context: &[u8],
    arr: &Arrangement,
) -> ProofTranscript {
    let mut t = ProofTranscript::new(BG_DOMAIN);
    t.append_bytes(b"context", context);
    t.append_u64(b"N", arr.len as u64);
    t.append_u64(b"m", arr.m as u64);
    t.append_u64(b"n", arr.n as u64);
    t.append_point(b"pk", pk.compressed());
    t.append_ciphertexts(b"input", input);
    t.append_ciphertexts(b"output", output);
    t
}

fn check_lists(
    ck: &CommitmentKey,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
) -> Result<Arrangement, ShuffleError> {
    if pk.point().is_identity() {
        return Err(ShuffleError::IdentityKey);
    }
    let arr = Arrangement::for_len(input.len())?;
    if output.len() != input.len() {
        return Err(ShuffleError::LengthMismatch {
            input: input.len(),
            output: output.len(),
        });
    }
    ck.check(arr.n)?;
    Ok(arr)
}

/// Shuffle `input` (re-randomize and permute, as
/// [`crate::shuffle::shuffle`]) and prove it with a Bayer-Groth argument.
pub fn shuffle_and_prove<R: RngCore + CryptoRng>(
    ck: &CommitmentKey,
    pk: &PublicKey,
    input: &[Ciphertext],
    context: &[u8],
    rng: &mut R,
) -> Result<(Vec<Ciphertext>, BgProof), ShuffleError> {
    check_lists(ck, pk, input, input)?;
    let (output, witness) = crate::shuffle::shuffle(pk, input, rng);
    let proof = prove(ck, pk, input, &output, &witness, context, rng)?;
    Ok((output, proof))
}

/// Prove that `output` is a shuffle of `input` under `pk` with `witness`,
/// bound to `context`. As for the Terelius-Wikstrom prover, a witness that
/// does not match the lists still gives a proof, which does not verify.
///
/// The prover's randomness is hedged (merlin's witness RNG keyed by the
/// statement, the witness and 32 bytes from `rng`). Commitments to secret
/// values use constant-time multi-scalar multiplication; the `E_k` of the
/// multi-exponentiation argument use variable-time Pippenger over the
/// output ciphertexts with secret exponents (see `docs/crypto.md`).
pub fn prove<R: RngCore + CryptoRng>(
    ck: &CommitmentKey,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    witness: &ShuffleWitness,
    context: &[u8],
    rng: &mut R,
) -> Result<BgProof, ShuffleError> {
    let arr = check_lists(ck, pk, input, output)?;
    let len = input.len();
    let psi = &witness.permutation;
    if psi.len() != len || witness.rerandomizers.len() != len {
        return Err(ShuffleError::BadWitness(
            "witness length differs from list length",
        ));
    }
    let mut seen = vec![false; len];
    for &j in psi {
        if j >= len || seen[j] {
            return Err(ShuffleError::BadWitness("not a permutation"));
        }
        seen[j] = true;
    }
    let (m, n) = (arr.m, arr.n);
    let big = arr.padded_len();
    let mut tr = statement_transcript(pk, input, output, context, &arr);
    let mut nrng = {
        let mut w = Zeroizing::new(Vec::with_capacity(40 * len));
        for (&p, r) in psi.iter().zip(&witness.rerandomizers) {
            w.extend_from_slice(&(p as u64).to_le_bytes());
            w.extend_from_slice(r.as_bytes());
        }
        tr.witness_rng(&w, rng)
    };
    let pi: Zeroizing<Vec<usize>> =
        Zeroizing::new((0..big).map(|i| if i < len { psi[i] } else { i }).collect());
    let cols = |f: &dyn Fn(usize) -> Scalar| -> Vec<Vec<Scalar>> {
        (0..m)
            .map(|i| (0..n).map(|l| f(i * n + l)).collect())
            .collect()
    };
    // Step 1: c_A = com(A; r), A = psi arranged in m columns of n.
    let a = cols(&|q| Scalar::from(pi[q] as u64));
    let r: Vec<Scalar> = (0..m).map(|_| Scalar::random(&mut nrng)).collect();
    let c_a = pts(ck.commit_all(&a, &r));
    append_pts(&mut tr, b"c_A", &c_a);
    let x = tr.challenge_scalar(b"x");
    // Step 2: b_i = x^psi(i), c_B = com(B; s).
    let xs = powers(x, big);
    let b = cols(&|q| xs[pi[q]]);
    let s: Vec<Scalar> = (0..m).map(|_| Scalar::random(&mut nrng)).collect();
    let c_b = pts(ck.commit_all(&b, &s));
    append_pts(&mut tr, b"c_B", &c_b);
    let y = tr.challenge_scalar(b"y");
    let z = tr.challenge_scalar(b"z");
    // Step 3: product argument on d - z = y a + b - z, t = y r + s.
    let dz: Vec<Vec<Scalar>> = a
        .par_iter()
        .zip(b.par_iter())
        .map(|(ac, bc)| ac.iter().zip(bc).map(|(ai, bi)| y * ai + bi - z).collect())
        .collect();
    let t: Vec<Scalar> = r.iter().zip(&s).map(|(ri, si)| y * ri + si).collect();
    let product = product::prove(ck, &mut tr, &dz, &t, &mut nrng);
    // Step 4: multi-exponentiation argument, rho = -sum b_i rho_i.
    let rho: Scalar = -(0..len)
        .into_par_iter()
        .map(|i| xs[psi[i]] * witness.rerandomizers[i])
        .sum::<Scalar>();
    let multi_exp = multi_exp::prove(
        ck,
        &mut tr,
        pk,
        output,
        n,
        b,
        s,
        rho,
        &arr.factors,
        &mut nrng,
    );
    Ok(BgProof {
        len,
        c_a,
        c_b,
        product,
        multi_exp,
    })
}

/// Verify that `output` is a re-randomized permutation of `input` under
/// `pk`, for `context`. All group equations of all sub-arguments are checked
/// in one batched multi-scalar multiplication of about `4N` points (weights
/// from the transcript and OS randomness).
pub fn verify(
    ck: &CommitmentKey,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    proof: &BgProof,
    context: &[u8],
) -> Result<(), ShuffleError> {
    let arr = check_lists(ck, pk, input, output)?;
    let len = input.len();
    if proof.len != len {
        return Err(ShuffleError::ProofLengthMismatch {
            proof: proof.len,
            list: len,
        });
    }
    let (m, n) = (arr.m, arr.n);
    if proof.c_a.len() != m || proof.c_b.len() != m {
        return Err(ShuffleError::VerificationFailed);
    }
    let big = arr.padded_len();
    let mut tr = statement_transcript(pk, input, output, context, &arr);
    let mut batch = Batch::new(ck, n, tr.verifier_rng(&mut OsRng));
    append_pts(&mut tr, b"c_A", &proof.c_a);
    let x = tr.challenge_scalar(b"x");
    append_pts(&mut tr, b"c_B", &proof.c_b);
    let y = tr.challenge_scalar(b"y");
    let z = tr.challenge_scalar(b"z");
    let xs = powers(x, big);
    // prod_k (y k + x^k - z)
    let target: Scalar = (0..big)
        .into_par_iter()
        .map(|k| y * Scalar::from(k as u64) + xs[k] - z)
        .product();
    let c_mz = -(z * ck.sum_gs(n));
    let c_d: Vec<RistrettoPoint> = proof
        .c_a
        .par_iter()
        .zip(proof.c_b.par_iter())
        .map(|(ca, cb)| y * ca.p + cb.p + c_mz)
        .collect();
    product::verify(&mut batch, ck, &mut tr, &c_d, target, n, &proof.product)?;
    let c_b: Vec<RistrettoPoint> = proof.c_b.iter().map(|q| q.p).collect();
    multi_exp::verify(
        &mut batch,
        &mut tr,
        input,
        &xs[..len],
        output,
        n,
        &c_b,
        &arr.factors,
        &proof.multi_exp,
    )?;
    if batch.check(pk.point()) {
        Ok(())
    } else {
        Err(ShuffleError::VerificationFailed)
    }
}
