//! The non-interactive shuffle proof and its wire format.

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use rayon::prelude::*;

use crate::elgamal::MAX_LIST_LEN;
use crate::wire::{DecodeError, Reader, POINT_BYTES, SCALAR_BYTES};

/// A list of points together with their canonical encodings (the encodings
/// feed the transcript; the points feed the arithmetic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Points {
    pub(crate) pts: Vec<RistrettoPoint>,
    pub(crate) enc: Vec<CompressedRistretto>,
}

impl Points {
    pub(crate) fn from_points(pts: Vec<RistrettoPoint>) -> Self {
        let enc = crate::transcript::compress_all(&pts);
        Points { pts, enc }
    }
}

/// A Terelius-Wikstrom proof of shuffle for `N` ciphertexts, in the
/// "commitment" form of Haenni et al. (Algorithm 8 output
/// `(t, s, c, c^)`): the verifier recomputes the challenge from the `t`
/// values and checks all equations in one batched multi-scalar multiplication.
///
/// Size: `5N + 9` elements of 32 bytes plus a 4-byte count,
/// `160 N + 292` bytes (1,600,292 bytes for N = 10,000).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShuffleProof {
    /// Permutation commitment `c_1..c_N`.
    pub(crate) c: Points,
    /// Commitment chain `c^_1..c^_N`.
    pub(crate) c_hat: Points,
    /// `t_1, t_2, t_3, t_41, t_42`.
    pub(crate) t: [RistrettoPoint; 5],
    pub(crate) t_enc: [CompressedRistretto; 5],
    /// `t^_1..t^_N`.
    pub(crate) t_hat: Points,
    /// `s_1..s_4`.
    pub(crate) s: [Scalar; 4],
    /// `s^_1..s^_N`.
    pub(crate) s_hat: Vec<Scalar>,
    /// `s'_1..s'_N`.
    pub(crate) s_prime: Vec<Scalar>,
}

const WHAT: &str = "shuffle proof";

impl ShuffleProof {
    /// Number of ciphertexts the proof is about.
    pub fn len(&self) -> usize {
        self.c.pts.len()
    }

    /// Whether the proof is about an empty list (never for a valid proof).
    pub fn is_empty(&self) -> bool {
        self.c.pts.is_empty()
    }

    /// Encoded size in bytes for `n` ciphertexts: `4 + 32 (5n + 9)`.
    pub fn encoded_len(n: usize) -> usize {
        4 + POINT_BYTES * (3 * n + 5) + SCALAR_BYTES * (2 * n + 4)
    }

    /// Encoded size of this proof.
    pub fn size_bytes(&self) -> usize {
        Self::encoded_len(self.len())
    }

    /// Wire format: `u32 N | c[N] | c^[N] | t1 t2 t3 t41 t42 | t^[N] |
    /// s1 s2 s3 s4 | s^[N] | s'[N]`, points and scalars 32 bytes each.
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.len();
        let mut out = Vec::with_capacity(Self::encoded_len(n));
        out.extend_from_slice(&(n as u32).to_le_bytes());
        for p in self
            .c
            .enc
            .iter()
            .chain(&self.c_hat.enc)
            .chain(&self.t_enc)
            .chain(&self.t_hat.enc)
        {
            out.extend_from_slice(p.as_bytes());
        }
        for s in self.s.iter().chain(&self.s_hat).chain(&self.s_prime) {
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    /// Decode a proof. Rejects: a count of zero or above
    /// [`MAX_LIST_LEN`], a total length that does not match the count,
    /// non-canonical points and non-canonical scalars (the error gives the
    /// index of the element in wire order: points first, then scalars).
    /// Decompression runs on the rayon pool.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let n = r.u32()? as usize;
        if n == 0 || n > MAX_LIST_LEN {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: n as u64,
                max: MAX_LIST_LEN as u64,
            });
        }
        let expected = Self::encoded_len(n);
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected,
                got: bytes.len(),
            });
        }
        let n_points = 3 * n + 5;
        let point_bytes = r.take(POINT_BYTES * n_points)?;
        let decoded: Vec<(RistrettoPoint, CompressedRistretto)> = point_bytes
            .par_chunks(POINT_BYTES)
            .enumerate()
            .map(|(i, b)| crate::wire::decode_point(b, WHAT, i))
            .collect::<Result<_, _>>()?;
        let scalar_bytes = r.take(SCALAR_BYTES * (2 * n + 4))?;
        r.finish()?;
        let scalars: Vec<Scalar> = scalar_bytes
            .par_chunks(SCALAR_BYTES)
            .enumerate()
            .map(|(i, b)| crate::wire::decode_scalar(b, WHAT, n_points + i))
            .collect::<Result<_, _>>()?;

        let take = |range: std::ops::Range<usize>| Points {
            pts: decoded[range.clone()].iter().map(|x| x.0).collect(),
            enc: decoded[range].iter().map(|x| x.1).collect(),
        };
        let c = take(0..n);
        let c_hat = take(n..2 * n);
        let t5 = take(2 * n..2 * n + 5);
        let t_hat = take(2 * n + 5..3 * n + 5);
        let t = [t5.pts[0], t5.pts[1], t5.pts[2], t5.pts[3], t5.pts[4]];
        let t_enc = [t5.enc[0], t5.enc[1], t5.enc[2], t5.enc[3], t5.enc[4]];
        let s = [scalars[0], scalars[1], scalars[2], scalars[3]];
        let s_hat = scalars[4..4 + n].to_vec();
        let s_prime = scalars[4 + n..4 + 2 * n].to_vec();
        Ok(ShuffleProof {
            c,
            c_hat,
            t,
            t_enc,
            t_hat,
            s,
            s_hat,
            s_prime,
        })
    }
}
