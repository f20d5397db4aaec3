//! Wire formats: fixed-size encodings of points and scalars, and the typed
//! errors every decoder in this crate returns on malformed input.
//!
//! Conventions (blanket's design):
//! - a group element is its 32-byte ristretto255 encoding; a decoder accepts
//!   only canonical encodings (exactly those that `decompress` accepts);
//! - a scalar is its 32-byte little-endian canonical encoding (< l);
//! - variable-length objects start with a little-endian `u32` count, and a
//!   decoder checks the total length against that count before allocating.

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;

/// Length of an encoded group element.
pub const POINT_BYTES: usize = 32;
/// Length of an encoded scalar.
pub const SCALAR_BYTES: usize = 32;

/// Why a decoder rejected its input. `what` names the wire type or field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input has the wrong total length.
    #[error("{what}: wrong length: expected {expected} bytes, got {got}")]
    WrongLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// The input is shorter than its header says, or shorter than a header.
    #[error("{what}: truncated input: need at least {need} bytes, got {got}")]
    Truncated {
        what: &'static str,
        need: usize,
        got: usize,
    },
    /// A 32-byte string is not the canonical encoding of a ristretto255 point.
    #[error("{what}: element {index} is not a canonical ristretto255 encoding")]
    NonCanonicalPoint { what: &'static str, index: usize },
    /// A 32-byte string is not the canonical encoding of a scalar (it is >= l).
    #[error("{what}: element {index} is not a canonical scalar encoding")]
    NonCanonicalScalar { what: &'static str, index: usize },
    /// A point that must not be the identity (a public key, a DH share) is.
    #[error("{what}: element {index} is the identity element")]
    IdentityPoint { what: &'static str, index: usize },
    /// A count field is out of the accepted range.
    #[error("{what}: count {count} out of range (max {max})")]
    CountOutOfRange {
        what: &'static str,
        count: u64,
        max: u64,
    },
    /// A format or version tag is unknown.
    #[error("{what}: unknown version tag {tag}")]
    UnknownVersion { what: &'static str, tag: u8 },
}

/// Decode one canonical point.
pub fn decode_point(
    bytes: &[u8],
    what: &'static str,
    index: usize,
) -> Result<(RistrettoPoint, CompressedRistretto), DecodeError> {
    let arr: [u8; 32] = bytes.try_into().map_err(|_| DecodeError::WrongLength {
        what,
        expected: POINT_BYTES,
        got: bytes.len(),
    })?;
    let c = CompressedRistretto(arr);
    let p = c
        .decompress()
        .ok_or(DecodeError::NonCanonicalPoint { what, index })?;
    Ok((p, c))
}

/// Decode one canonical scalar.
pub fn decode_scalar(
    bytes: &[u8],
    what: &'static str,
    index: usize,
) -> Result<Scalar, DecodeError> {
    let arr: [u8; 32] = bytes.try_into().map_err(|_| DecodeError::WrongLength {
        what,
        expected: SCALAR_BYTES,
        got: bytes.len(),
    })?;
    Option::from(Scalar::from_canonical_bytes(arr))
        .ok_or(DecodeError::NonCanonicalScalar { what, index })
}

/// A bounds-checked cursor over a byte slice, used by the decoders.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader {
            bytes,
            pos: 0,
            what,
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated {
            what: self.what,
            need: usize::MAX,
            got: self.bytes.len(),
        })?;
        let out = self
            .bytes
            .get(self.pos..end)
            .ok_or(DecodeError::Truncated {
                what: self.what,
                need: end,
                got: self.bytes.len(),
            })?;
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn point(
        &mut self,
        index: usize,
    ) -> Result<(RistrettoPoint, CompressedRistretto), DecodeError> {
        let b = self.take(POINT_BYTES)?;
        decode_point(b, self.what, index)
    }

    pub(crate) fn scalar(&mut self, index: usize) -> Result<Scalar, DecodeError> {
        let b = self.take(SCALAR_BYTES)?;
        decode_scalar(b, self.what, index)
    }

    pub(crate) fn remaining(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    /// Require that the whole input was consumed.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(DecodeError::WrongLength {
                what: self.what,
                expected: self.pos,
                got: self.bytes.len(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;

    #[test]
    fn point_roundtrip_and_rejections() {
        let c = RISTRETTO_BASEPOINT_POINT.compress();
        let (p, c2) = decode_point(c.as_bytes(), "t", 0).unwrap();
        assert_eq!(p, RISTRETTO_BASEPOINT_POINT);
        assert_eq!(c, c2);
        assert!(matches!(
            decode_point(&[0u8; 31], "t", 0),
            Err(DecodeError::WrongLength {
                expected: 32,
                got: 31,
                ..
            })
        ));
        // A "negative" field element (low bit set) is never canonical.
        let mut bad = [0u8; 32];
        bad[0] = 1;
        assert!(matches!(
            decode_point(&bad, "t", 3),
            Err(DecodeError::NonCanonicalPoint { index: 3, .. })
        ));
        // p = 2^255 - 19 encoded is non-canonical (not reduced).
        let mut p_bytes = [0xffu8; 32];
        p_bytes[0] = 0xed;
        p_bytes[31] = 0x7f;
        assert!(decode_point(&p_bytes, "t", 0).is_err());
    }

    #[test]
    fn scalar_rejects_unreduced() {
        assert!(decode_scalar(&[0xffu8; 32], "s", 1).is_err());
        assert_eq!(decode_scalar(&[0u8; 32], "s", 0).unwrap(), Scalar::ZERO);
        assert!(matches!(
            decode_scalar(&[0u8; 33], "s", 0),
            Err(DecodeError::WrongLength { .. })
        ));
    }
}
