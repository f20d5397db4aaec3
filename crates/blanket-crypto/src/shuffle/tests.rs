use super::*;
use crate::elgamal::{Ciphertext, Keypair};
use crate::wire::DecodeError;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const CTX: &[u8] = b"test/session-1/round-3";

fn setup(n: usize, seed: u64) -> (ChaCha20Rng, Keypair, Generators, Vec<u64>, Vec<Ciphertext>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = Keypair::generate(&mut rng);
    let gens = Generators::new(n);
    let msgs: Vec<u64> = (0..n as u64).map(|i| i * 1_000_003 + 17).collect();
    let cts = msgs
        .iter()
        .map(|&m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    (rng, kp, gens, msgs, cts)
}

#[test]
fn shuffle_decrypts_to_permutation_and_verifies() {
    for n in [1usize, 2, 3, 8, 33] {
        let (mut rng, kp, gens, msgs, input) = setup(n, n as u64);
        let (output, proof) = shuffle_and_prove(&gens, &kp.public, &input, CTX, &mut rng).unwrap();
        assert_eq!(output.len(), n);
        let mut dec: Vec<u64> = output
            .iter()
            .map(|c| kp.secret.decrypt(c).unwrap())
            .collect();
        dec.sort_unstable();
        let mut want = msgs.clone();
        want.sort_unstable();
        assert_eq!(dec, want);
        if n > 1 {
            // every output is freshly randomized
            assert!(output.iter().all(|o| !input.contains(o)));
        }
        verify(&gens, &kp.public, &input, &output, &proof, CTX).unwrap();
        // Proof wire roundtrip.
        let bytes = proof.to_bytes();
        assert_eq!(bytes.len(), proof.size_bytes());
        assert_eq!(bytes.len(), 160 * n + 292);
        let back = ShuffleProof::from_bytes(&bytes).unwrap();
        assert_eq!(back, proof);
        verify(&gens, &kp.public, &input, &output, &back, CTX).unwrap();
    }
}

#[test]
fn chained_shuffles_verify() {
    let (mut rng, kp, gens, msgs, input) = setup(16, 99);
    let mut cur = input;
    for round in 0..3u8 {
        let ctx = [b'r', round];
        let (out, proof) = shuffle_and_prove(&gens, &kp.public, &cur, &ctx, &mut rng).unwrap();
        verify(&gens, &kp.public, &cur, &out, &proof, &ctx).unwrap();
        cur = out;
    }
    let mut dec: Vec<u64> = cur.iter().map(|c| kp.secret.decrypt(c).unwrap()).collect();
    dec.sort_unstable();
    assert_eq!(dec, msgs);
}

fn honest(
    n: usize,
    seed: u64,
) -> (
    ChaCha20Rng,
    Keypair,
    Generators,
    Vec<Ciphertext>,
    Vec<Ciphertext>,
    ShuffleWitness,
) {
    let (mut rng, kp, gens, _, input) = setup(n, seed);
    let (output, w) = shuffle(&kp.public, &input, &mut rng);
    (rng, kp, gens, input, output, w)
}

#[test]
fn replaced_ciphertext_fails() {
    let (mut rng, kp, gens, input, mut output, w) = honest(8, 1);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    output[3] = kp.public.encrypt(999, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // A prover that replaces a ciphertext before proving also fails.
    let proof2 = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof2, CTX),
        Err(ShuffleError::VerificationFailed)
    );
}

#[test]
fn duplicated_ciphertext_fails() {
    let (mut rng, kp, gens, input, mut output, mut w) = honest(8, 2);
    // Output 5 becomes a re-randomization of the same input as output 2, and
    // the witness claims so (not a permutation any more): the prover refuses.
    w.permutation[5] = w.permutation[2];
    assert_eq!(
        prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).err(),
        Some(ShuffleError::BadWitness("not a permutation"))
    );
    // With the original (valid) witness but a duplicated ciphertext: rejected.
    let w2 = honest(8, 2).5;
    output[5] = output[2];
    let proof = prove(&gens, &kp.public, &input, &output, &w2, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Duplicate a re-randomized copy (fresh randomness) instead: rejected too.
    output[5] = kp.public.rerandomize(&output[2], &mut rng);
    let proof = prove(&gens, &kp.public, &input, &output, &w2, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
}

#[test]
fn dropped_ciphertext_fails() {
    let (mut rng, kp, gens, input, output, w) = honest(8, 3);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let mut shorter = output.clone();
    shorter.remove(4);
    assert_eq!(
        verify(&gens, &kp.public, &input, &shorter, &proof, CTX),
        Err(ShuffleError::LengthMismatch {
            input: 8,
            output: 7
        })
    );
    // Drop one and pad with an encryption of a chosen value: rejected.
    shorter.push(kp.public.encrypt(5, &mut rng).unwrap());
    assert_eq!(
        verify(&gens, &kp.public, &input, &shorter, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Dropping from both lists does not reuse the proof either.
    let mut in7 = input.clone();
    in7.remove(w.permutation[4]);
    let mut out7 = output.clone();
    out7.remove(4);
    assert_eq!(
        verify(&gens, &kp.public, &in7, &out7, &proof, CTX),
        Err(ShuffleError::ProofLengthMismatch { proof: 8, list: 7 })
    );
}

#[test]
fn wrong_rerandomization_fails() {
    let (mut rng, kp, gens, input, mut output, w) = honest(8, 4);
    // Output 6 re-randomized with a different r than the witness says, and
    // only in one component (not an encryption of the same message).
    output[6].c2 += kp.public.point() * curve25519_dalek::scalar::Scalar::ONE;
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Consistent re-randomization but with randomness off by one from the
    // witness.
    let (mut rng, kp, gens, input, mut output, w) = honest(8, 5);
    output[1] = output[1].rerandomize_with(&kp.public, &curve25519_dalek::scalar::Scalar::ONE);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Not re-randomized at all (identity randomness claimed as fresh).
    let (mut rng, kp, gens, input, mut output, w) = honest(8, 6);
    output[2] = input[w.permutation[2]];
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
}

#[test]
fn replay_against_other_key_input_or_context_fails() {
    let (mut rng, kp, gens, input, output, w) = honest(8, 7);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    verify(&gens, &kp.public, &input, &output, &proof, CTX).unwrap();
    let other = Keypair::generate(&mut rng);
    assert_eq!(
        verify(&gens, &other.public, &input, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Another input list (one element re-randomized: same plaintexts).
    let mut input2 = input.clone();
    input2[0] = kp.public.rerandomize(&input2[0], &mut rng);
    assert_eq!(
        verify(&gens, &kp.public, &input2, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Input list reordered.
    let mut input3 = input.clone();
    input3.swap(0, 1);
    assert_eq!(
        verify(&gens, &kp.public, &input3, &output, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
    // Another context.
    assert_eq!(
        verify(&gens, &kp.public, &input, &output, &proof, b"other"),
        Err(ShuffleError::VerificationFailed)
    );
    // Output list reordered.
    let mut output2 = output.clone();
    output2.swap(3, 4);
    assert_eq!(
        verify(&gens, &kp.public, &input, &output2, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
}

#[test]
fn tampered_proof_fails() {
    let (mut rng, kp, gens, input, output, w) = honest(8, 8);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let bytes = proof.to_bytes();
    let n = 8;
    // Change each response scalar in turn (add one): must fail.
    let scalar_start = 4 + 32 * (3 * n + 5);
    for k in 0..(2 * n + 4) {
        let off = scalar_start + 32 * k;
        let mut b = bytes.clone();
        let s = crate::wire::decode_scalar(&b[off..off + 32], "t", 0).unwrap()
            + curve25519_dalek::scalar::Scalar::ONE;
        b[off..off + 32].copy_from_slice(s.as_bytes());
        let p = ShuffleProof::from_bytes(&b).unwrap();
        assert_eq!(
            verify(&gens, &kp.public, &input, &output, &p, CTX),
            Err(ShuffleError::VerificationFailed),
            "scalar {k}"
        );
    }
    // Replace each commitment point in turn by another valid point.
    for k in 0..(3 * n + 5) {
        let off = 4 + 32 * k;
        let mut b = bytes.clone();
        let (pt, _) = crate::wire::decode_point(&b[off..off + 32], "t", 0).unwrap();
        let q = pt + curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;
        b[off..off + 32].copy_from_slice(q.compress().as_bytes());
        let p = ShuffleProof::from_bytes(&b).unwrap();
        assert_eq!(
            verify(&gens, &kp.public, &input, &output, &p, CTX),
            Err(ShuffleError::VerificationFailed),
            "point {k}"
        );
    }
    // Proofs of two shuffles cannot be swapped.
    let (output_b, proof_b) = shuffle_and_prove(&gens, &kp.public, &input, CTX, &mut rng).unwrap();
    verify(&gens, &kp.public, &input, &output_b, &proof_b, CTX).unwrap();
    assert_eq!(
        verify(&gens, &kp.public, &input, &output_b, &proof, CTX),
        Err(ShuffleError::VerificationFailed)
    );
}

#[test]
fn proof_decoder_rejects_malformed() {
    let (mut rng, kp, gens, input, output, w) = honest(4, 9);
    let proof = prove(&gens, &kp.public, &input, &output, &w, CTX, &mut rng).unwrap();
    let bytes = proof.to_bytes();
    assert!(matches!(
        ShuffleProof::from_bytes(&bytes[..bytes.len() - 1]),
        Err(DecodeError::WrongLength { .. })
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        ShuffleProof::from_bytes(&longer),
        Err(DecodeError::WrongLength { .. })
    ));
    assert!(matches!(
        ShuffleProof::from_bytes(&bytes[..2]),
        Err(DecodeError::Truncated { .. })
    ));
    let mut zero = bytes.clone();
    zero[..4].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(
        ShuffleProof::from_bytes(&zero),
        Err(DecodeError::CountOutOfRange { .. })
    ));
    let mut huge = bytes.clone();
    huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        ShuffleProof::from_bytes(&huge),
        Err(DecodeError::CountOutOfRange { .. })
    ));
    // Non-canonical point (point index 2).
    let mut bad = bytes.clone();
    bad[4 + 64] |= 1;
    assert!(matches!(
        ShuffleProof::from_bytes(&bad),
        Err(DecodeError::NonCanonicalPoint { index: 2, .. })
    ));
    // Non-canonical scalar (first scalar, index 3n + 5 = 17).
    let mut bad = bytes.clone();
    let off = 4 + 32 * 17;
    bad[off..off + 32].copy_from_slice(&[0xff; 32]);
    assert!(matches!(
        ShuffleProof::from_bytes(&bad),
        Err(DecodeError::NonCanonicalScalar { index: 17, .. })
    ));
}

#[test]
fn argument_errors() {
    let (mut rng, kp, gens, input, output, w) = honest(4, 10);
    let small = Generators::new(2);
    assert_eq!(
        prove(&small, &kp.public, &input, &output, &w, CTX, &mut rng).err(),
        Some(ShuffleError::NotEnoughGenerators { have: 2, need: 4 })
    );
    assert_eq!(
        prove(&gens, &kp.public, &[], &[], &w, CTX, &mut rng).err(),
        Some(ShuffleError::Empty)
    );
    assert_eq!(
        prove(&gens, &kp.public, &input, &output[..3], &w, CTX, &mut rng).err(),
        Some(ShuffleError::LengthMismatch {
            input: 4,
            output: 3
        })
    );
    let mut w_bad = w.clone();
    w_bad.permutation[0] = 17;
    assert_eq!(
        prove(&gens, &kp.public, &input, &output, &w_bad, CTX, &mut rng).err(),
        Some(ShuffleError::BadWitness("not a permutation"))
    );
}

#[test]
fn parallel_and_single_thread_agree() {
    let (_, kp, gens, _, input) = setup(40, 11);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut rng1 = ChaCha20Rng::seed_from_u64(5);
    let (o1, p1) =
        pool.install(|| shuffle_and_prove(&gens, &kp.public, &input, CTX, &mut rng1).unwrap());
    let mut rng2 = ChaCha20Rng::seed_from_u64(5);
    let (o2, p2) = shuffle_and_prove(&gens, &kp.public, &input, CTX, &mut rng2).unwrap();
    assert_eq!(o1, o2);
    assert_eq!(p1, p2);
    pool.install(|| verify(&gens, &kp.public, &input, &o1, &p1, CTX))
        .unwrap();
}

/// Regression test vector (spec appendix: fixed seed, N = 4, all
/// intermediate values). Regenerate with `BLANKET_UPDATE_VECTORS=1`.
#[test]
fn test_vector_n4() {
    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
    let mut rng = ChaCha20Rng::seed_from_u64(20_231_126);
    let kp = Keypair::generate(&mut rng);
    let gens = Generators::new(4);
    let msgs = [3u64, 1, 4, 1_000_000];
    let input: Vec<Ciphertext> = msgs
        .iter()
        .map(|&m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    let (output, w) = shuffle(&kp.public, &input, &mut rng);
    let ctx = b"blanket/test-vector";
    let proof = prove(&gens, &kp.public, &input, &output, &w, ctx, &mut rng).unwrap();
    verify(&gens, &kp.public, &input, &output, &proof, ctx).unwrap();
    let (_, u, c) = super::verifier::challenges(&kp.public, &input, &output, &proof, ctx);

    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&v);
        out.push('\n');
    };
    line(
        "# blanket shuffle proof test vector",
        "ChaCha20Rng::seed_from_u64(20231126), N = 4".into(),
    );
    line("context", hex(ctx));
    line("sk", hex(kp.secret.0.as_bytes()));
    line("pk", hex(&kp.public.to_bytes()));
    line("h", hex(gens.h().compress().as_bytes()));
    for (i, h) in gens.hs().iter().enumerate() {
        line(&format!("h_{}", i + 1), hex(h.compress().as_bytes()));
    }
    for (i, m) in msgs.iter().enumerate() {
        line(&format!("m_{}", i + 1), m.to_string());
        line(&format!("e_{}", i + 1), hex(&input[i].to_bytes()));
    }
    for (i, (p, r)) in w.permutation.iter().zip(&w.rerandomizers).enumerate() {
        line(&format!("psi({})", i + 1), (p + 1).to_string());
        line(&format!("r~_{}", i + 1), hex(r.as_bytes()));
        line(&format!("e'_{}", i + 1), hex(&output[i].to_bytes()));
    }
    for (i, x) in proof.c.enc.iter().enumerate() {
        line(&format!("c_{}", i + 1), hex(x.as_bytes()));
    }
    for (i, x) in u.iter().enumerate() {
        line(&format!("u_{}", i + 1), hex(x.as_bytes()));
    }
    for (i, x) in proof.c_hat.enc.iter().enumerate() {
        line(&format!("c^_{}", i + 1), hex(x.as_bytes()));
    }
    for (name, x) in ["t_1", "t_2", "t_3", "t_41", "t_42"]
        .iter()
        .zip(&proof.t_enc)
    {
        line(name, hex(x.as_bytes()));
    }
    for (i, x) in proof.t_hat.enc.iter().enumerate() {
        line(&format!("t^_{}", i + 1), hex(x.as_bytes()));
    }
    line("c", hex(c.as_bytes()));
    for (i, x) in proof.s.iter().enumerate() {
        line(&format!("s_{}", i + 1), hex(x.as_bytes()));
    }
    for (i, x) in proof.s_hat.iter().enumerate() {
        line(&format!("s^_{}", i + 1), hex(x.as_bytes()));
    }
    for (i, x) in proof.s_prime.iter().enumerate() {
        line(&format!("s'_{}", i + 1), hex(x.as_bytes()));
    }
    line("proof", hex(&proof.to_bytes()));

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/shuffle_n4.txt");
    if std::env::var_os("BLANKET_UPDATE_VECTORS").is_some() {
        std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors")).unwrap();
        std::fs::write(path, &out).unwrap();
    }
    let want = std::fs::read_to_string(path)
        .expect("test vector file (BLANKET_UPDATE_VECTORS=1 to create)");
    assert_eq!(
        out, want,
        "shuffle proof changed: regenerate the vector only if intended"
    );
    // The checked-in proof also decodes and verifies.
    let proof_hex = want.lines().last().unwrap().trim_start_matches("proof = ");
    let bytes: Vec<u8> = (0..proof_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&proof_hex[i..i + 2], 16).unwrap())
        .collect();
    let p = ShuffleProof::from_bytes(&bytes).unwrap();
    verify(&gens, &kp.public, &input, &output, &p, ctx).unwrap();
}
