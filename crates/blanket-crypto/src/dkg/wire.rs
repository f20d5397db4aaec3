//! Wire formats of the DKG messages.

use zeroize::Zeroizing;

use super::{Dealing, SecretShare};
use crate::schnorr::{SchnorrProof, SCHNORR_PROOF_BYTES};
use crate::wire::{DecodeError, Reader, POINT_BYTES};

const DEALING: &str = "DKG dealing";

/// Version tag of the [`Dealing`] encoding. Version 1 (untagged, no proof
/// of knowledge) is no longer accepted.
pub const DEALING_VERSION: u8 = 2;

/// Largest threshold a dealing decoder accepts.
pub const MAX_THRESHOLD: usize = 4096;
const SHARE: &str = "DKG share";

/// Encoded size of a [`SecretShare`].
pub const SECRET_SHARE_BYTES: usize = 40;

impl Dealing {
    /// `u8 version (2) | u32 dealer | u32 t | t points | 64-byte Schnorr proof`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(9 + POINT_BYTES * self.commitments.len() + SCHNORR_PROOF_BYTES);
        out.push(DEALING_VERSION);
        out.extend_from_slice(&self.dealer.to_le_bytes());
        out.extend_from_slice(&(self.encoded.len() as u32).to_le_bytes());
        // The kept canonical encodings: no compression (`Dealing`).
        for c in &self.encoded {
            out.extend_from_slice(c.as_bytes());
        }
        out.extend_from_slice(&self.proof.to_bytes());
        out
    }

    /// Decode; rejects an unknown version, truncation, a count of 0 or above
    /// [`MAX_THRESHOLD`], trailing bytes, non-canonical points and scalars.
    /// (The proof itself is checked by [`super::verify_dealing`].)
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, DEALING);
        let tag = r.u8()?;
        if tag != DEALING_VERSION {
            return Err(DecodeError::UnknownVersion { what: DEALING, tag });
        }
        let dealer = r.u32()?;
        let t = r.u32()? as usize;
        if t == 0 || t > MAX_THRESHOLD {
            return Err(DecodeError::CountOutOfRange {
                what: DEALING,
                count: t as u64,
                max: MAX_THRESHOLD as u64,
            });
        }
        let expected = 9 + POINT_BYTES * t + SCHNORR_PROOF_BYTES;
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: DEALING,
                expected,
                got: bytes.len(),
            });
        }
        let mut commitments = Vec::with_capacity(t);
        let mut encoded = Vec::with_capacity(t);
        for i in 0..t {
            // Decoding accepts only canonical encodings, so these bytes are
            // the point's compression (`Dealing` keeps them).
            let (p, c) = r.point(i)?;
            commitments.push(p);
            encoded.push(c);
        }
        let proof = SchnorrProof::from_bytes(r.take(SCHNORR_PROOF_BYTES)?)?;
        r.finish()?;
        Ok(Dealing::from_parts(dealer, commitments, encoded, proof))
    }
}

impl SecretShare {
    /// `u32 dealer | u32 recipient | scalar` (40 bytes; send only over an
    /// encrypted channel).
    pub fn to_bytes(&self) -> Zeroizing<[u8; SECRET_SHARE_BYTES]> {
        let mut out = Zeroizing::new([0u8; SECRET_SHARE_BYTES]);
        out[..4].copy_from_slice(&self.dealer.to_le_bytes());
        out[4..8].copy_from_slice(&self.recipient.to_le_bytes());
        out[8..].copy_from_slice(self.value.as_bytes());
        out
    }

    /// Decode; rejects wrong length and a non-canonical scalar.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != SECRET_SHARE_BYTES {
            return Err(DecodeError::WrongLength {
                what: SHARE,
                expected: SECRET_SHARE_BYTES,
                got: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes, SHARE);
        let dealer = r.u32()?;
        let recipient = r.u32()?;
        let value = r.scalar(0)?;
        Ok(SecretShare {
            dealer,
            recipient,
            value,
        })
    }

    /// A copy with the value changed by `delta` (for tests of cheating dealers).
    #[cfg(test)]
    pub(crate) fn tampered(&self, delta: curve25519_dalek::scalar::Scalar) -> Self {
        SecretShare {
            dealer: self.dealer,
            recipient: self.recipient,
            value: self.value + delta,
        }
    }
}
