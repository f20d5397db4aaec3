//! The Bayer-Groth proof of shuffle: a zero-knowledge argument of a correct
//! shuffle of ElGamal ciphertexts whose size grows with `sqrt(N)`.
//!
//! Construction: S. Bayer and J. Groth, "Efficient Zero-Knowledge Argument
//! for Correctness of a Shuffle", EUROCRYPT 2012 (cited below as *BG12*, by
//! the name of the argument), in the structure of the Swiss Post e-voting "Crypto-primitives
//! Specification", section "Mix net" (cited as *SP*, by algorithm name:
//! `GenShuffleArgument`, `GenMultiExponentiationArgument`,
//! `GenProductArgument`, `GenHadamardArgument`, `GenZeroArgument`,
//! `GenSingleValueProductArgument` and their `Verify...` counterparts), over
//! ristretto255 with the ElGamal of [`crate::elgamal`] (one message element
//! per ciphertext). Written from the paper's protocols, with every
//! verification equation re-derived (docs/crypto.md, "The Bayer-Groth proof
//! of shuffle"); the SP algorithm names are given for orientation. No public
//! implementation was copied.
//!
//! One module per argument:
//! - [`commitment`]: Pedersen vector commitments with nothing-up-my-sleeve
//!   generators (BG12, preliminaries);
//! - `multi_exp`: the multi-exponentiation argument (BG12, "multi-exponentiation
//!   argument"), with a row reduction after the paper's "trading computation
//!   for interaction";
//! - `product`: the product argument (BG12, "product argument"), made of
//!   - `hadamard`: the Hadamard product argument (BG12, "Hadamard product argument"),
//!   - `zero`: the zero argument (BG12, "zero argument"),
//!   - `single_value_product`: the single value product argument
//!     (BG12, "single value product argument");
//! - `shuffle`: the shuffle argument itself (BG12, "shuffle argument").
//!
//! Arrangement (blanket's rule, [`Arrangement`]): the `N` ciphertexts are
//! arranged in `m` rows of `n` (BG12, shuffle argument: `N = mn`). `m` is the
//! largest power of two with `2 m^2 <= N`, and `n = max(ceil(N / m), 2)`;
//! when `m n > N` both lists are padded with `m n - N` copies of the trivial
//! encryption of the identity `(0, 0)`, which the shuffler maps to
//! themselves with zero re-randomization. Because the argument proves that
//! the padded output is a re-randomized permutation of the padded input, and
//! the padding is the same public value on both sides, the real outputs
//! decrypt to the same multiset as the real inputs (cancel the padding
//! elements from both multisets).
//!
//! Fiat-Shamir (strong): one merlin transcript with domain
//! [`BG_DOMAIN`] absorbs the context, `N`, `m`, `n`, the public key and
//! both (unpadded) ciphertext lists before the first challenge, then every
//! prover message in protocol order before each challenge.

pub mod commitment;
mod hadamard;
mod multi_exp;
mod product;
mod proof;
mod shuffle;
mod single_value_product;
mod zero;

pub use commitment::CommitmentKey;
pub use proof::BgProof;
pub use shuffle::{prove, shuffle_and_prove, verify};

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;

use crate::elgamal::MAX_LIST_LEN;
use crate::shuffle::ShuffleError;
use crate::transcript::ProofTranscript;
use crate::wire::{DecodeError, Reader};

/// Domain separator of the Bayer-Groth transcript.
pub const BG_DOMAIN: &[u8] = b"blanket/bayer-groth-shuffle/v1";

/// How `N` ciphertexts are arranged: `m` rows of `n` (padded to `m n`), and
/// the row-reduction factors of the multi-exponentiation argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrangement {
    /// Number of real ciphertexts.
    pub len: usize,
    /// Rows (number of vector commitments per matrix).
    pub m: usize,
    /// Columns (length of each committed vector).
    pub n: usize,
    /// Factors `mu` of the successive row reductions of the
    /// multi-exponentiation argument (after BG12, "trading computation for
    /// interaction"): `log2 m` halvings, so one row remains for the base
    /// argument.
    pub factors: Vec<usize>,
}

impl Arrangement {
    /// The arrangement for `len` ciphertexts (see the module doc).
    pub fn for_len(len: usize) -> Result<Self, ShuffleError> {
        if len == 0 {
            return Err(ShuffleError::Empty);
        }
        if len > MAX_LIST_LEN {
            return Err(ShuffleError::Decode(DecodeError::CountOutOfRange {
                what: "bayer-groth list length",
                count: len as u64,
                max: MAX_LIST_LEN as u64,
            }));
        }
        let mut m = 1usize;
        while 2 * (2 * m) * (2 * m) <= len {
            m *= 2;
        }
        let n = len.div_ceil(m).max(2);
        // Halve the rows down to one: a reduction by `mu` costs the prover
        // about 2 (mu - 1) N exponentiations and the base argument on m'
        // rows 2 m' N, so halving (2 N per level, 2 N for the base) is the
        // cheapest schedule, and each level adds only 6 group elements
        // (blanket's choice, see docs/crypto.md).
        let factors = vec![2; m.trailing_zeros() as usize];
        Ok(Arrangement { len, m, n, factors })
    }

    /// `m n`, the padded length.
    pub fn padded_len(&self) -> usize {
        self.m * self.n
    }

    /// Rows left for the base multi-exponentiation argument.
    pub fn base_rows(&self) -> usize {
        self.m / self.factors.iter().product::<usize>()
    }
}

/// `[1, x, x^2, ..., x^(k-1)]`.
pub(crate) fn powers(x: Scalar, k: usize) -> Vec<Scalar> {
    let mut out = Vec::with_capacity(k);
    let mut cur = Scalar::ONE;
    for _ in 0..k {
        out.push(cur);
        cur *= x;
    }
    out
}

/// A group element as sent: the point and its canonical encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pt {
    pub(crate) p: RistrettoPoint,
    pub(crate) c: CompressedRistretto,
}

impl Pt {
    pub(crate) fn new(p: RistrettoPoint) -> Self {
        Pt { p, c: p.compress() }
    }
}

pub(crate) fn pts(ps: Vec<RistrettoPoint>) -> Vec<Pt> {
    let enc = crate::transcript::compress_all(&ps);
    ps.into_iter().zip(enc).map(|(p, c)| Pt { p, c }).collect()
}

pub(crate) fn append_pts(tr: &mut ProofTranscript, label: &'static [u8], ps: &[Pt]) {
    let enc: Vec<CompressedRistretto> = ps.iter().map(|p| p.c).collect();
    tr.append_points(label, &enc);
}

/// Wire writer / reader helpers (points and scalars, 32 bytes each; the
/// reader numbers elements in wire order for its errors).
pub(crate) fn put_pts(out: &mut Vec<u8>, ps: &[Pt]) {
    for p in ps {
        out.extend_from_slice(p.c.as_bytes());
    }
}

pub(crate) fn put_scalars(out: &mut Vec<u8>, ss: &[Scalar]) {
    for s in ss {
        out.extend_from_slice(s.as_bytes());
    }
}

pub(crate) struct Rd<'a> {
    pub(crate) r: Reader<'a>,
    pub(crate) idx: usize,
    /// Kind of each element read so far (`true` for a point), for tests
    /// that tamper with every element.
    pub(crate) kinds: Vec<bool>,
}

impl Rd<'_> {
    pub(crate) fn pt(&mut self) -> Result<Pt, DecodeError> {
        let (p, c) = self.r.point(self.idx)?;
        self.idx += 1;
        self.kinds.push(true);
        Ok(Pt { p, c })
    }

    pub(crate) fn pts(&mut self, k: usize) -> Result<Vec<Pt>, DecodeError> {
        (0..k).map(|_| self.pt()).collect()
    }

    pub(crate) fn sc(&mut self) -> Result<Scalar, DecodeError> {
        let s = self.r.scalar(self.idx)?;
        self.idx += 1;
        self.kinds.push(false);
        Ok(s)
    }

    pub(crate) fn scs(&mut self, k: usize) -> Result<Vec<Scalar>, DecodeError> {
        (0..k).map(|_| self.sc()).collect()
    }
}

/// The verifier's batch: every group equation `sum_k s_k P_k = 0` of every
/// sub-argument is multiplied by a fresh random weight and all are checked
/// with one variable-time multi-scalar multiplication (small-exponent
/// batching, as the Terelius-Wikstrom verifier does). Coefficients of the
/// commitment generators, `G` and `pk` are accumulated densely.
pub(crate) struct Batch<'a> {
    ck: &'a CommitmentKey,
    rng: ChaCha20Rng,
    gens: Vec<Scalar>,
    h: Scalar,
    g: Scalar,
    pk: Scalar,
    scalars: Vec<Scalar>,
    points: Vec<RistrettoPoint>,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(ck: &'a CommitmentKey, n: usize, rng: ChaCha20Rng) -> Self {
        Batch {
            ck,
            rng,
            gens: vec![Scalar::ZERO; n],
            h: Scalar::ZERO,
            g: Scalar::ZERO,
            pk: Scalar::ZERO,
            scalars: Vec::new(),
            points: Vec::new(),
        }
    }

    /// A fresh random weight for one equation.
    pub(crate) fn weight(&mut self) -> Scalar {
        let mut b = [0u8; 64];
        self.rng.fill_bytes(&mut b);
        Scalar::from_bytes_mod_order_wide(&b)
    }

    /// Add `s P`.
    pub(crate) fn point(&mut self, s: Scalar, p: RistrettoPoint) {
        self.scalars.push(s);
        self.points.push(p);
    }

    /// Add `w com(a; r) = w (r H + sum_l a_l G_l)`.
    pub(crate) fn commit(&mut self, w: Scalar, a: &[Scalar], r: Scalar) {
        self.h += w * r;
        for (g, x) in self.gens.iter_mut().zip(a) {
            *g += w * x;
        }
    }

    /// Add `w G` (the ElGamal base point).
    pub(crate) fn base(&mut self, w: Scalar) {
        self.g += w;
    }

    /// Add `w pk`.
    pub(crate) fn pk(&mut self, w: Scalar) {
        self.pk += w;
    }

    /// Whether every equation holds (with probability of a false accept at
    /// most one in the group order per false equation).
    pub(crate) fn check(mut self, pk: &RistrettoPoint) -> bool {
        self.scalars.push(self.h);
        self.points.push(*self.ck.h());
        self.scalars.push(self.g);
        self.points.push(G);
        self.scalars.push(self.pk);
        self.points.push(*pk);
        self.scalars.extend_from_slice(&self.gens);
        self.points
            .extend_from_slice(&self.ck.gs()[..self.gens.len()]);
        let total = crate::msm::vartime_msm(&self.scalars, &self.points);
        total.is_identity()
    }
}

/// A small variable-time combination `sum s_i P_i` of public values.
pub(crate) fn combine(scalars: &[Scalar], points: &[RistrettoPoint]) -> RistrettoPoint {
    RistrettoPoint::vartime_multiscalar_mul(scalars, points)
}

#[cfg(test)]
mod tests;
