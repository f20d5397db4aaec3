//! Robustness of every wire decoder on malformed input (a stable,
//! deterministic stand-in for the cargo-fuzz targets in `fuzz/`): random
//! byte strings, and valid encodings with bit flips, truncations,
//! extensions and overwritten count fields. Every decoder must return a typed
//! error or, if it accepts, re-encode to exactly its input.

use blanket_crypto::channel::{Channel, SealedMessage};
use blanket_crypto::dkg::{Dealer, Dealing, DkgParams, SecretShare};
use blanket_crypto::dleq::DleqProof;
use blanket_crypto::elgamal::{
    decode_ciphertexts, encode_ciphertexts, Ciphertext, Keypair, PublicKey,
};
use blanket_crypto::schnorr::SchnorrProof;
use blanket_crypto::shuffle::bayer_groth::{self, BgProof, CommitmentKey};
use blanket_crypto::shuffle::{self, AnyShuffleProof, Generators, ShuffleProof};
use blanket_crypto::submission::{encrypt_with_proof, ClientSubmission, SubmissionContext};
use blanket_crypto::threshold::PartialDecryption;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

type Decoder = fn(&[u8]) -> Option<Vec<u8>>;

fn decoders() -> Vec<(&'static str, Decoder)> {
    vec![
        ("ciphertext", |b| {
            Ciphertext::from_bytes(b)
                .ok()
                .map(|c| c.to_bytes().to_vec())
        }),
        ("ciphertext list", |b| {
            decode_ciphertexts(b).ok().map(|l| encode_ciphertexts(&l))
        }),
        ("public key", |b| {
            PublicKey::from_bytes(b).ok().map(|k| k.to_bytes().to_vec())
        }),
        ("shuffle proof", |b| {
            ShuffleProof::from_bytes(b).ok().map(|p| p.to_bytes())
        }),
        ("dleq proof", |b| {
            DleqProof::from_bytes(b).ok().map(|p| p.to_bytes().to_vec())
        }),
        ("partial decryption", |b| {
            PartialDecryption::from_bytes(b).ok().map(|p| p.to_bytes())
        }),
        ("dealing", |b| {
            Dealing::from_bytes(b).ok().map(|d| d.to_bytes())
        }),
        ("secret share", |b| {
            SecretShare::from_bytes(b)
                .ok()
                .map(|s| s.to_bytes().to_vec())
        }),
        ("sealed message", |b| {
            SealedMessage::from_bytes(b).ok().map(|m| m.to_bytes())
        }),
        ("schnorr proof", |b| {
            SchnorrProof::from_bytes(b)
                .ok()
                .map(|p| p.to_bytes().to_vec())
        }),
        ("client submission", |b| {
            ClientSubmission::from_bytes(b)
                .ok()
                .map(|s| s.to_bytes().to_vec())
        }),
        ("bayer-groth proof", |b| {
            BgProof::from_bytes(b).ok().map(|p| p.to_bytes())
        }),
        ("tagged shuffle proof", |b| {
            AnyShuffleProof::from_bytes(b).ok().map(|p| p.to_bytes())
        }),
    ]
}

/// One valid encoding per decoder, in the same order as `decoders()`.
fn valid_samples() -> Vec<Vec<u8>> {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let kp = Keypair::generate(&mut rng);
    let cts: Vec<Ciphertext> = (0..3u64)
        .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    let gens = Generators::new(3);
    let (_, proof) = shuffle::shuffle_and_prove(&gens, &kp.public, &cts, b"x", &mut rng).unwrap();
    let ck = CommitmentKey::for_len(3).unwrap();
    let (_, bg_proof) =
        bayer_groth::shuffle_and_prove(&ck, &kp.public, &cts, b"x", &mut rng).unwrap();
    let params = DkgParams::new(3, 2, b"decoders").unwrap();
    let dealers: Vec<Dealer> = (1..=3)
        .map(|i| Dealer::new(params, i, &mut rng).unwrap())
        .collect();
    let dealings: Vec<Dealing> = dealers.iter().map(Dealer::dealing).collect();
    let shares: Vec<SecretShare> = dealers.iter().map(|d| d.share_for(1).unwrap()).collect();
    let ks = blanket_crypto::dkg::key_share(&params, 1, &dealings, &shares).unwrap();
    let partial = ks.partial_decrypt(&cts, b"x", &mut rng);
    let other = Keypair::generate(&mut rng);
    let mut ch = Channel::establish(1, &kp, 2, &other.public, &mut rng).unwrap();
    let sealed = ch.seal(1, b"hello relay").unwrap();
    let ctx = SubmissionContext {
        run: b"r",
        task: b"t",
    };
    let sub = encrypt_with_proof(&kp.public, 9, 4, &ctx, &mut rng).unwrap();
    vec![
        cts[0].to_bytes().to_vec(),
        encode_ciphertexts(&cts),
        kp.public.to_bytes().to_vec(),
        proof.to_bytes(),
        partial.proof.to_bytes().to_vec(),
        partial.to_bytes(),
        dealings[0].to_bytes(),
        shares[0].to_bytes().to_vec(),
        sealed.to_bytes(),
        dealings[0].proof.to_bytes().to_vec(),
        sub.to_bytes().to_vec(),
        bg_proof.to_bytes(),
        AnyShuffleProof::BayerGroth(bg_proof.clone()).to_bytes(),
    ]
}

fn check(name: &str, dec: Decoder, input: &[u8]) {
    if let Some(re) = dec(input) {
        assert_eq!(re, input, "{name}: accepted a non-canonical encoding");
    }
}

#[test]
fn valid_samples_roundtrip() {
    for ((name, dec), s) in decoders().into_iter().zip(valid_samples()) {
        assert_eq!(dec(&s).as_deref(), Some(&s[..]), "{name}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for (name, dec) in decoders() {
        for len in [
            0usize, 1, 3, 4, 8, 16, 24, 31, 32, 33, 40, 63, 64, 65, 68, 72, 100, 133, 137, 452,
            1000,
        ] {
            for _ in 0..20 {
                let mut b = vec![0u8; len];
                rng.fill_bytes(&mut b);
                check(name, dec, &b);
            }
        }
    }
}

#[test]
fn mutated_valid_encodings_never_panic() {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    for ((name, dec), s) in decoders().into_iter().zip(valid_samples()) {
        // Every truncation and a few extensions.
        for cut in 0..s.len() {
            check(name, dec, &s[..cut]);
        }
        for extra in 1..40 {
            let mut b = s.clone();
            b.extend(std::iter::repeat_n(0u8, extra));
            check(name, dec, &b);
        }
        // Random single-bit flips, and random 4-byte overwrites (which hit
        // count and length fields).
        for _ in 0..300 {
            let mut b = s.clone();
            let i = (rng.next_u32() as usize) % b.len();
            b[i] ^= 1 << (rng.next_u32() % 8);
            check(name, dec, &b);
            let mut b = s.clone();
            let i = (rng.next_u32() as usize) % b.len().saturating_sub(3).max(1);
            let v = rng.next_u32().to_le_bytes();
            for (k, x) in v.iter().enumerate() {
                if let Some(y) = b.get_mut(i + k) {
                    *y = *x;
                }
            }
            check(name, dec, &b);
        }
        // Huge count fields at the usual offsets.
        for off in [0usize, 4, 20] {
            for v in [u32::MAX, 1 << 24, (1 << 24) + 1, 0] {
                let mut b = s.clone();
                if b.len() >= off + 4 {
                    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
                    check(name, dec, &b);
                }
            }
        }
    }
}
