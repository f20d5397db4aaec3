//! Honest-case and soundness tests of the Bayer-Groth proof, the same cases
//! as the Terelius-Wikstrom proof's (`shuffle/tests.rs`).

use super::*;
use crate::elgamal::{Ciphertext, Keypair};
use crate::shuffle::{shuffle as rerandomize_and_permute, ShuffleWitness};
use crate::wire::DecodeError;
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const CTX: &[u8] = b"test/session-1/round-3";
const FAIL: Result<(), ShuffleError> = Err(ShuffleError::VerificationFailed);

type Setup = (
    ChaCha20Rng,
    Keypair,
    CommitmentKey,
    Vec<u64>,
    Vec<Ciphertext>,
);

fn setup(n: usize, seed: u64) -> Setup {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = Keypair::generate(&mut rng);
    let ck = CommitmentKey::for_len(n).unwrap();
    let msgs: Vec<u64> = (0..n as u64).map(|i| i * 1_000_003 + 17).collect();
    let cts = msgs
        .iter()
        .map(|&m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    (rng, kp, ck, msgs, cts)
}

type Honest = (
    ChaCha20Rng,
    Keypair,
    CommitmentKey,
    Vec<Ciphertext>,
    Vec<Ciphertext>,
    ShuffleWitness,
);

fn honest(n: usize, seed: u64) -> Honest {
    let (mut rng, kp, ck, _, input) = setup(n, seed);
    let (output, w) = rerandomize_and_permute(&kp.public, &input, &mut rng);
    (rng, kp, ck, input, output, w)
}

#[test]
fn arrangement_rule() {
    let a = Arrangement::for_len(10_000).unwrap();
    assert_eq!(
        (a.m, a.n, a.factors.clone(), a.base_rows()),
        (64, 157, vec![2; 6], 1)
    );
    assert_eq!(a.padded_len(), 10_048);
    let a = Arrangement::for_len(1).unwrap();
    assert_eq!((a.m, a.n, a.padded_len()), (1, 2, 2));
    let a = Arrangement::for_len(128).unwrap();
    assert_eq!((a.m, a.n, a.factors.clone()), (8, 16, vec![2, 2, 2]));
    let a = Arrangement::for_len(130).unwrap();
    assert_eq!((a.m, a.n, a.padded_len()), (8, 17, 136));
    for len in 1..3000 {
        let a = Arrangement::for_len(len).unwrap();
        assert!(a.padded_len() >= len && a.n >= 2);
        // Padding is less than one row (or the minimum of two columns).
        assert!(a.padded_len() - len < a.n.max(2));
        assert_eq!(a.m % a.factors.iter().product::<usize>(), 0);
        assert_eq!(a.base_rows(), 1);
    }
    assert_eq!(Arrangement::for_len(0), Err(ShuffleError::Empty));
    assert!(Arrangement::for_len(crate::elgamal::MAX_LIST_LEN + 1).is_err());
    // 37,060 bytes at N = 10,000 (issue 17: at most 50,000).
    assert_eq!(BgProof::encoded_len(10_000), Some(37_060));
}

#[test]
fn honest_shuffles_verify() {
    for n in [1usize, 2, 3, 5, 8, 9, 17, 33, 100, 130, 600] {
        let (mut rng, kp, ck, msgs, input) = setup(n, n as u64);
        let (output, proof) = shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng).unwrap();
        let mut dec: Vec<u64> = output
            .iter()
            .map(|c| kp.secret.decrypt(c).unwrap())
            .collect();
        dec.sort_unstable();
        assert_eq!(dec, msgs);
        if n > 1 {
            assert!(output.iter().all(|o| !input.contains(o)));
        }
        verify(&ck, &kp.public, &input, &output, &proof, CTX).unwrap();
        let bytes = proof.to_bytes();
        assert_eq!(Some(bytes.len()), BgProof::encoded_len(n));
        assert_eq!(bytes.len(), proof.size_bytes());
        let back = BgProof::from_bytes(&bytes).unwrap();
        assert_eq!(back, proof);
        verify(&ck, &kp.public, &input, &output, &back, CTX).unwrap();
    }
}

#[test]
fn chained_shuffles_and_a_larger_key_verify() {
    let (mut rng, kp, _, msgs, input) = setup(20, 99);
    // A key made for longer lists serves shorter ones.
    let ck = CommitmentKey::new(64);
    let mut cur = input;
    for round in 0..3u8 {
        let ctx = [b'r', round];
        let (out, proof) = shuffle_and_prove(&ck, &kp.public, &cur, &ctx, &mut rng).unwrap();
        verify(&ck, &kp.public, &cur, &out, &proof, &ctx).unwrap();
        cur = out;
    }
    let mut dec: Vec<u64> = cur.iter().map(|c| kp.secret.decrypt(c).unwrap()).collect();
    dec.sort_unstable();
    assert_eq!(dec, msgs);
}

#[test]
fn replaced_ciphertext_fails() {
    for n in [8usize, 130] {
        let (mut rng, kp, ck, input, mut output, w) = honest(n, 1);
        let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
        output[3] = kp.public.encrypt(999, &mut rng).unwrap();
        assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
        // A prover that replaces a ciphertext before proving also fails.
        let proof2 = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
        assert_eq!(verify(&ck, &kp.public, &input, &output, &proof2, CTX), FAIL);
    }
}

#[test]
fn duplicated_ciphertext_fails() {
    let (mut rng, kp, ck, input, mut output, mut w) = honest(8, 2);
    let w2 = w.clone();
    w.permutation[5] = w.permutation[2];
    assert_eq!(
        prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).err(),
        Some(ShuffleError::BadWitness("not a permutation"))
    );
    output[5] = output[2];
    let proof = prove(&ck, &kp.public, &input, &output, &w2, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
    output[5] = kp.public.rerandomize(&output[2], &mut rng);
    let proof = prove(&ck, &kp.public, &input, &output, &w2, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
}

#[test]
fn dropped_ciphertext_fails() {
    let (mut rng, kp, ck, input, output, w) = honest(9, 3);
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let mut shorter = output.clone();
    shorter.remove(4);
    assert_eq!(
        verify(&ck, &kp.public, &input, &shorter, &proof, CTX),
        Err(ShuffleError::LengthMismatch {
            input: 9,
            output: 8
        })
    );
    shorter.push(kp.public.encrypt(5, &mut rng).unwrap());
    assert_eq!(verify(&ck, &kp.public, &input, &shorter, &proof, CTX), FAIL);
    let mut in8 = input.clone();
    in8.remove(w.permutation[4]);
    let mut out8 = output.clone();
    out8.remove(4);
    assert_eq!(
        verify(&ck, &kp.public, &in8, &out8, &proof, CTX),
        Err(ShuffleError::ProofLengthMismatch { proof: 9, list: 8 })
    );
    // Dropping one and appending the trivial encryption of the identity
    // (what padding looks like) does not pass either.
    let mut padded = output.clone();
    padded[4] = Ciphertext::identity();
    assert_eq!(verify(&ck, &kp.public, &input, &padded, &proof, CTX), FAIL);
    let proof = prove(&ck, &kp.public, &input, &padded, &w, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &padded, &proof, CTX), FAIL);
}

#[test]
fn wrong_rerandomization_fails() {
    let one = curve25519_dalek::scalar::Scalar::ONE;
    let (mut rng, kp, ck, input, mut output, w) = honest(8, 4);
    output[6].c2 += kp.public.point() * one;
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
    let (mut rng, kp, ck, input, mut output, w) = honest(8, 5);
    output[1] = output[1].rerandomize_with(&kp.public, &one);
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
    let (mut rng, kp, ck, input, mut output, w) = honest(8, 6);
    output[2] = input[w.permutation[2]];
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &output, &proof, CTX), FAIL);
}

#[test]
fn replay_against_other_key_list_or_context_fails() {
    let (mut rng, kp, ck, input, output, w) = honest(10, 7);
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    verify(&ck, &kp.public, &input, &output, &proof, CTX).unwrap();
    let other = Keypair::generate(&mut rng);
    assert_eq!(
        verify(&ck, &other.public, &input, &output, &proof, CTX),
        FAIL
    );
    let mut input2 = input.clone();
    input2[0] = kp.public.rerandomize(&input2[0], &mut rng);
    assert_eq!(verify(&ck, &kp.public, &input2, &output, &proof, CTX), FAIL);
    let mut input3 = input.clone();
    input3.swap(0, 1);
    assert_eq!(verify(&ck, &kp.public, &input3, &output, &proof, CTX), FAIL);
    assert_eq!(
        verify(&ck, &kp.public, &input, &output, &proof, b"other"),
        FAIL
    );
    let mut output2 = output.clone();
    output2.swap(3, 4);
    assert_eq!(
        verify(&ck, &kp.public, &input2, &output2, &proof, CTX),
        FAIL
    );
    assert_eq!(verify(&ck, &kp.public, &input, &output2, &proof, CTX), FAIL);
    // A proof for another list of the same length.
    let (_, kp_b, _, input_b, output_b, w_b) = honest(10, 70);
    let proof_b = prove(&ck, &kp_b.public, &input_b, &output_b, &w_b, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&ck, &kp.public, &input, &output, &proof_b, CTX),
        FAIL
    );
}

/// Every element of the proof, point or scalar, changed in turn.
fn tamper_all(n: usize, seed: u64) {
    let (mut rng, kp, ck, input, output, w) = honest(n, seed);
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let bytes = proof.to_bytes();
    let (_, kinds) = BgProof::decode(&bytes).unwrap();
    assert_eq!(4 + 32 * kinds.len(), bytes.len());
    for (k, &is_point) in kinds.iter().enumerate() {
        let off = 4 + 32 * k;
        let mut b = bytes.clone();
        if is_point {
            let (pt, _) = crate::wire::decode_point(&b[off..off + 32], "t", 0).unwrap();
            let q = pt + RISTRETTO_BASEPOINT_POINT;
            b[off..off + 32].copy_from_slice(q.compress().as_bytes());
        } else {
            let s = crate::wire::decode_scalar(&b[off..off + 32], "t", 0).unwrap()
                + curve25519_dalek::scalar::Scalar::ONE;
            b[off..off + 32].copy_from_slice(s.as_bytes());
        }
        let p = BgProof::from_bytes(&b).unwrap();
        assert_eq!(
            verify(&ck, &kp.public, &input, &output, &p, CTX),
            FAIL,
            "n = {n}, element {k} (point: {is_point})"
        );
    }
}

#[test]
fn tampered_proof_fails() {
    // m = 1 (no Hadamard), m = 2 (Hadamard, no reduction), m = 8 with
    // padding and one row reduction.
    tamper_all(3, 8);
    tamper_all(10, 9);
    tamper_all(130, 10);
}

#[test]
fn swapped_proofs_fail() {
    let (mut rng, kp, ck, _, input) = setup(12, 12);
    let (out_a, proof_a) = shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng).unwrap();
    let (out_b, proof_b) = shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng).unwrap();
    verify(&ck, &kp.public, &input, &out_a, &proof_a, CTX).unwrap();
    assert_eq!(verify(&ck, &kp.public, &input, &out_b, &proof_a, CTX), FAIL);
    assert_eq!(verify(&ck, &kp.public, &input, &out_a, &proof_b, CTX), FAIL);
}

#[test]
fn proof_decoder_rejects_malformed() {
    let (mut rng, kp, ck, input, output, w) = honest(10, 9);
    let proof = prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let bytes = proof.to_bytes();
    assert!(matches!(
        BgProof::from_bytes(&bytes[..bytes.len() - 1]),
        Err(DecodeError::WrongLength { .. })
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        BgProof::from_bytes(&longer),
        Err(DecodeError::WrongLength { .. })
    ));
    assert!(matches!(
        BgProof::from_bytes(&bytes[..2]),
        Err(DecodeError::Truncated { .. })
    ));
    for bad_count in [0u32, u32::MAX, (1 << 24) + 1] {
        let mut b = bytes.clone();
        b[..4].copy_from_slice(&bad_count.to_le_bytes());
        assert!(matches!(
            BgProof::from_bytes(&b),
            Err(DecodeError::CountOutOfRange { .. })
        ));
    }
    // Another valid count with this length: wrong length.
    let mut b = bytes.clone();
    b[..4].copy_from_slice(&11u32.to_le_bytes());
    assert!(matches!(
        BgProof::from_bytes(&b),
        Err(DecodeError::WrongLength { .. })
    ));
    let (_, kinds) = BgProof::decode(&bytes).unwrap();
    let first_scalar = kinds.iter().position(|&k| !k).unwrap();
    let mut bad = bytes.clone();
    bad[4 + 32 * 2] |= 1;
    assert!(matches!(
        BgProof::from_bytes(&bad),
        Err(DecodeError::NonCanonicalPoint { index: 2, .. })
    ));
    let mut bad = bytes.clone();
    let off = 4 + 32 * first_scalar;
    bad[off..off + 32].copy_from_slice(&[0xff; 32]);
    assert!(matches!(
        BgProof::from_bytes(&bad),
        Err(DecodeError::NonCanonicalScalar { index, .. }) if index == first_scalar
    ));
}

#[test]
fn argument_errors() {
    let (mut rng, kp, ck, input, output, w) = honest(10, 10);
    let small = CommitmentKey::new(2);
    assert_eq!(
        prove(&small, &kp.public, &input, &output, &w, CTX, &mut rng).err(),
        Some(ShuffleError::NotEnoughGenerators { have: 2, need: 5 })
    );
    assert_eq!(
        verify(
            &small,
            &kp.public,
            &input,
            &output,
            &prove(&ck, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap(),
            CTX
        ),
        Err(ShuffleError::NotEnoughGenerators { have: 2, need: 5 })
    );
    assert_eq!(
        prove(&ck, &kp.public, &[], &[], &w, CTX, &mut rng).err(),
        Some(ShuffleError::Empty)
    );
    assert_eq!(
        prove(&ck, &kp.public, &input, &output[..3], &w, CTX, &mut rng).err(),
        Some(ShuffleError::LengthMismatch {
            input: 10,
            output: 3
        })
    );
    let mut w_bad = w.clone();
    w_bad.permutation[0] = 17;
    assert_eq!(
        prove(&ck, &kp.public, &input, &output, &w_bad, CTX, &mut rng).err(),
        Some(ShuffleError::BadWitness("not a permutation"))
    );
    let mut w_short = w.clone();
    w_short.rerandomizers.pop();
    assert!(matches!(
        prove(&ck, &kp.public, &input, &output, &w_short, CTX, &mut rng),
        Err(ShuffleError::BadWitness(_))
    ));
}

#[test]
fn parallel_and_single_thread_agree() {
    let (_, kp, ck, _, input) = setup(140, 11);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut rng1 = ChaCha20Rng::seed_from_u64(5);
    let (o1, p1) =
        pool.install(|| shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng1).unwrap());
    let mut rng2 = ChaCha20Rng::seed_from_u64(5);
    let (o2, p2) = shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng2).unwrap();
    assert_eq!(o1, o2);
    assert_eq!(p1, p2);
    pool.install(|| verify(&ck, &kp.public, &input, &o1, &p1, CTX))
        .unwrap();
}
