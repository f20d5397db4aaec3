//! The message space: unsigned 64-bit integers embedded *into* a ristretto255
//! point (not into the exponent).
//!
//! blanket's design (the paper only says messages are small integers). A
//! message `m: u64` is mapped to the group element whose canonical 32-byte
//! encoding `s` is
//!
//! ```text
//!   s[0]      = (ctr & 0x7f) << 1     (even: a canonical encoding is "non-negative")
//!   s[1]      = ctr >> 7              (ctr is a 15-bit try-and-increment counter)
//!   s[2..10]  = m, little-endian
//!   s[10..32] = 0                     (so s < 2^80 < p: always reduced)
//! ```
//!
//! for the smallest `ctr` for which `s` decompresses (about one candidate in
//! four does, so the expected number of tries is 4 and the chance that all
//! 2^15 fail is about 2^-13600). Decoding is one point compression followed by
//! a check of the zero bytes: O(1), about 4 microseconds, with no table and no
//! discrete logarithm, and it returns a typed error for any group element
//! outside the image of the encoding (a random element lands in it with
//! probability about 2^-176).
//!
//! Compared with exponent ElGamal (g^m) this gives 64-bit messages in a single
//! 64-byte ciphertext, so one shuffle moves one message, and an O(1) decoder;
//! it gives up the additive homomorphism, which the shuffle protocols do not
//! use (aggregation happens after decryption).

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};

/// Number of message bytes carried by one group element.
pub const MESSAGE_BYTES: usize = 8;

const CTR_LIMIT: u16 = 1 << 15;

/// Errors of the message encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// The group element is not the image of any message (wrong key, a
    /// tampered ciphertext, or a malformed plaintext from a malicious client).
    #[error("group element is outside the message space")]
    NotInMessageSpace,
    /// No counter value gave a valid encoding (probability about 2^-13600).
    #[error("no valid encoding found for the message")]
    EncodingFailed,
}

/// Map a message to its group element (deterministic).
pub fn encode_u64(m: u64) -> Result<RistrettoPoint, MessageError> {
    let mut s = [0u8; 32];
    s[2..10].copy_from_slice(&m.to_le_bytes());
    for ctr in 0..CTR_LIMIT {
        s[0] = ((ctr & 0x7f) as u8) << 1;
        s[1] = (ctr >> 7) as u8;
        if let Some(p) = CompressedRistretto(s).decompress() {
            return Ok(p);
        }
    }
    Err(MessageError::EncodingFailed)
}

/// Recover the message from a group element, or reject it.
pub fn decode_u64(p: &RistrettoPoint) -> Result<u64, MessageError> {
    decode_compressed(&p.compress())
}

/// Recover the message from a compressed group element, or reject it.
pub fn decode_compressed(c: &CompressedRistretto) -> Result<u64, MessageError> {
    let s = c.as_bytes();
    if s[10..].iter().any(|&b| b != 0) || s[0] & 1 != 0 || s[1] & 0x80 != 0 {
        return Err(MessageError::NotInMessageSpace);
    }
    let mut m = [0u8; 8];
    m.copy_from_slice(&s[2..10]);
    Ok(u64::from_le_bytes(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;

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
            assert_eq!(decode_u64(&p).unwrap(), m);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            assert_eq!(decode_u64(&encode_u64(x).unwrap()).unwrap(), x);
        }
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
