//! The Bayer-Groth proof object and its wire format.

use super::multi_exp::MultiExpProof;
use super::product::ProductProof;
use super::{put_pts, Arrangement, Pt, Rd};
use crate::elgamal::MAX_LIST_LEN;
use crate::wire::{DecodeError, Reader, POINT_BYTES};

const WHAT: &str = "bayer-groth proof";

/// A Bayer-Groth proof of shuffle for `N` ciphertexts.
///
/// Wire format (all elements 32 bytes; the layout is fixed by `N` through
/// [`Arrangement::for_len`]):
/// `u32 N | c_A[m] | c_B[m] | product argument | multi-exponentiation argument`,
/// where the product argument is
/// `[c_b | c_B_2..c_B_(m-1) | c_A_0 c_B_(m+1) | c_D[2m] | a'[n] b'[n] | r' s' t']`
/// (the bracket only for `m >= 2`) then
/// `c_d c_delta c_Delta | a~[n] | b~[n] | r~ s~`, and the multi-exponentiation
/// argument is, per reduction `mu`, `E[2mu-2] (c1 c2 each) | c_b[2mu-2]`, then
/// `c_A_0 | c_B[2m'-1] | E[2m'-1] (c1 c2 each) | a[n] | r b s tau`.
/// Size: see [`BgProof::encoded_len`] (37,060 bytes for `N = 10,000`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BgProof {
    pub(crate) len: usize,
    pub(crate) c_a: Vec<Pt>,
    pub(crate) c_b: Vec<Pt>,
    pub(crate) product: ProductProof,
    pub(crate) multi_exp: MultiExpProof,
}

fn counts(arr: &Arrangement) -> (usize, usize) {
    let (pp, ps) = ProductProof::counts(arr.m, arr.n);
    let (mp, ms) = MultiExpProof::counts(&arr.factors, arr.base_rows(), arr.n);
    (2 * arr.m + pp + mp, ps + ms)
}

impl BgProof {
    /// Number of ciphertexts the proof is about.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the proof is about an empty list (never for a valid proof).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Encoded size in bytes for `n` ciphertexts (`None` for 0 or more than
    /// 2^24).
    pub fn encoded_len(n: usize) -> Option<usize> {
        let arr = Arrangement::for_len(n).ok()?;
        let (p, s) = counts(&arr);
        Some(4 + POINT_BYTES * (p + s))
    }

    /// Encoded size of this proof.
    pub fn size_bytes(&self) -> usize {
        Self::encoded_len(self.len).unwrap_or(0)
    }

    /// Encode (see the type's doc for the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes());
        out.extend_from_slice(&(self.len as u32).to_le_bytes());
        put_pts(&mut out, &self.c_a);
        put_pts(&mut out, &self.c_b);
        self.product.write(&mut out);
        self.multi_exp.write(&mut out);
        out
    }

    /// Decode. Rejects: a count of zero or above [`MAX_LIST_LEN`], a total
    /// length that differs from [`BgProof::encoded_len`] of the count,
    /// non-canonical points and scalars (the error gives the element's index
    /// in wire order, points and scalars counted together).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(bytes).map(|(p, _)| p)
    }

    /// Decode, and give the kind of every element in wire order (`true` for
    /// a point).
    pub(crate) fn decode(bytes: &[u8]) -> Result<(Self, Vec<bool>), DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let len = r.u32()? as usize;
        if len == 0 || len > MAX_LIST_LEN {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: len as u64,
                max: MAX_LIST_LEN as u64,
            });
        }
        let arr = Arrangement::for_len(len).map_err(|_| DecodeError::CountOutOfRange {
            what: WHAT,
            count: len as u64,
            max: MAX_LIST_LEN as u64,
        })?;
        let (p, s) = counts(&arr);
        let expected = 4 + POINT_BYTES * (p + s);
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected,
                got: bytes.len(),
            });
        }
        let mut rd = Rd {
            r,
            idx: 0,
            kinds: Vec::with_capacity(p + s),
        };
        let c_a = rd.pts(arr.m)?;
        let c_b = rd.pts(arr.m)?;
        let product = ProductProof::read(&mut rd, arr.m, arr.n)?;
        let multi_exp = MultiExpProof::read(&mut rd, &arr.factors, arr.base_rows(), arr.n)?;
        rd.r.finish()?;
        Ok((
            BgProof {
                len,
                c_a,
                c_b,
                product,
                multi_exp,
            },
            rd.kinds,
        ))
    }
}
