//! The message space: unsigned 64-bit integers embedded *into* a ristretto255
//! point (not into the exponent).
//!
//! blanket's design (the paper only says messages are small integers),
//! version 2 ([`ENCODING_VERSION`]; issue 9, item 6). A message `m: u64` is
//! mapped to the group element whose canonical 32-byte encoding `s` is
//!
//! ```text
//!   s[0]      = (ctr & 0x7f) << 1     (even: a canonical encoding is "non-negative")
//!   s[1]      = ctr >> 7              (ctr < CTR_LIMIT = 192, a try-and-increment counter)
//!   s[2..10]  = m, little-endian
//!   s[10]     = 1                     (marker: s != 0, so no message maps to the identity)
//!   s[11..32] = 0                     (so s < 2^81 < p: always reduced)
//! ```
//!
//! for the smallest `ctr` for which `s` decompresses (one candidate in four
//! does, measured 0.249).
//!
//! - One point per message: the decoder accepts `s` only if `ctr` is that
//!   smallest counter (it checks that no smaller counter decompresses).
//!   Version 1 accepted any valid counter, so about 4,000 points decoded to
//!   each message and a client could tag its value with the choice.
//! - Encoder and decoder share the bound [`CTR_LIMIT`].
//! - `m = 0` no longer encodes to the identity (version 1 gave `s = 0`).
//! - Constant number of attempts: the encoder always tries all
//!   [`CTR_LIMIT`] counters and keeps the first valid one with
//!   constant-time selection (`subtle`); each attempt is a ristretto255
//!   decompression, whose time does not depend on its input for these
//!   canonical, non-negative `s` (curve25519-dalek's `decompress` branches
//!   only on the final validity flags). So encoding time does not depend on
//!   `m`. The price: about 192 decompressions (about 1 ms) per message, once
//!   per client. The chance that none of the 192 counters works for a given
//!   `m` is `(3/4)^192 < 2^-79`, so among all 2^64 messages one expects
//!   2^-15 that cannot be encoded ([`MessageError::EncodingFailed`], never a
//!   wrong encoding). [`encode_u64_vartime`] stops at the first valid
//!   counter, for messages that are not secret (tests, benchmarks, padding).
//!
//! Decoding is one point compression, a check of the fixed bytes, and the
//! canonicity check (on average 3 more decompressions): about 20
//! microseconds, with no table and no discrete logarithm; it runs on
//! shuffled, decrypted (public) outputs, so it is variable-time. It returns
//! a typed error for any group element outside the image of the encoding (a
//! random element lands in it with probability about 2^-184).
//!
//! Compared with exponent ElGamal (g^m) this gives 64-bit messages in a single
//! 64-byte ciphertext, so one shuffle moves one message, and an O(1) decoder;
//! it gives up the additive homomorphism, which the shuffle protocols do not
//! use (aggregation happens after decryption).

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use subtle::{Choice, ConditionallySelectable};

/// Number of message bytes carried by one group element.
pub const MESSAGE_BYTES: usize = 8;

/// Version of the message encoding (1: smallest 15-bit counter, no marker,
/// any counter accepted by the decoder; 2: this module).
pub const ENCODING_VERSION: u32 = 2;

/// Number of counters the encoder tries (all of them, always), and the
/// decoder's bound on the counter.
pub const CTR_LIMIT: u16 = 192;

const MARKER: u8 = 1;

/// Errors of the message encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// The group element is not the image of any message (wrong key, a
    /// tampered ciphertext, or a malformed or non-canonical plaintext from a
    /// malicious client).
    #[error("group element is outside the message space")]
    NotInMessageSpace,
    /// No counter value gave a valid encoding (probability below 2^-79 per
    /// message).
    #[error("no valid encoding found for the message")]
    EncodingFailed,
}

fn candidate(m: u64, ctr: u16) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[0] = ((ctr & 0x7f) as u8) << 1;
    s[1] = (ctr >> 7) as u8;
    s[2..10].copy_from_slice(&m.to_le_bytes());
    s[10] = MARKER;
    s
}

/// Map a message to its group element (deterministic; the same number of
/// attempts, [`CTR_LIMIT`], for every message).
pub fn encode_u64(m: u64) -> Result<RistrettoPoint, MessageError> {
    let mut chosen = [0u8; 32];
    let mut found = Choice::from(0u8);
    for ctr in 0..CTR_LIMIT {
        let s = candidate(m, ctr);
        let ok = Choice::from(CompressedRistretto(s).decompress().is_some() as u8);
        let take = ok & !found;
        for (c, b) in chosen.iter_mut().zip(&s) {
            c.conditional_assign(b, take);
        }
        found |= ok;
    }
    if !bool::from(found) {
        return Err(MessageError::EncodingFailed);
    }
    CompressedRistretto(chosen)
        .decompress()
        .ok_or(MessageError::EncodingFailed)
}

/// Map a message to its group element, stopping at the first valid counter
/// (same output as [`encode_u64`]; its time depends on `m`, so use it only
/// for messages that are not secret).
pub fn encode_u64_vartime(m: u64) -> Result<RistrettoPoint, MessageError> {
    (0..CTR_LIMIT)
        .find_map(|ctr| CompressedRistretto(candidate(m, ctr)).decompress())
        .ok_or(MessageError::EncodingFailed)
}

/// Recover the message from a group element, or reject it.
pub fn decode_u64(p: &RistrettoPoint) -> Result<u64, MessageError> {
    decode_compressed(&p.compress())
}

/// Recover the message from a compressed group element, or reject it
/// (including a valid point that carries a non-smallest counter).
pub fn decode_compressed(c: &CompressedRistretto) -> Result<u64, MessageError> {
    let s = c.as_bytes();
    if s[11..].iter().any(|&b| b != 0) || s[10] != MARKER || s[0] & 1 != 0 {
        return Err(MessageError::NotInMessageSpace);
    }
    let ctr = ((s[1] as u16) << 7) | (s[0] >> 1) as u16;
    if ctr >= CTR_LIMIT || c.decompress().is_none() {
        return Err(MessageError::NotInMessageSpace);
    }
    let mut mb = [0u8; 8];
    mb.copy_from_slice(&s[2..10]);
    let m = u64::from_le_bytes(mb);
    // Canonical: no smaller counter works for this message.
    if (0..ctr).any(|k| CompressedRistretto(candidate(m, k)).decompress().is_some()) {
        return Err(MessageError::NotInMessageSpace);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;
    use curve25519_dalek::traits::IsIdentity;

    #[test]
    fn roundtrip_edges_and_many() {
        for m in [
            0u64,
            1,
            2,
            255,
            65_535,
            65_536,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let p = encode_u64(m).unwrap();
            assert_eq!(p, encode_u64_vartime(m).unwrap());
            assert_eq!(decode_u64(&p).unwrap(), m);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let p = encode_u64(x).unwrap();
            assert_eq!(p, encode_u64_vartime(x).unwrap());
            assert_eq!(decode_u64(&p).unwrap(), x);
        }
    }

    #[test]
    fn zero_is_not_the_identity() {
        assert!(!encode_u64(0).unwrap().is_identity());
        assert_eq!(
            decode_compressed(&CompressedRistretto([0u8; 32])),
            Err(MessageError::NotInMessageSpace)
        );
    }

    #[test]
    fn only_the_canonical_counter_decodes() {
        let m = 77u64;
        let canonical = encode_u64(m).unwrap().compress();
        let mut other_valid = 0;
        for ctr in 0..CTR_LIMIT {
            let c = CompressedRistretto(candidate(m, ctr));
            if c.decompress().is_some() && c != canonical {
                other_valid += 1;
                assert_eq!(decode_compressed(&c), Err(MessageError::NotInMessageSpace));
            }
        }
        assert!(other_valid > 10);
        // A counter at or above the bound is refused even if it decompresses.
        let above = (CTR_LIMIT..(1 << 15))
            .map(|k| CompressedRistretto(candidate(m, k)))
            .find(|c| c.decompress().is_some())
            .unwrap();
        assert_eq!(
            decode_compressed(&above),
            Err(MessageError::NotInMessageSpace)
        );
    }

    #[test]
    fn distinct_messages_distinct_points() {
        let a = encode_u64(7).unwrap();
        let b = encode_u64(8).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn random_elements_are_rejected() {
        assert_eq!(
            decode_u64(&RISTRETTO_BASEPOINT_POINT),
            Err(MessageError::NotInMessageSpace)
        );
        let p = encode_u64(42).unwrap() + RISTRETTO_BASEPOINT_POINT;
        assert_eq!(decode_u64(&p), Err(MessageError::NotInMessageSpace));
    }
}
