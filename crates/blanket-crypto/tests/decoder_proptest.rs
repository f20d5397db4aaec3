//! Property-based decoder fuzzing on stable (issue 17, item 4): proptest
//! drives the two proof-of-shuffle decoders (Bayer-Groth and
//! Terelius-Wikstrom) and the ciphertext-list decoder with arbitrary byte
//! strings and with mutations of valid encodings (byte overwrites,
//! truncations, extensions, count fields). Property: the decoder returns a
//! typed error or, if it accepts, re-encodes to exactly its input (accepted
//! encodings are canonical); it never panics. Case counts are fixed so the
//! run is bounded (a few seconds).

use std::sync::OnceLock;

use blanket_crypto::elgamal::{decode_ciphertexts, encode_ciphertexts, Ciphertext, Keypair};
use blanket_crypto::shuffle::bayer_groth::{self, BgProof, CommitmentKey};
use blanket_crypto::shuffle::{self, Generators, ShuffleProof};
use proptest::prelude::*;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

struct Samples {
    bg: Vec<u8>,
    bg_padded: Vec<u8>,
    tw: Vec<u8>,
    list: Vec<u8>,
}

fn samples() -> &'static Samples {
    static S: OnceLock<Samples> = OnceLock::new();
    S.get_or_init(|| {
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let kp = Keypair::generate(&mut rng);
        let cts: Vec<Ciphertext> = (0..10u64)
            .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
            .collect();
        let ck = CommitmentKey::for_len(130).unwrap();
        let (_, bg) =
            bayer_groth::shuffle_and_prove(&ck, &kp.public, &cts, b"p", &mut rng).unwrap();
        let cts130: Vec<Ciphertext> = (0..130u64)
            .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
            .collect();
        let (_, bg_padded) =
            bayer_groth::shuffle_and_prove(&ck, &kp.public, &cts130, b"p", &mut rng).unwrap();
        let gens = Generators::new(4);
        let (_, tw) =
            shuffle::shuffle_and_prove(&gens, &kp.public, &cts[..4], b"p", &mut rng).unwrap();
        Samples {
            bg: bg.to_bytes(),
            bg_padded: bg_padded.to_bytes(),
            tw: tw.to_bytes(),
            list: encode_ciphertexts(&cts),
        }
    })
}

fn bg(b: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(p) = BgProof::from_bytes(b) {
        prop_assert_eq!(p.to_bytes(), b.to_vec());
    }
    Ok(())
}

fn tw(b: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(p) = ShuffleProof::from_bytes(b) {
        prop_assert_eq!(p.to_bytes(), b.to_vec());
    }
    Ok(())
}

fn list(b: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(l) = decode_ciphertexts(b) {
        prop_assert_eq!(encode_ciphertexts(&l), b.to_vec());
    }
    Ok(())
}

/// A valid encoding with some bytes overwritten, then cut or extended.
fn mutate(base: &[u8], edits: &[(usize, u8)], cut: usize, extend: usize) -> Vec<u8> {
    let mut b = base.to_vec();
    for &(i, v) in edits {
        let i = i % b.len();
        b[i] = v;
    }
    let keep = b.len() - cut.min(b.len());
    b.truncate(keep);
    b.extend(std::iter::repeat_n(0u8, extend));
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..2048)) {
        bg(&b)?;
        tw(&b)?;
        list(&b)?;
    }

    #[test]
    fn arbitrary_bytes_with_valid_header(count in 0u32..200, rest in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let mut b = count.to_le_bytes().to_vec();
        b.extend(rest);
        bg(&b)?;
        tw(&b)?;
        list(&b)?;
    }

    #[test]
    fn mutated_valid_encodings(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        cut in prop_oneof![Just(0usize), 0usize..64],
        extend in prop_oneof![Just(0usize), 0usize..64],
        count in proptest::option::of(any::<u32>()),
    ) {
        let s = samples();
        for (base, f) in [
            (&s.bg, bg as fn(&[u8]) -> Result<(), TestCaseError>),
            (&s.bg_padded, bg),
            (&s.tw, tw),
            (&s.list, list),
        ] {
            let mut b = mutate(base, &edits, cut, extend);
            if let (Some(c), true) = (count, b.len() >= 4) {
                b[..4].copy_from_slice(&c.to_le_bytes());
            }
            f(&b)?;
        }
    }
}

#[test]
fn unmutated_samples_roundtrip() {
    let s = samples();
    assert_eq!(BgProof::from_bytes(&s.bg).unwrap().to_bytes(), s.bg);
    assert_eq!(
        BgProof::from_bytes(&s.bg_padded).unwrap().to_bytes(),
        s.bg_padded
    );
    assert_eq!(ShuffleProof::from_bytes(&s.tw).unwrap().to_bytes(), s.tw);
}
