//! Who is client i: every registration proves knowledge of the registered key (bound to the
//! task, the index and the enrollment token, [`register_proof`]), and every message post is
//! signed with it (a Schnorr signature, [`blanket_crypto::schnorr`], over the
//! task, the client index, the request number and the SHA-256 of the body). The trust
//! argument is in `docs/protocol.md`, "Over the network": the relay's `receive(from, ..)`
//! needs an authenticated `from`, and the only party able to sign for index i is the holder
//! of the key the directory (and every other client's channel) binds to i.

use blanket_crypto::schnorr::{self, SchnorrProof};
use blanket_crypto::transcript::ProofTranscript;
use blanket_crypto::{Keypair, PublicKey};
use rand_core06::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};

const REGISTER: &[u8] = b"blanket/relay/v2/register";
const ENROLLMENT: &[u8] = b"blanket/relay/v1/enrollment";

/// Bytes of an enrollment token.
pub const TOKEN_BYTES: usize = 32;
const POST: &[u8] = b"blanket/relay/v1/post";

/// Header carrying the request number of a post.
pub const SEQ_HEADER: &str = "blanket-seq";
/// Header carrying the signature of a post (64 bytes, hex).
pub const SIGNATURE_HEADER: &str = "blanket-signature";

/// What a registration binds: the task, the index asked for (or the relay's choice, `None`,
/// on an open task) and SHA-256 of the enrollment token (32 zero bytes without one), so a
/// captured registration replays at no other index, with no other token, for no other task.
fn register_transcript(
    task: &[u8; 16],
    index: Option<u32>,
    token: Option<&[u8; TOKEN_BYTES]>,
) -> ProofTranscript {
    let mut t = ProofTranscript::new(REGISTER);
    t.append_bytes(b"task", task);
    match index {
        Some(i) => {
            t.append_u64(b"index-given", 1);
            t.append_u64(b"index", u64::from(i));
        }
        None => t.append_u64(b"index-given", 0),
    }
    let token_digest: [u8; 32] = token.map_or([0; 32], |k| Sha256::digest(k).into());
    t.append_bytes(b"token", &token_digest);
    t
}

/// What the relay stores of enrollment token `token` for index `index` of `task`: SHA-256 of
/// a domain separator, the task, the index and the token (the token is 256 random bits, so the
/// hash reveals nothing usable and a database reader cannot register).
pub fn token_hash(task: &[u8; 16], index: u32, token: &[u8; TOKEN_BYTES]) -> [u8; 32] {
    Sha256::new()
        .chain_update(ENROLLMENT)
        .chain_update(task)
        .chain_update(index.to_le_bytes())
        .chain_update(token)
        .finalize()
        .into()
}

/// Whether two hashes are equal, in time independent of where they differ.
pub fn hashes_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn post_transcript(task: &[u8; 16], client: u32, seq: u64, body: &[u8]) -> ProofTranscript {
    let mut t = ProofTranscript::new(POST);
    t.append_bytes(b"task", task);
    t.append_u64(b"client", u64::from(client));
    t.append_u64(b"seq", seq);
    t.append_bytes(b"body", &Sha256::digest(body));
    t
}

/// The proof of possession sent with a registration for `index` (`None`: the relay's choice,
/// open tasks only) with enrollment token `token` (tasks with admission tokens).
pub fn register_proof<R: RngCore + CryptoRng>(
    task: &[u8; 16],
    index: Option<u32>,
    token: Option<&[u8; TOKEN_BYTES]>,
    keys: &Keypair,
    rng: &mut R,
) -> SchnorrProof {
    schnorr::prove_keypair_in(register_transcript(task, index, token), keys, rng)
}

/// Checks a registration's proof of possession for this task, index and token.
pub fn verify_register(
    task: &[u8; 16],
    index: Option<u32>,
    token: Option<&[u8; TOKEN_BYTES]>,
    key: &PublicKey,
    proof: &SchnorrProof,
) -> bool {
    schnorr::verify_in(register_transcript(task, index, token), key.point(), proof).is_ok()
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
        let token = [9u8; TOKEN_BYTES];
        let pop = register_proof(&task, Some(2), Some(&token), &keys, &mut rng);
        assert!(verify_register(
            &task,
            Some(2),
            Some(&token),
            &keys.public,
            &pop
        ));
        assert!(!verify_register(
            &task,
            Some(2),
            Some(&token),
            &other.public,
            &pop
        ));
        // The index, the token and the task are bound.
        assert!(!verify_register(
            &task,
            Some(3),
            Some(&token),
            &keys.public,
            &pop
        ));
        assert!(!verify_register(
            &task,
            None,
            Some(&token),
            &keys.public,
            &pop
        ));
        assert!(!verify_register(&task, Some(2), None, &keys.public, &pop));
        assert!(!verify_register(
            &task,
            Some(2),
            Some(&[8u8; 32]),
            &keys.public,
            &pop
        ));
        assert!(!verify_register(
            &[4u8; 16],
            Some(2),
            Some(&token),
            &keys.public,
            &pop
        ));
        let open = register_proof(&task, None, None, &keys, &mut rng);
        assert!(verify_register(&task, None, None, &keys.public, &open));
        assert!(!verify_register(&task, Some(0), None, &keys.public, &open));
        assert!(hashes_equal(
            &token_hash(&task, 1, &token),
            &token_hash(&task, 1, &token)
        ));
        assert!(!hashes_equal(
            &token_hash(&task, 1, &token),
            &token_hash(&task, 2, &token)
        ));
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
