//! Wire messages: checked-in test vectors (one per kind), and every decoder
//! refuses truncated input and survives bit flips (a flipped input either
//! fails with a typed error or decodes to a message that re-encodes to
//! exactly the flipped bytes: encodings are canonical).

use blanket_crypto::channel::Channel;
use blanket_crypto::dkg::{Dealer, DkgParams};
use blanket_crypto::reencrypt::{self, ReencryptContext};
use blanket_crypto::shuffle::{self, AnyShuffleProof, ProofSystem, ShuffleSetup};
use blanket_crypto::submission::{encrypt_with_proof, SubmissionContext};
use blanket_crypto::{Keypair, SecretKey};
use blanket_protocol::evidence::{self, Attestation, ChainLink, LaneChain, SignedComplaint};
use blanket_protocol::wire::{Envelope, Message, WireError, COLUMN_LANE, HEADER_BYTES, RELAY_ID};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const RUN: [u8; 16] = *b"blanket-vectors!";

fn vectors() -> Vec<(&'static str, Envelope)> {
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let keys: Vec<Keypair> = (0..3).map(|_| Keypair::generate(&mut rng)).collect();
    let members: Vec<(u32, blanket_crypto::PublicKey)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (i as u32 + 10, k.public))
        .collect();
    let params = DkgParams::new(3, 2, b"vectors").unwrap();
    let dealer = Dealer::new(params, 1, &mut rng).unwrap();
    let mut ch = Channel::establish(10, &keys[0], 11, &keys[1].public, &mut rng).unwrap();
    let sealed = ch
        .seal(1, dealer.share_for(2).unwrap().to_bytes().as_ref())
        .unwrap();
    let sk = SecretKey::random(&mut rng);
    let pk = sk.public_key();
    let ctx = SubmissionContext {
        run: &RUN,
        task: b"t",
    };
    let sub = encrypt_with_proof(&pk, 5, 12, &ctx, &mut rng).unwrap();
    let list: Vec<_> = (0..3u64)
        .map(|m| pk.encrypt(m, &mut rng).unwrap())
        .collect();
    let tw = ShuffleSetup::new(ProofSystem::TereliusWikstrom, 3).unwrap();
    let (out, proof) = shuffle::shuffle_and_prove_with(&tw, &pk, &list, b"ctx", &mut rng).unwrap();
    let p1 = DkgParams::new(1, 1, b"vectors-1").unwrap();
    let d1 = Dealer::new(p1, 1, &mut rng).unwrap();
    let share =
        blanket_crypto::dkg::key_share(&p1, 1, &[d1.dealing()], &[d1.share_for(1).unwrap()])
            .unwrap();
    let partial = share.partial_decrypt(&list, b"ctx", &mut rng);
    // Drawn last so that the earlier vectors keep their randomness.
    let bg = ShuffleSetup::new(ProofSystem::BayerGroth, 3).unwrap();
    let (out_bg, proof_bg) =
        shuffle::shuffle_and_prove_with(&bg, &pk, &list, b"ctx", &mut rng).unwrap();
    assert!(matches!(proof_bg, AnyShuffleProof::BayerGroth(_)));
    // Per-lane key committee messages (drawn after all the others).
    let targets = vec![pk; 3];
    let rctx = ReencryptContext { run: &RUN, lane: 4 };
    let reenc = reencrypt::reencrypt(&share, &out, &targets, &rctx, &mut rng).unwrap();
    let lane_partial = share.partial_decrypt(&out, b"lane ctx", &mut rng);
    let c1s: Vec<_> = out.iter().map(|c| c.c1).collect();
    // Evidence against a malicious relay (version 3, drawn after the rest).
    let complaint = evidence::sign_complaint(params.session(), 2, &[1, 3], &keys[1], &mut rng);
    let attestation = dealer.attest(&evidence::attest_context(&RUN, 10), &keys[0], &mut rng);
    let d_in = evidence::list_digest(&list);
    let d_out = evidence::list_digest(&out);
    let shuffle_sig = evidence::sign_shuffle(&RUN, 0, 0, 13, &d_in, &d_out, &keys[2], &mut rng);
    let chain = LaneChain {
        lane: 0,
        len: 3,
        c2_digest: evidence::c2_digest(&out),
        digests: vec![d_in, d_out],
        links: vec![ChainLink {
            shuffler: 13,
            key: keys[2].public,
            signature: shuffle_sig,
        }],
    };
    let attested = vec![Attestation {
        client: 10,
        key: keys[0].public,
        a0: dealer.dealing().commitments()[0],
        proof: attestation,
    }];
    let env = |round, sender, recipient, message| Envelope {
        run: RUN,
        round,
        sender,
        recipient,
        message,
    };
    vec![
        (
            "dkg-start",
            env(
                1,
                RELAY_ID,
                10,
                Message::DkgStart {
                    threshold: 2,
                    members,
                },
            ),
        ),
        (
            "dkg-deal",
            env(
                1,
                10,
                RELAY_ID,
                Message::DkgDeal {
                    dealing: dealer.dealing(),
                    attestation,
                    shares: vec![sealed.clone()],
                },
            ),
        ),
        (
            "dkg-shares",
            env(
                2,
                RELAY_ID,
                11,
                Message::DkgShares {
                    dealings: vec![dealer.dealing()],
                    shares: vec![sealed],
                },
            ),
        ),
        (
            "dkg-complaints",
            env(
                2,
                11,
                RELAY_ID,
                Message::DkgComplaints {
                    dealers: vec![1, 3],
                    signature: complaint,
                },
            ),
        ),
        (
            "dkg-reveal-request",
            env(
                3,
                RELAY_ID,
                10,
                Message::DkgRevealRequest {
                    complaints: vec![SignedComplaint {
                        complainer: 2,
                        dealers: vec![1, 3],
                        signature: complaint,
                    }],
                },
            ),
        ),
        (
            "dkg-reveal",
            env(
                3,
                10,
                RELAY_ID,
                Message::DkgReveal {
                    shares: vec![dealer.share_for(2).unwrap()],
                },
            ),
        ),
        (
            "key-announce",
            env(
                4,
                RELAY_ID,
                11,
                Message::KeyAnnounce {
                    public_key: pk,
                    messages: 1,
                    qualified: vec![1, 2, 3],
                    revealed: vec![dealer.share_for(2).unwrap()],
                    evidence: attested.clone(),
                },
            ),
        ),
        (
            "submit",
            env(
                4,
                12,
                RELAY_ID,
                Message::Submit {
                    submissions: vec![sub],
                },
            ),
        ),
        (
            "shuffle-request",
            env(
                5,
                RELAY_ID,
                13,
                Message::ShuffleRequest {
                    lane: 0,
                    stage: 0,
                    list,
                },
            ),
        ),
        (
            "shuffle-response",
            env(
                5,
                13,
                RELAY_ID,
                Message::ShuffleResponse {
                    lane: 0,
                    stage: 0,
                    signature: shuffle_sig,
                    list: out.clone(),
                    proof,
                },
            ),
        ),
        (
            "shuffle-response-bg",
            env(
                5,
                13,
                RELAY_ID,
                Message::ShuffleResponse {
                    lane: 0,
                    stage: 0,
                    signature: shuffle_sig,
                    list: out_bg,
                    proof: proof_bg,
                },
            ),
        ),
        (
            "decrypt-request",
            env(
                6,
                RELAY_ID,
                10,
                Message::DecryptRequest {
                    c1: out.iter().map(|c| c.c1).collect(),
                    chains: vec![chain.clone()],
                },
            ),
        ),
        (
            "decrypt-response",
            env(6, 10, RELAY_ID, Message::DecryptResponse { partial }),
        ),
        (
            "lane-key-announce",
            env(
                4,
                RELAY_ID,
                11,
                Message::LaneKeyAnnounce {
                    messages: 2,
                    slot_keys: vec![pk, keys[0].public],
                    lane_keys: vec![(3, pk), (COLUMN_LANE | 1, keys[1].public)],
                    served: vec![3],
                    qualified: vec![1, 2, 3],
                    revealed: vec![dealer.share_for(2).unwrap()],
                    evidence: vec![attested.clone(), attested],
                },
            ),
        ),
        (
            "reencrypt-request",
            env(
                6,
                RELAY_ID,
                10,
                Message::ReencryptRequest {
                    lanes: vec![(4, c1s.clone())],
                    chains: vec![LaneChain {
                        lane: 4,
                        ..chain.clone()
                    }],
                },
            ),
        ),
        (
            "reencrypt-response",
            env(
                6,
                10,
                RELAY_ID,
                Message::ReencryptResponse {
                    partials: vec![(4, reenc)],
                },
            ),
        ),
        (
            "lane-decrypt-request",
            env(
                8,
                RELAY_ID,
                10,
                Message::LaneDecryptRequest {
                    lanes: vec![(COLUMN_LANE | 2, c1s)],
                    chains: vec![LaneChain {
                        lane: COLUMN_LANE | 2,
                        ..chain
                    }],
                },
            ),
        ),
        (
            "lane-decrypt-response",
            env(
                8,
                10,
                RELAY_ID,
                Message::LaneDecryptResponse {
                    partials: vec![(COLUMN_LANE | 2, lane_partial)],
                },
            ),
        ),
    ]
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/wire_v3.txt");

#[test]
fn checked_in_vectors_match_and_round_trip() {
    let generated: Vec<(&str, Vec<u8>)> = vectors()
        .into_iter()
        .map(|(k, e)| (k, e.to_bytes()))
        .collect();
    if std::env::var("BLANKET_UPDATE_VECTORS").is_ok() {
        let mut s = String::from("# blanket-protocol wire vectors, envelope version 3: kind hex\n");
        for (k, b) in &generated {
            s.push_str(&format!("{k} {}\n", hex(b)));
        }
        std::fs::write(PATH, s).unwrap();
    }
    let file = std::fs::read_to_string(PATH).unwrap();
    let stored: Vec<(String, Vec<u8>)> = file
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, h) = l.split_once(' ').unwrap();
            (k.to_string(), unhex(h))
        })
        .collect();
    // One vector per message kind, and the shuffle response with either proof.
    assert_eq!(
        stored.len(),
        18,
        "one vector per message kind and proof system"
    );
    assert_eq!(stored.len(), generated.len());
    for ((k, b), (gk, gb)) in stored.iter().zip(&generated) {
        assert_eq!(k, gk);
        assert_eq!(hex(b), hex(gb), "vector {k} changed");
        let env = Envelope::from_bytes(b).unwrap();
        assert_eq!(env.to_bytes(), *b, "{k} round trip");
    }
}

#[test]
fn truncated_messages_are_refused() {
    for (k, env) in vectors() {
        let b = env.to_bytes();
        for len in 0..b.len() {
            let e = Envelope::from_bytes(&b[..len]);
            assert!(e.is_err(), "{k} truncated to {len} decoded");
        }
        // Truncated payload with a consistent length field: still refused.
        if b.len() > HEADER_BYTES {
            let mut short = b[..b.len() - 1].to_vec();
            let len = (short.len() - HEADER_BYTES) as u32;
            short[HEADER_BYTES - 4..HEADER_BYTES].copy_from_slice(&len.to_le_bytes());
            assert!(
                Envelope::from_bytes(&short).is_err(),
                "{k} short payload decoded"
            );
        }
    }
}

#[test]
fn header_bit_flips_give_typed_errors() {
    let (_, env) = vectors().remove(3);
    let b = env.to_bytes();
    let mut v = b.clone();
    v[0] ^= 1;
    assert!(matches!(
        Envelope::from_bytes(&v),
        Err(WireError::UnknownVersion { .. })
    ));
    let mut v = b.clone();
    v[1] ^= 0x40;
    assert!(matches!(
        Envelope::from_bytes(&v),
        Err(WireError::UnknownKind(_))
    ));
    let mut v = b.clone();
    v[HEADER_BYTES - 4] ^= 1;
    assert!(matches!(
        Envelope::from_bytes(&v),
        Err(WireError::WrongLength { .. })
    ));
    let mut v = b.clone();
    v[HEADER_BYTES - 1] ^= 0x80;
    assert!(matches!(
        Envelope::from_bytes(&v),
        Err(WireError::TooLarge { .. })
    ));
}

#[test]
fn bit_flips_are_refused_or_canonical() {
    for (k, env) in vectors() {
        let b = env.to_bytes();
        // Every bit of small messages, every 7th bit of large ones.
        let step = if b.len() > 600 { 7 } else { 1 };
        for bit in (0..b.len() * 8).step_by(step) {
            let mut v = b.clone();
            v[bit / 8] ^= 1 << (bit % 8);
            if let Ok(e) = Envelope::from_bytes(&v) {
                assert_eq!(e.to_bytes(), v, "{k}: bit {bit} decoded non-canonically");
            }
        }
    }
}
