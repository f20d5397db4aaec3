//! The attacks of the adversarial review (issue 9), one test each. Every
//! test plays the attacker as well as it can against the public API and
//! asserts that the attack fails. Each was first run against the code
//! before the fix, where it succeeded (the rogue key was chosen in all three
//! committee settings; the victim's value was recovered in 8 of 8 trials;
//! the identity key was accepted by the DKG and the shuffle verifier and
//! showed the plaintext; two proofs from one RNG state revealed the whole
//! permutation; a reused (round, seq) leaked the XOR of two plaintexts and a
//! replayed message opened twice; 4,108 other points decoded to the same
//! message and `encode(0)` was the identity; `lagrange_at_zero` accepted
//! repeated and zero indices). See `docs/crypto.md`, "Threat model".

use blanket_crypto::channel::{Channel, ChannelError};
use blanket_crypto::curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
use blanket_crypto::curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use blanket_crypto::curve25519_dalek::scalar::Scalar;
use blanket_crypto::curve25519_dalek::traits::{Identity, IsIdentity};
use blanket_crypto::dkg::{self, Dealer, Dealing, DkgError, DkgParams, SecretShare};
use blanket_crypto::elgamal::{Ciphertext, KeyError, Keypair, PublicKey, SecretKey};
use blanket_crypto::encoding::{self, MessageError, CTR_LIMIT};
use blanket_crypto::schnorr;
use blanket_crypto::shuffle::{self, Generators};
use blanket_crypto::submission::{
    encrypt_with_proof, verify_submissions, ClientSubmission, SubmissionContext, SubmissionError,
    SUBMISSION_DOMAIN,
};
use blanket_crypto::threshold::{lagrange_at_zero, PartialDecryption, ThresholdError};
use blanket_crypto::transcript::{compress_all, ProofTranscript, SHUFFLE_DOMAIN};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

// ---------------------------------------------------------------------------
// 1. Rogue-key attack on the DKG.

/// Coefficients `A_0..A_{t-1}` of the degree `t-1` polynomial through the
/// points `(x_j, Y_j)`, in the exponent (Lagrange basis polynomials
/// expanded into coefficients).
fn interpolate_in_exponent(xs: &[Scalar], ys: &[RistrettoPoint]) -> Vec<RistrettoPoint> {
    let t = xs.len();
    let mut out = vec![RistrettoPoint::identity(); t];
    for j in 0..t {
        let mut poly = vec![Scalar::ONE];
        let mut den = Scalar::ONE;
        for m in (0..t).filter(|&m| m != j) {
            let mut next = vec![Scalar::ZERO; poly.len() + 1];
            for (k, a) in poly.iter().enumerate() {
                next[k + 1] += a;
                next[k] -= a * xs[m];
            }
            poly = next;
            den *= xs[j] - xs[m];
        }
        let inv = den.invert();
        for (k, a) in poly.iter().enumerate() {
            out[k] += a * inv * ys[j];
        }
    }
    out
}

fn share(dealer: u32, recipient: u32, v: Scalar) -> SecretShare {
    let mut b = [0u8; 40];
    b[..4].copy_from_slice(&dealer.to_le_bytes());
    b[4..8].copy_from_slice(&recipient.to_le_bytes());
    b[8..].copy_from_slice(v.as_bytes());
    SecretShare::from_bytes(&b).unwrap()
}

/// The dealer's proof-of-knowledge transcript as documented in `dkg`.
fn dkg_pok_transcript(
    params: &DkgParams,
    dealer: u32,
    commitments: &[RistrettoPoint],
) -> ProofTranscript {
    let mut t = ProofTranscript::new(dkg::DKG_POK_DOMAIN);
    t.append_u64(b"members", params.members as u64);
    t.append_u64(b"threshold", params.threshold as u64);
    t.append_bytes(b"session", params.session());
    t.append_u64(b"dealer", dealer as u64);
    t.append_points(b"commitments", &compress_all(commitments));
    t
}

/// The last malicious dealer publishes `A_0 = x G - sum of the other A_0`
/// and gives every honest member that verifies a share consistent with it.
/// Returns whether the joint key became `x G` with no complaint.
fn rogue_key(c: u32, t: u32, malicious: &[u32], dropped: &[u32], rng: &mut ChaCha20Rng) -> bool {
    let params = DkgParams::new(c, t, b"attack run").unwrap();
    let last = *malicious.last().unwrap();
    let dealers: Vec<Dealer> = (1..=c)
        .filter(|&i| i != last)
        .map(|i| Dealer::new(params, i, rng).unwrap())
        .collect();
    let others: Vec<Dealing> = dealers.iter().map(Dealer::dealing).collect();
    let x = Scalar::random(rng);
    let a0 = x * G
        - others
            .iter()
            .map(|d| d.commitments()[0])
            .sum::<RistrettoPoint>();
    let verifying: Vec<u32> = (1..=c)
        .filter(|i| !malicious.contains(i) && !dropped.contains(i))
        .collect();
    assert!(
        verifying.len() < t as usize,
        "the attack needs at most t - 1 honest verifiers"
    );
    let mut xs = vec![Scalar::ZERO];
    let mut ys = vec![a0];
    let mut rogue_shares = Vec::new();
    for &i in &verifying {
        let s = Scalar::random(rng);
        xs.push(Scalar::from(i));
        ys.push(s * G);
        rogue_shares.push(share(last, i, s));
    }
    for &j in malicious.iter().filter(|&&j| j != last) {
        if xs.len() < t as usize {
            xs.push(Scalar::from(j));
            ys.push(Scalar::random(rng) * G);
        }
    }
    let commitments = interpolate_in_exponent(&xs, &ys);
    assert_eq!(commitments[0], a0);
    // The attacker's best proofs: one made with the x it knows, the proof
    // of an honest dealer, and one for the honest dealer's index.
    let attempts = [
        schnorr::prove_in(
            dkg_pok_transcript(&params, last, &commitments),
            &a0,
            &x,
            rng,
        ),
        others[0].proof,
        schnorr::prove_in(dkg_pok_transcript(&params, 1, &commitments), &a0, &x, rng),
    ];
    let mut won = false;
    for proof in attempts {
        let rogue = Dealing::new(last, commitments.clone(), proof);
        assert_eq!(
            dkg::verify_dealing(&params, &rogue),
            Err(DkgError::InvalidProof { dealer: last })
        );
        // Honest verifiers: a share of a dealing without a valid proof does
        // not verify, so they complain and the dealer leaves QUAL.
        let complaint = rogue_shares
            .iter()
            .any(|s| dkg::verify_share(&params, &rogue, s).is_err());
        let mut all = others.clone();
        all.push(rogue);
        match dkg::group_key(&params, &all) {
            Ok(gk) => won |= !complaint && *gk.public_key().point() == x * G,
            Err(e) => assert_eq!(e, DkgError::InvalidProof { dealer: last }),
        }
    }
    // Without the rogue dealer (if enough dealers remain) the key is not x G.
    if let Ok(gk) = dkg::group_key(&params, &others) {
        won |= *gk.public_key().point() == x * G;
    }
    won
}

#[test]
fn rogue_key_attack_on_dkg_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    // c-of-c with one malicious member.
    assert!(!rogue_key(3, 3, &[3], &[], &mut rng));
    // 4-of-5 with two malicious members.
    assert!(!rogue_key(5, 4, &[4, 5], &[], &mut rng));
    // 3-of-5 with two malicious members and one honest member that dropped
    // out after dealing.
    assert!(!rogue_key(5, 3, &[4, 5], &[3], &mut rng));
    // And the parameter check refuses all three settings.
    assert!(DkgParams::new(3, 3, b"x")
        .unwrap()
        .check_adversary(1, 0)
        .is_err());
    assert!(DkgParams::new(5, 4, b"x")
        .unwrap()
        .check_adversary(2, 0)
        .is_err());
    assert!(DkgParams::new(5, 3, b"x")
        .unwrap()
        .check_adversary(2, 1)
        .is_err());
}

// ---------------------------------------------------------------------------
// 2. Malleable client ciphertexts.

const TASK: SubmissionContext<'static> = SubmissionContext {
    run: b"attack run",
    task: b"histogram",
};

/// The client's proof transcript as documented in `submission`.
fn client_transcript(pk: &PublicKey, client: u32, c2: &RistrettoPoint) -> ProofTranscript {
    let mut t = ProofTranscript::new(SUBMISSION_DOMAIN);
    t.append_bytes(b"run", TASK.run);
    t.append_bytes(b"task", TASK.task);
    t.append_u64(b"client", client as u64);
    t.append_point(b"pk", pk.compressed());
    t.append_point(b"c2", &c2.compress());
    t
}

/// Every submission a malicious client (ids from `first_id`) can make from
/// the victim's submission `v` to learn its value through a related
/// ciphertext `k·(c1, c2)`, or to copy it after re-randomization.
fn related_submissions(
    pk: &PublicKey,
    v: &ClientSubmission,
    first_id: u32,
    rng: &mut ChaCha20Rng,
) -> Vec<(u32, Vec<u8>)> {
    let two = Scalar::from(2u8);
    let doubled = Ciphertext {
        c1: two * v.ciphertext.c1,
        c2: two * v.ciphertext.c2,
    };
    let r2 = Scalar::random(rng);
    let rerand = v.ciphertext.rerandomize_with(pk, &r2);
    let mut out = Vec::new();
    let mut id = first_id;
    for ct in [doubled, rerand, v.ciphertext] {
        // The victim's proof; a proof with the randomness the attacker knows
        // (r2 for the re-randomization, a guess otherwise); a bare ciphertext.
        let own = schnorr::prove_in(client_transcript(pk, id, &ct.c2), &ct.c1, &r2, rng);
        for proof in [v.proof, own] {
            let s = ClientSubmission {
                client: id,
                ciphertext: ct,
                proof,
            };
            out.push((id, s.to_bytes().to_vec()));
            id += 1;
        }
        out.push((id, ct.to_bytes().to_vec()));
        id += 1;
    }
    // The victim's submission verbatim, claiming the victim's id.
    out.push((id, v.to_bytes().to_vec()));
    out
}

/// One run of the attack: DKG, 20 honest clients, the attacker's related
/// submissions, two honest verified shuffles, threshold decryption; the
/// server looks for an output `P` with `2P` also in the output. Returns
/// whether it recovered the victim's value.
fn malleability_trial(seed: u64) -> bool {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = DkgParams::new(5, 3, b"attack run").unwrap();
    let dealers: Vec<Dealer> = (1..=5)
        .map(|i| Dealer::new(params, i, &mut rng).unwrap())
        .collect();
    let dealings: Vec<Dealing> = dealers.iter().map(Dealer::dealing).collect();
    let gk = dkg::group_key(&params, &dealings).unwrap();
    let key_shares: Vec<_> = (1..=3u32)
        .map(|i| {
            let mine: Vec<SecretShare> = dealers.iter().map(|d| d.share_for(i).unwrap()).collect();
            dkg::key_share(&params, i, &dealings, &mine).unwrap()
        })
        .collect();
    let pk = *gk.public_key();
    let values: Vec<u64> = (0..20).map(|_| rng.next_u64() >> 40).collect();
    let honest: Vec<ClientSubmission> = values
        .iter()
        .zip(0u32..)
        .map(|(&m, id)| encrypt_with_proof(&pk, m, id, &TASK, &mut rng).unwrap())
        .collect();
    let mut batch: Vec<(u32, Vec<u8>)> = honest
        .iter()
        .map(|s| (s.client, s.to_bytes().to_vec()))
        .collect();
    let attack = related_submissions(&pk, &honest[0], 1000, &mut rng);
    let n_attack = attack.len();
    batch.extend(attack);
    // The relay's check before the first shuffle.
    let (accepted, refused) = verify_submissions(&pk, &TASK, &batch);
    assert_eq!(refused.len(), n_attack, "{refused:?}");
    assert_eq!(accepted.clients(), (0..20).collect::<Vec<_>>());
    let mut list = accepted.ciphertexts();
    let gens = Generators::new(list.len());
    for k in 0..2u8 {
        let (out, proof) = shuffle::shuffle_and_prove(&gens, &pk, &list, &[k], &mut rng).unwrap();
        shuffle::verify(&gens, &pk, &list, &out, &proof, &[k]).unwrap();
        list = out;
    }
    let partials: Vec<PartialDecryption> = key_shares
        .iter()
        .map(|k| k.partial_decrypt(&list, b"d", &mut rng))
        .collect();
    let pts = gk.combine(&list, &partials, b"d").unwrap();
    let two = Scalar::from(2u8);
    let found = pts.iter().find(|p| pts.contains(&(two * **p)));
    found.and_then(|p| encoding::decode_u64(p).ok()) == Some(values[0])
}

#[test]
fn malleable_client_ciphertext_attack_is_refused() {
    let wins = (0..8).filter(|&s| malleability_trial(s)).count();
    assert_eq!(wins, 0, "victim's value recovered in {wins} of 8 trials");
}

#[test]
fn rerandomized_copy_of_client_ciphertext_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let kp = Keypair::generate(&mut rng);
    let victim = encrypt_with_proof(&kp.public, 42, 7, &TASK, &mut rng).unwrap();
    let attack = related_submissions(&kp.public, &victim, 50, &mut rng);
    let mut batch = vec![(7u32, victim.to_bytes().to_vec())];
    batch.extend(attack.iter().cloned());
    let (set, refused) = verify_submissions(&kp.public, &TASK, &batch);
    assert_eq!(set.clients(), vec![7]);
    assert_eq!(refused.len(), attack.len());
    for e in &refused {
        assert!(
            matches!(
                e,
                SubmissionError::InvalidProof { .. }
                    | SubmissionError::Decode { .. }
                    | SubmissionError::WrongClient { .. }
            ),
            "{e:?}"
        );
    }
    // A repeated c1 is refused even with a valid proof: two colluding
    // clients that share their randomness.
    let r = Scalar::random(&mut rng);
    let m = encoding::encode_u64(1).unwrap();
    let mut batch = Vec::new();
    for id in [60u32, 61] {
        let ct = kp.public.encrypt_point_with(&m, &r);
        let proof = schnorr::prove_in(
            client_transcript(&kp.public, id, &ct.c2),
            &ct.c1,
            &r,
            &mut rng,
        );
        let s = ClientSubmission {
            client: id,
            ciphertext: ct,
            proof,
        };
        batch.push((id, s.to_bytes().to_vec()));
    }
    let (set, refused) = verify_submissions(&kp.public, &TASK, &batch);
    assert_eq!(set.clients(), vec![60]);
    assert_eq!(
        refused,
        vec![SubmissionError::DuplicateC1 {
            client: 61,
            first: 60
        }]
    );
}

// ---------------------------------------------------------------------------
// 3. The identity as a public key.

#[test]
fn identity_public_key_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    assert_eq!(
        PublicKey::from_point(RistrettoPoint::identity()),
        Err(KeyError::IdentityKey)
    );
    assert!(PublicKey::from_bytes(&[0u8; 32]).is_err());
    assert_eq!(
        SecretKey::from_scalar(Scalar::ZERO).err(),
        Some(KeyError::ZeroSecret)
    );
    // A 1-of-1 committee whose dealer commits to the identity (with a valid
    // proof for a_0 = 0).
    let params = DkgParams::new(1, 1, b"attack run").unwrap();
    let zero = vec![RistrettoPoint::identity()];
    let proof = schnorr::prove_in(
        dkg_pok_transcript(&params, 1, &zero),
        &zero[0],
        &Scalar::ZERO,
        &mut rng,
    );
    let d = Dealing::new(1, zero, proof);
    assert_eq!(
        dkg::group_key(&params, &[d]).err(),
        Some(DkgError::IdentityCommitment { dealer: 1 })
    );
    // Two dealers whose constant terms cancel.
    let params = DkgParams::new(2, 1, b"attack run").unwrap();
    let a = Scalar::random(&mut rng);
    let ds: Vec<Dealing> = [(1u32, a), (2, -a)]
        .iter()
        .map(|&(j, a0)| {
            let c = vec![a0 * G];
            let proof = schnorr::prove_in(dkg_pok_transcript(&params, j, &c), &c[0], &a0, &mut rng);
            Dealing::new(j, c, proof)
        })
        .collect();
    assert_eq!(
        dkg::group_key(&params, &ds).err(),
        Some(DkgError::IdentityKey)
    );
    // Every key that can reach encryption, the shuffle or a channel is
    // non-identity by construction.
    let kp = Keypair::generate(&mut rng);
    assert!(!kp.public.point().is_identity());
}

// ---------------------------------------------------------------------------
// 4. Shuffle prover nonces from a repeated RNG state.

/// `(u, c, s')` of a proof, recomputed from its bytes as any verifier can.
fn public_challenges(
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    bytes: &[u8],
    ctx: &[u8],
) -> (Vec<Scalar>, Scalar, Vec<Scalar>) {
    let n = input.len();
    let pt = |i: usize| CompressedRistretto(bytes[i..i + 32].try_into().unwrap());
    let pts = |off: usize, k: usize| (0..k).map(|j| pt(off + 32 * j)).collect::<Vec<_>>();
    let (c, ch, t, th) = (
        pts(4, n),
        pts(4 + 32 * n, n),
        pts(4 + 64 * n, 5),
        pts(164 + 64 * n, n),
    );
    let sp_off = 164 + 96 * n + 128 + 32 * n;
    let sp = (0..n)
        .map(|k| {
            let b: [u8; 32] = bytes[sp_off + 32 * k..sp_off + 32 * k + 32]
                .try_into()
                .unwrap();
            Scalar::from_canonical_bytes(b).unwrap()
        })
        .collect();
    let mut tr = ProofTranscript::new(SHUFFLE_DOMAIN);
    tr.append_bytes(b"context", ctx);
    tr.append_u64(b"n", n as u64);
    tr.append_point(b"pk", pk.compressed());
    tr.append_ciphertexts(b"input", input);
    tr.append_ciphertexts(b"output", output);
    tr.append_points(b"perm-commitment", &c);
    let u = tr.challenge_scalars(b"u", n);
    tr.append_points(b"chain", &ch);
    tr.append_points(b"t", &t);
    tr.append_points(b"t-hat", &th);
    (u, tr.challenge_scalar(b"c"), sp)
}

#[test]
fn shuffle_nonce_reuse_attack_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let kp = Keypair::generate(&mut rng);
    let n = 16;
    let a: Vec<Ciphertext> = (0..n as u64)
        .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    let b: Vec<Ciphertext> = (0..n as u64)
        .map(|m| kp.public.encrypt(m + 100, &mut rng).unwrap())
        .collect();
    let gens = Generators::new(n);
    // The shuffler's RNG state is restored from a snapshot between two
    // shuffles of different inputs (same permutation, same RNG output).
    let snapshot = rng.clone();
    let (oa, pa) = shuffle::shuffle_and_prove(&gens, &kp.public, &a, b"r", &mut rng).unwrap();
    let mut restored = snapshot;
    let (ob, pb) = shuffle::shuffle_and_prove(&gens, &kp.public, &b, b"r", &mut restored).unwrap();
    let (ua, ca, sa) = public_challenges(&kp.public, &a, &oa, &pa.to_bytes(), b"r");
    let (ub, cb, sb) = public_challenges(&kp.public, &b, &ob, &pb.to_bytes(), b"r");
    // With equal nonces omega'_i: s'_i - s*'_i = c u_psi(i) - c* u*_psi(i).
    let matched = (0..n)
        .filter(|&i| (0..n).any(|j| sa[i] - sb[i] == ca * ua[j] - cb * ub[j]))
        .count();
    assert_eq!(matched, 0, "{matched} of {n} permutation entries recovered");
}

// ---------------------------------------------------------------------------
// 5. Channel nonces and replays.

#[test]
fn channel_nonce_reuse_and_replay_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let a = Keypair::generate(&mut rng);
    let b = Keypair::generate(&mut rng);
    let mut ab = Channel::establish(1, &a, 2, &b.public, &mut rng).unwrap();
    let mut ba = Channel::establish(2, &b, 1, &a.public, &mut rng).unwrap();
    let (p1, p2) = (b"share: 0123456789", b"other: abcdefghij");
    let xor_pt: Vec<u8> = p1.iter().zip(p2).map(|(x, y)| x ^ y).collect();
    let leaks = |m1: &[u8], m2: &[u8]| {
        m1.iter()
            .zip(m2)
            .take(17)
            .map(|(x, y)| x ^ y)
            .collect::<Vec<_>>()
            == xor_pt
    };
    // Two messages in the same round: the channel numbers them itself.
    let m1 = ab.seal(1, p1).unwrap();
    let m2 = ab.seal(1, p2).unwrap();
    assert_ne!(m1.seq, m2.seq);
    assert!(!leaks(&m1.ciphertext, &m2.ciphertext));
    // A sender that restarts (its counter back at 0) draws a new nonce prefix.
    let mut ab_restarted = Channel::establish(1, &a, 2, &b.public, &mut rng).unwrap();
    let m3 = ab_restarted.seal(1, p2).unwrap();
    assert_eq!(m3.seq, m1.seq);
    assert!(!leaks(&m1.ciphertext, &m3.ciphertext));
    // A replayed message opens once.
    assert_eq!(ba.open(&m1).unwrap(), p1);
    assert_eq!(
        ba.open(&m1),
        Err(ChannelError::Replay { sender: 1, seq: 0 })
    );
    assert_eq!(
        ba.open(&m3),
        Err(ChannelError::Replay { sender: 1, seq: 0 })
    );
    assert_eq!(ba.open(&m2).unwrap(), p2);
    assert_eq!(
        ba.open(&m2),
        Err(ChannelError::Replay { sender: 1, seq: 1 })
    );
}

// ---------------------------------------------------------------------------
// 6. Message encoding.

#[test]
fn non_canonical_message_encoding_is_refused() {
    let m = 123_456u64;
    let canonical = encoding::encode_u64(m).unwrap().compress();
    // Every other point that carries m in its bytes (any counter, with and
    // without the version 2 marker).
    let mut tags = 0;
    for marker in [0u8, 1] {
        for ctr in 0u16..(1 << 15) {
            let mut s = [0u8; 32];
            s[0] = ((ctr & 0x7f) as u8) << 1;
            s[1] = (ctr >> 7) as u8;
            s[2..10].copy_from_slice(&m.to_le_bytes());
            s[10] = marker;
            let c = CompressedRistretto(s);
            if c != canonical
                && c.decompress().is_some()
                && encoding::decode_compressed(&c) == Ok(m)
            {
                tags += 1;
            }
        }
    }
    assert_eq!(tags, 0, "{tags} non-canonical encodings of {m} accepted");
    assert_eq!(encoding::decode_compressed(&canonical), Ok(m));
    // m = 0 is not the identity, and the identity decodes to nothing.
    assert!(!encoding::encode_u64(0).unwrap().is_identity());
    assert_eq!(
        encoding::decode_u64(&RistrettoPoint::identity()),
        Err(MessageError::NotInMessageSpace)
    );
    // Encoder and decoder share the counter bound: a valid point with a
    // counter at or above it is refused.
    let above = (CTR_LIMIT..(1 << 15))
        .map(|ctr| {
            let mut s = [0u8; 32];
            s[0] = ((ctr & 0x7f) as u8) << 1;
            s[1] = (ctr >> 7) as u8;
            s[2..10].copy_from_slice(&m.to_le_bytes());
            s[10] = 1;
            CompressedRistretto(s)
        })
        .find(|c| c.decompress().is_some())
        .unwrap();
    assert_eq!(
        encoding::decode_compressed(&above),
        Err(MessageError::NotInMessageSpace)
    );
}

// ---------------------------------------------------------------------------
// 7. Lagrange coefficients on bad indices.

#[test]
fn lagrange_at_zero_rejects_duplicate_and_zero_indices() {
    for bad in [&[1u32, 1, 2][..], &[0, 1, 2][..], &[][..]] {
        assert_eq!(
            lagrange_at_zero(bad),
            Err(ThresholdError::BadIndices {
                indices: bad.to_vec()
            })
        );
    }
    assert!(lagrange_at_zero(&[1, 2, 3]).is_ok());
}
