//! The wire formats, versioned and length-checked.
//!
//! A report (client to shuffler, `application/octet-stream`, exactly [`REPORT_LEN`] bytes):
//!
//! ```text
//! version u8 (= 2) | task id [16] | report id [16] | HPKE enc [32] | ciphertext length u16 BE (= 21) | ciphertext [21]
//! ```
//!
//! The ciphertext seals 5 bytes (version, message u32 BE) plus the 16-byte Poly1305 tag, so
//! every report of a version has the same length and the shuffler learns nothing from sizes.
//! Version 2: the seal's associated data is the task id and the report id
//! ([`crate::crypto`]), so a report opens only under the id its client chose.
//!
//! A batch (shuffler to analyzer), exactly `BATCH_HEADER_LEN + count * ITEM_LEN` bytes:
//!
//! ```text
//! version u8 (= 2) | task id [16] | batch id [16] | count u32 BE | count * (report id [16] | enc [32] | ciphertext [21])
//! ```
//!
//! The batch carries no time or connection detail: only the sealed messages with their report
//! ids (needed to open them; random, and known to the shuffler with the encapsulated key
//! anyway, so they link nothing the encapsulated key does not), in the shuffled order.

use crate::problem::Rejection;

/// The one wire version this build speaks.
pub const WIRE_VERSION: u8 = 2;
/// Length of a task, report or batch id.
pub const ID_LEN: usize = 16;
/// Length of an HPKE encapsulated key (X25519).
pub const ENC_LEN: usize = 32;
/// Plaintext: version and a u32 message.
pub const PLAINTEXT_LEN: usize = 5;
/// Ciphertext: the plaintext and a 16-byte tag.
pub const CIPHERTEXT_LEN: usize = PLAINTEXT_LEN + 16;
/// One report on the wire.
pub const REPORT_LEN: usize = 1 + ID_LEN + ID_LEN + ENC_LEN + 2 + CIPHERTEXT_LEN;
/// A sealed message in a batch.
pub const SEALED_LEN: usize = ENC_LEN + CIPHERTEXT_LEN;
/// A report id and its sealed message in a batch.
pub const ITEM_LEN: usize = ID_LEN + SEALED_LEN;
/// A batch's header.
pub const BATCH_HEADER_LEN: usize = 1 + ID_LEN + ID_LEN + 4;
/// Most reports in one forwarded batch (bounds the batch body: 69 MB).
pub const MAX_BATCH_REPORTS: usize = 1_000_000;

/// A 16-byte identifier shown as 32 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub [u8; ID_LEN]);

/// A report id, chosen at random by the client.
pub type ReportId = [u8; ID_LEN];

impl TaskId {
    /// Parses 32 hex digits.
    pub fn parse(s: &str) -> Option<Self> {
        let v = hex_decode(s)?;
        Some(Self(v.try_into().ok()?))
    }

    /// 32 lowercase hex digits.
    pub fn hex(&self) -> String {
        hex_encode(&self.0)
    }
}

impl core::fmt::Display for TaskId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Lowercase hex.
pub fn hex_encode(bytes: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(D[(b >> 4) as usize] as char);
        s.push(D[(b & 15) as usize] as char);
    }
    s
}

/// Hex (either case) to bytes; `None` on an odd length or a non-hex digit.
pub fn hex_decode(s: &str) -> Option<Vec<u8>> {
    fn nib(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks_exact(2)
        .map(|p| Some(nib(p[0])? << 4 | nib(p[1])?))
        .collect()
}

/// A sealed message: what the analyzer opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// The HPKE encapsulated key (unique per encryption).
    pub enc: [u8; ENC_LEN],
    /// The ciphertext.
    pub ct: [u8; CIPHERTEXT_LEN],
}

/// A client's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The task it is for.
    pub task: TaskId,
    /// Random id for replay protection at the shuffler.
    pub id: ReportId,
    /// The sealed message.
    pub sealed: Sealed,
}

fn take<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

impl Report {
    /// The report's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(REPORT_LEN);
        v.push(WIRE_VERSION);
        v.extend_from_slice(&self.task.0);
        v.extend_from_slice(&self.id);
        v.extend_from_slice(&self.sealed.enc);
        v.extend_from_slice(&(CIPHERTEXT_LEN as u16).to_be_bytes());
        v.extend_from_slice(&self.sealed.ct);
        v
    }

    /// Decodes a report, checking the version first, then every length.
    pub fn decode(b: &[u8]) -> Result<Self, Rejection> {
        let Some(&version) = b.first() else {
            return Err(Rejection::WrongLength {
                field: "report",
                expected: REPORT_LEN,
                got: 0,
            });
        };
        if version != WIRE_VERSION {
            return Err(Rejection::UnsupportedVersion {
                got: version,
                supported: WIRE_VERSION,
            });
        }
        let ct_at = 1 + ID_LEN + ID_LEN + ENC_LEN;
        if b.len() < ct_at + 2 {
            return Err(Rejection::WrongLength {
                field: "report",
                expected: REPORT_LEN,
                got: b.len(),
            });
        }
        let ct_len = u16::from_be_bytes([b[ct_at], b[ct_at + 1]]) as usize;
        if ct_len != CIPHERTEXT_LEN {
            return Err(Rejection::WrongLength {
                field: "ciphertext",
                expected: CIPHERTEXT_LEN,
                got: ct_len,
            });
        }
        if b.len() != REPORT_LEN {
            return Err(Rejection::WrongLength {
                field: "report",
                expected: REPORT_LEN,
                got: b.len(),
            });
        }
        Ok(Self {
            task: TaskId(take(b, 1)),
            id: take(b, 1 + ID_LEN),
            sealed: Sealed {
                enc: take(b, 1 + 2 * ID_LEN),
                ct: take(b, ct_at + 2),
            },
        })
    }
}

/// A shuffled batch, as the shuffler forwards it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The task.
    pub task: TaskId,
    /// Random id: the analyzer accepts each batch once.
    pub id: [u8; ID_LEN],
    /// The report ids and sealed messages, in shuffled order.
    pub sealed: Vec<(ReportId, Sealed)>,
}

impl Batch {
    /// The batch's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(BATCH_HEADER_LEN + self.sealed.len() * ITEM_LEN);
        v.push(WIRE_VERSION);
        v.extend_from_slice(&self.task.0);
        v.extend_from_slice(&self.id);
        v.extend_from_slice(&(self.sealed.len() as u32).to_be_bytes());
        for (id, s) in &self.sealed {
            v.extend_from_slice(id);
            v.extend_from_slice(&s.enc);
            v.extend_from_slice(&s.ct);
        }
        v
    }

    /// Decodes a batch, checking the version, the count's bound and the exact length.
    pub fn decode(b: &[u8]) -> Result<Self, Rejection> {
        if b.len() < BATCH_HEADER_LEN {
            return Err(Rejection::WrongLength {
                field: "batch header",
                expected: BATCH_HEADER_LEN,
                got: b.len(),
            });
        }
        if b[0] != WIRE_VERSION {
            return Err(Rejection::UnsupportedVersion {
                got: b[0],
                supported: WIRE_VERSION,
            });
        }
        let count = u32::from_be_bytes(take(b, 1 + 2 * ID_LEN)) as usize;
        if count > MAX_BATCH_REPORTS {
            return Err(Rejection::OutOfRange {
                field: "batch count".into(),
                allowed: format!("at most {MAX_BATCH_REPORTS}"),
                value: count.to_string(),
            });
        }
        let expected = BATCH_HEADER_LEN + count * ITEM_LEN;
        if b.len() != expected {
            return Err(Rejection::WrongLength {
                field: "batch",
                expected,
                got: b.len(),
            });
        }
        let sealed = b[BATCH_HEADER_LEN..]
            .chunks_exact(ITEM_LEN)
            .map(|c| {
                (
                    take(c, 0),
                    Sealed {
                        enc: take(c, ID_LEN),
                        ct: take(c, ID_LEN + ENC_LEN),
                    },
                )
            })
            .collect();
        Ok(Self {
            task: TaskId(take(b, 1)),
            id: take(b, 1 + ID_LEN),
            sealed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            task: TaskId([1; 16]),
            id: [2; 16],
            sealed: Sealed {
                enc: [3; 32],
                ct: [4; CIPHERTEXT_LEN],
            },
        }
    }

    #[test]
    fn report_round_trip_and_exact_length() {
        let r = report();
        let b = r.encode();
        assert_eq!(b.len(), REPORT_LEN);
        assert_eq!(REPORT_LEN, 88);
        assert_eq!(Report::decode(&b), Ok(r));
        let mut long = b.clone();
        long.push(0);
        assert!(matches!(
            Report::decode(&long),
            Err(Rejection::WrongLength { got: 89, .. })
        ));
        assert!(matches!(
            Report::decode(&b[..40]),
            Err(Rejection::WrongLength { got: 40, .. })
        ));
        let mut v2 = b.clone();
        v2[0] = 1;
        assert!(matches!(
            Report::decode(&v2),
            Err(Rejection::UnsupportedVersion { got: 1, .. })
        ));
        let mut badlen = b;
        badlen[65] = 0;
        badlen[66] = 20;
        assert!(matches!(
            Report::decode(&badlen),
            Err(Rejection::WrongLength {
                field: "ciphertext",
                ..
            })
        ));
    }

    #[test]
    fn batch_round_trip_and_lengths() {
        let r = report();
        let batch = Batch {
            task: r.task,
            id: [9; 16],
            sealed: vec![(r.id, r.sealed.clone()), ([5; 16], r.sealed)],
        };
        let b = batch.encode();
        assert_eq!(b.len(), BATCH_HEADER_LEN + 2 * ITEM_LEN);
        assert_eq!(Batch::decode(&b), Ok(batch));
        assert!(Batch::decode(&b[..b.len() - 1]).is_err());
        let mut huge = b;
        huge[33..37].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            Batch::decode(&huge),
            Err(Rejection::OutOfRange { .. })
        ));
    }

    #[test]
    fn hex_round_trip() {
        let t = TaskId([0xab; 16]);
        assert_eq!(TaskId::parse(&t.hex()), Some(t));
        assert_eq!(TaskId::parse("zz"), None);
        assert_eq!(TaskId::parse("abc"), None);
        assert_eq!(TaskId::parse(&"ab".repeat(15)), None);
    }
}
