//! Shuffling (Haenni et al. Algorithm 4, `GenShuffle`) and proving
//! (Algorithm 8, `GenProof`, with the Fiat-Shamir challenges of the
//! non-interactive version).

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE as G_TABLE;
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use super::proof::{Points, ShuffleProof};
use super::{random_scalars, Generators, ShuffleError};
use crate::elgamal::{Ciphertext, PublicKey};
use crate::msm::ct_msm;
use crate::transcript::{ProofTranscript, SHUFFLE_DOMAIN};

/// The shuffler's secret: `output[i] = ReEnc(input[permutation[i]], rerandomizers[i])`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct ShuffleWitness {
    /// `psi`: output position `i` holds input `permutation[i]`.
    pub permutation: Vec<usize>,
    /// `r~_i`, the re-encryption randomness of output `i`.
    pub rerandomizers: Vec<Scalar>,
}

impl std::fmt::Debug for ShuffleWitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShuffleWitness(n = {})", self.permutation.len())
    }
}

/// A uniform index in `0..bound` by rejection sampling (bound >= 1).
fn uniform_index<R: RngCore>(rng: &mut R, bound: u64) -> u64 {
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// Re-randomize and permute `input` under `pk` (Haenni et al. Algorithm 4):
/// a uniform permutation (Fisher-Yates) and fresh randomness per ciphertext.
/// Re-encryption uses fixed-base tables for `G` and `pk` and runs on the
/// rayon pool.
pub fn shuffle<R: RngCore + CryptoRng>(
    pk: &PublicKey,
    input: &[Ciphertext],
    rng: &mut R,
) -> (Vec<Ciphertext>, ShuffleWitness) {
    let n = input.len();
    let mut permutation: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = uniform_index(rng, i as u64 + 1) as usize;
        permutation.swap(i, j);
    }
    let mut seed = Zeroizing::new([0u8; 32]);
    rng.fill_bytes(seed.as_mut());
    let rerandomizers = random_scalars(*seed, n).to_vec();
    let pk_table = pk.table();
    let output = permutation
        .par_iter()
        .zip(rerandomizers.par_iter())
        .map(|(&j, r)| input[j].rerandomize_with_table(&pk_table, r))
        .collect();
    (
        output,
        ShuffleWitness {
            permutation,
            rerandomizers,
        },
    )
}

/// Shuffle `input` and prove it: the output list and its proof.
pub fn shuffle_and_prove<R: RngCore + CryptoRng>(
    gens: &Generators,
    pk: &PublicKey,
    input: &[Ciphertext],
    context: &[u8],
    rng: &mut R,
) -> Result<(Vec<Ciphertext>, ShuffleProof), ShuffleError> {
    gens.check(input.len())?;
    let (output, witness) = shuffle(pk, input, rng);
    let proof = prove(gens, pk, input, &output, &witness, context, rng)?;
    Ok((output, proof))
}

/// Append the statement (context, size, key, both lists) to a fresh
/// transcript. Shared by prover and verifier.
pub(crate) fn statement_transcript(
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    context: &[u8],
) -> ProofTranscript {
    let mut t = ProofTranscript::new(SHUFFLE_DOMAIN);
    t.append_bytes(b"context", context);
    t.append_u64(b"n", input.len() as u64);
    t.append_point(b"pk", pk.compressed());
    t.append_ciphertexts(b"input", input);
    t.append_ciphertexts(b"output", output);
    t
}

/// Prove that `output` is a shuffle of `input` under `pk` with `witness`
/// (Haenni et al. Algorithm 8; notation of the spec's appendix, additive).
///
/// The proof is bound to `context` (e.g. session id, round and shuffler
/// index): a verifier must pass the same bytes. If the witness does not
/// match the lists the function still returns a proof, which will not
/// verify (this is what the soundness tests exercise).
///
/// Constant-time arithmetic is used for every multiplication by a secret
/// scalar (fixed-base tables for `G`, `h`, `pk`; dalek's constant-time Straus
/// for the three multi-exponentiations with the secret `omega'_i`). Memory
/// accesses indexed by the permutation are not hidden.
pub fn prove<R: RngCore + CryptoRng>(
    gens: &Generators,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    witness: &ShuffleWitness,
    context: &[u8],
    rng: &mut R,
) -> Result<ShuffleProof, ShuffleError> {
    let n = input.len();
    gens.check(n)?;
    if output.len() != n {
        return Err(ShuffleError::LengthMismatch {
            input: n,
            output: output.len(),
        });
    }
    let psi = &witness.permutation;
    if psi.len() != n || witness.rerandomizers.len() != n {
        return Err(ShuffleError::BadWitness(
            "witness length differs from list length",
        ));
    }
    // psi_inv[psi[i]] = i; also checks that psi is a permutation.
    let mut psi_inv = vec![usize::MAX; n];
    for (i, &j) in psi.iter().enumerate() {
        if j >= n || psi_inv[j] != usize::MAX {
            return Err(ShuffleError::BadWitness("not a permutation"));
        }
        psi_inv[j] = i;
    }
    if pk.point().is_identity() {
        return Err(ShuffleError::IdentityKey);
    }
    let hs = &gens.hs()[..n];
    let h_table = gens.h_table();

    let mut tr = statement_transcript(pk, input, output, context);

    // Nonces (issue 9, item 4): hedged, as the DLEQ and Schnorr provers do
    // (merlin's transcript RNG): derived from the statement transcript
    // (context, key, both lists), the witness (permutation and
    // re-randomizers) and fresh randomness from `rng`. A repeated RNG state
    // (a cloned generator, a restored snapshot) with a different statement
    // or witness no longer repeats the nonces, so two proofs no longer
    // reveal the permutation through `s'_i - s*'_i = c u'_i - c* u*'_i`.
    let mut nonce_rng = {
        let mut w = Zeroizing::new(Vec::with_capacity(40 * n));
        for (&p, r) in psi.iter().zip(&witness.rerandomizers) {
            w.extend_from_slice(&(p as u64).to_le_bytes());
            w.extend_from_slice(r.as_bytes());
        }
        tr.witness_rng(&w, rng)
    };
    let mut seeds = Zeroizing::new([[0u8; 32]; 4]);
    for s in seeds.iter_mut() {
        nonce_rng.fill_bytes(s);
    }
    // Randomness: r_j (permutation commitment), r^_i (chain), omega^_i, omega'_i.
    let r = random_scalars(seeds[0], n);
    let r_hat = random_scalars(seeds[1], n);
    let omega_hat = random_scalars(seeds[2], n);
    let omega_prime = random_scalars(seeds[3], n);
    let mut omega = Zeroizing::new([Scalar::ZERO; 4]);
    for w in omega.iter_mut() {
        *w = Scalar::random(&mut nonce_rng);
    }

    // Step 1: permutation commitment c_j = r_j G + h_{psi^-1(j)}.
    let c: Vec<RistrettoPoint> = (0..n)
        .into_par_iter()
        .map(|j| &r[j] * G_TABLE + hs[psi_inv[j]])
        .collect();
    let c = Points::from_points(c);
    tr.append_points(b"perm-commitment", &c.enc);

    // Step 2: challenges u_j; u'_i = u_{psi(i)}.
    let u = tr.challenge_scalars(b"u", n);
    let u_prime = Zeroizing::new(psi.iter().map(|&j| u[j]).collect::<Vec<_>>());

    // Step 3: chain c^_i = r^_i G + u'_i c^_{i-1}, c^_0 = h, in closed form
    // c^_i = R_i G + U_i h with R_i = r^_i + u'_i R_{i-1}, U_i = u'_i U_{i-1}.
    // prev[i] = (R_{i-1}, U_{i-1}); cur[i] = (R_i, U_i).
    let mut prev = Zeroizing::new(Vec::with_capacity(n));
    let mut cur = Zeroizing::new(Vec::with_capacity(n));
    let (mut big_r, mut big_u) = (Scalar::ZERO, Scalar::ONE);
    for i in 0..n {
        prev.push((big_r, big_u));
        big_r = r_hat[i] + u_prime[i] * big_r;
        big_u *= u_prime[i];
        cur.push((big_r, big_u));
    }
    let c_hat: Vec<RistrettoPoint> = cur
        .par_iter()
        .map(|(rr, uu)| rr * G_TABLE + uu * h_table)
        .collect();
    let c_hat = Points::from_points(c_hat);

    // Step 4: commitments t.
    let a_out: Vec<RistrettoPoint> = output.iter().map(|e| e.c2).collect();
    let b_out: Vec<RistrettoPoint> = output.iter().map(|e| e.c1).collect();
    let t1 = &omega[0] * G_TABLE;
    let t2 = &omega[1] * G_TABLE;
    let t3 = &omega[2] * G_TABLE + ct_msm(&omega_prime, hs);
    let t41 = ct_msm(&omega_prime, &a_out) - omega[3] * pk.point();
    let t42 = ct_msm(&omega_prime, &b_out) - &omega[3] * G_TABLE;
    // t^_i = omega^_i G + omega'_i c^_{i-1}
    //      = (omega^_i + omega'_i R_{i-1}) G + (omega'_i U_{i-1}) h.
    let t_hat: Vec<RistrettoPoint> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (rp, up) = prev[i];
            let mut x = omega_hat[i] + omega_prime[i] * rp;
            let mut y = omega_prime[i] * up;
            let p = &x * G_TABLE + &y * h_table;
            x.zeroize();
            y.zeroize();
            p
        })
        .collect();
    let t_hat = Points::from_points(t_hat);
    let t = [t1, t2, t3, t41, t42];
    let t_enc = [
        t1.compress(),
        t2.compress(),
        t3.compress(),
        t41.compress(),
        t42.compress(),
    ];

    // Step 5: challenge c.
    tr.append_points(b"chain", &c_hat.enc);
    tr.append_points(b"t", &t_enc);
    tr.append_points(b"t-hat", &t_hat.enc);
    let ch = tr.challenge_scalar(b"c");

    // Step 6: responses. v_N = 1, v_{i-1} = u'_i v_i, so r^ = sum r^_i v_i = R_N.
    let r_bar: Scalar = r.iter().sum();
    let r_hat_sum = big_r;
    let r_tilde: Scalar = r.par_iter().zip(u.par_iter()).map(|(a, b)| a * b).sum();
    let r_prime: Scalar = witness
        .rerandomizers
        .par_iter()
        .zip(u_prime.par_iter())
        .map(|(a, b)| a * b)
        .sum();
    let s = [
        omega[0] + ch * r_bar,
        omega[1] + ch * r_hat_sum,
        omega[2] + ch * r_tilde,
        omega[3] + ch * r_prime,
    ];
    let s_hat: Vec<Scalar> = omega_hat
        .par_iter()
        .zip(r_hat.par_iter())
        .map(|(w, x)| w + ch * x)
        .collect();
    let s_prime: Vec<Scalar> = omega_prime
        .par_iter()
        .zip(u_prime.par_iter())
        .map(|(w, x)| w + ch * x)
        .collect();
    big_r.zeroize();
    big_u.zeroize();

    Ok(ShuffleProof {
        c,
        c_hat,
        t,
        t_enc,
        t_hat,
        s,
        s_hat,
        s_prime,
    })
}
