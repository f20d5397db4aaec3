//! Who is client i: every registration proves knowledge of the registered key, and every
//! message post is signed with it (a Schnorr signature, [`blanket_crypto::schnorr`], over the
//! task, the client index, the request number and the SHA-256 of the body). The trust
//! argument is in `docs/protocol.md`, "Over the network": the relay's `receive(from, ..)`
//! needs an authenticated `from`, and the only party able to sign for index i is the holder
//! of the key the directory (and every other client's channel) binds to i.

use blanket_crypto::schnorr::{self, SchnorrProof};
use blanket_crypto::transcript::ProofTranscript;
use blanket_crypto::{Keypair, PublicKey};
use rand_core06::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};

const REGISTER: &[u8] = b"blanket/relay/v1/register";
const POST: &[u8] = b"blanket/relay/v1/post";

/// Header carrying the request number of a post.
pub const SEQ_HEADER: &str = "blanket-seq";
/// Header carrying the signature of a post (64 bytes, hex).
pub const SIGNATURE_HEADER: &str = "blanket-signature";

fn register_transcript(task: &[u8; 16]) -> ProofTranscript {
    let mut t = ProofTranscript::new(REGISTER);
    t.append_bytes(b"task", task);
    t
}

fn post_transcript(task: &[u8; 16], client: u32, seq: u64, body: &[u8]) -> ProofTranscript {
    let mut t = ProofTranscript::new(POST);
    t.append_bytes(b"task", task);
    t.append_u64(b"client", u64::from(client));
    t.append_u64(b"seq", seq);
    t.append_bytes(b"body", &Sha256::digest(body));
    t
}

/// The proof of possession sent with a registration.
pub fn register_proof<R: RngCore + CryptoRng>(
    task: &[u8; 16],
    keys: &Keypair,
    rng: &mut R,
) -> SchnorrProof {
    schnorr::prove_keypair_in(register_transcript(task), keys, rng)
}

/// Checks a registration's proof of possession.
pub fn verify_register(task: &[u8; 16], key: &PublicKey, proof: &SchnorrProof) -> bool {
    schnorr::verify_in(register_transcript(task), key.point(), proof).is_ok()
}

/// The signature of post number `seq` of client `client` with this body.
pub fn sign_post<R: RngCore + CryptoRng>(
    task: &[u8; 16],
    client: u32,
    seq: u64,
    body: &[u8],
    keys: &Keypair,
    rng: &mut R,
) -> SchnorrProof {
    schnorr::prove_keypair_in(post_transcript(task, client, seq, body), keys, rng)
}

/// Checks a post's signature under the client's registered key.
pub fn verify_post(
    task: &[u8; 16],
    client: u32,
    seq: u64,
    body: &[u8],
    key: &PublicKey,
    sig: &SchnorrProof,
) -> bool {
    schnorr::verify_in(post_transcript(task, client, seq, body), key.point(), sig).is_ok()
}

/// Frames the envelopes of one post: `u32 count`, then `u32 length` and the bytes of each
/// (little-endian).
pub fn frame(envelopes: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + envelopes.iter().map(|e| 4 + e.len()).sum::<usize>());
    out.extend_from_slice(&(envelopes.len() as u32).to_le_bytes());
    for e in envelopes {
        out.extend_from_slice(&(e.len() as u32).to_le_bytes());
        out.extend_from_slice(e);
    }
    out
}

/// Splits a framed body; `None` if the framing is broken (counts or lengths past the end,
/// trailing bytes, no envelope, or more than `max` envelopes).
pub fn unframe(body: &[u8], max: usize) -> Option<Vec<&[u8]>> {
    let take4 = |b: &[u8], at: usize| -> Option<u32> {
        b.get(at..at + 4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let n = take4(body, 0)? as usize;
    if n == 0 || n > max {
        return None;
    }
    let mut at = 4;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = take4(body, at)? as usize;
        at += 4;
        out.push(body.get(at..at.checked_add(len)?)?);
        at += len;
    }
    (at == body.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha03::ChaCha20Rng;
    use rand_core06::SeedableRng;

    #[test]
    fn a_post_signature_binds_task_client_seq_and_body() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let keys = Keypair::generate(&mut rng);
        let task = [3u8; 16];
        let sig = sign_post(&task, 5, 7, b"body", &keys, &mut rng);
        assert!(verify_post(&task, 5, 7, b"body", &keys.public, &sig));
        assert!(!verify_post(&[4u8; 16], 5, 7, b"body", &keys.public, &sig));
        assert!(!verify_post(&task, 6, 7, b"body", &keys.public, &sig));
        assert!(!verify_post(&task, 5, 8, b"body", &keys.public, &sig));
        assert!(!verify_post(&task, 5, 7, b"bodz", &keys.public, &sig));
        let other = Keypair::generate(&mut rng);
        assert!(!verify_post(&task, 5, 7, b"body", &other.public, &sig));
        let pop = register_proof(&task, &keys, &mut rng);
        assert!(verify_register(&task, &keys.public, &pop));
        assert!(!verify_register(&task, &other.public, &pop));
    }

    #[test]
    fn framing_round_trips_and_rejects_bad_lengths() {
        let f = frame(&[b"ab".to_vec(), b"".to_vec(), b"xyz".to_vec()]);
        let parts = unframe(&f, 8).unwrap();
        assert_eq!(parts, vec![&b"ab"[..], &b""[..], &b"xyz"[..]]);
        assert!(unframe(&f[..f.len() - 1], 8).is_none());
        let mut longer = f.clone();
        longer.push(0);
        assert!(unframe(&longer, 8).is_none());
        assert!(unframe(&f, 2).is_none());
        assert!(unframe(&frame(&[]), 8).is_none());
        assert!(unframe(&[1, 0, 0, 0, 255, 255, 255, 255], 8).is_none());
    }
}
