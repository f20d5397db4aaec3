//! The byte codec of the wire format: a writer and a length-checked reader (every count
//! bounded by the bytes left, so a forged count drives no allocation), and the mapping of
//! `blanket-crypto` decoding errors.

use super::{WireError, MAX_PAYLOAD_BYTES};
use blanket_crypto::wire::DecodeError;

/// Appends the little-endian encodings of the wire format.
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub(super) fn count(&mut self, n: usize) {
        self.u32(n as u32);
    }
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    pub(super) fn prefixed(&mut self, b: &[u8]) {
        self.count(b.len());
        self.bytes(b);
    }
}

/// Reads the wire format, every length checked against what is left.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// What is being decoded (named in errors).
    pub(super) what: &'static str,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader {
            bytes,
            pos: 0,
            what,
        }
    }
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.saturating_add(n);
        let out = self.bytes.get(self.pos..end).ok_or(WireError::Truncated {
            what: self.what,
            need: end,
            got: self.bytes.len(),
        })?;
        self.pos = end;
        Ok(out)
    }
    pub(super) fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    pub(super) fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A count, checked against `max` and against the bytes left (each item
    /// takes at least `min_item` bytes), so no allocation is driven by a
    /// forged count.
    pub(super) fn count(&mut self, max: usize, min_item: usize) -> Result<usize, WireError> {
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.pos;
        if n > max || n.saturating_mul(min_item) > left {
            return Err(WireError::CountOutOfRange {
                what: self.what,
                count: n,
                max: max.min(left / min_item.max(1)),
            });
        }
        Ok(n)
    }
    pub(super) fn prefixed(&mut self) -> Result<&'a [u8], WireError> {
        let n = self.u32()? as usize;
        if n > MAX_PAYLOAD_BYTES {
            return Err(WireError::TooLarge {
                what: self.what,
                len: n,
                max: MAX_PAYLOAD_BYTES,
            });
        }
        self.take(n)
    }
    pub(super) fn rest(&mut self) -> &'a [u8] {
        let out = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        out
    }
    pub(super) fn finish(self) -> Result<(), WireError> {
        let extra = self.bytes.len() - self.pos;
        if extra != 0 {
            return Err(WireError::TrailingBytes {
                what: self.what,
                extra,
            });
        }
        Ok(())
    }
}

/// A `blanket-crypto` decoding error as a wire error about `what`.
pub(super) fn crypto<T>(what: &'static str, r: Result<T, DecodeError>) -> Result<T, WireError> {
    r.map_err(|source| WireError::Crypto { what, source })
}
