//! Threshold decryption: partial decryptions with Chaum-Pedersen proofs and
//! their combination by Lagrange interpolation in the exponent.
//!
//! [Paper, building block 6: each key-committee member publishes a partial
//! decryption with a proof; the server combines any t valid ones. Spec
//! appendix "Chaum-Pedersen proof of a correct partial decryption".]
//!
//! Member `j` with share `x_j` and verification key `y_j = x_j·G` decrypts a
//! whole list `(c1_k, c2_k)_k` at once: `d_{j,k} = x_j·c1_k`. blanket's
//! design batches the N DLEQ statements into one: weights `rho_k` are derived
//! from a transcript that binds the context, the member, `y_j`, every `c1_k`
//! and every `d_{j,k}`; the member proves
//! `log_G y_j = log_{C} D` with `C = sum rho_k c1_k`, `D = sum rho_k d_{j,k}`.
//! If any `d_{j,k}` is wrong the statement is false except with probability
//! 1/l over the weights. The proof is 64 bytes per member per list.
//!
//! Combination: for a set S of t valid members, `x·c1_k = sum_{j in S}
//! lambda_j d_{j,k}` with `lambda_j = prod_{m in S, m != j} m / (m - j)`, and
//! `M_k = c2_k - x·c1_k`.

use curve25519_dalek::constants::{RISTRETTO_BASEPOINT_POINT as G, RISTRETTO_BASEPOINT_TABLE};
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::dleq::{self, DleqProof, DLEQ_PROOF_BYTES};
use crate::elgamal::{Ciphertext, PublicKey, MAX_LIST_LEN};
use crate::encoding::{self, MessageError};
use crate::msm::vartime_msm;
use crate::transcript::{compress_all, compress_doubles, half, ProofTranscript};
use crate::wire::{DecodeError, Reader, POINT_BYTES};

const PARTIAL_DOMAIN: &[u8] = b"blanket/partial-decryption/v1";

/// Errors of threshold decryption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// The partial decryption of this member does not verify.
    #[error("invalid partial decryption from member {member}")]
    InvalidPartial { member: u32 },
    /// A member index that is not in the committee.
    #[error("unknown committee member {member}")]
    UnknownMember { member: u32 },
    /// Two partials from the same member.
    #[error("duplicate partial decryption from member {member}")]
    DuplicateMember { member: u32 },
    /// A partial for a list of another length.
    #[error("partial decryption of member {member} has {got} shares, list has {expected}")]
    LengthMismatch {
        member: u32,
        got: usize,
        expected: usize,
    },
    /// Interpolation points that are zero or repeated (every Lagrange
    /// coefficient would be meaningless: a zero denominator).
    #[error("Lagrange interpolation needs distinct nonzero indices, got {indices:?}")]
    BadIndices { indices: Vec<u32> },
    /// Fewer than t partials.
    #[error("need {need} partial decryptions, have {have}")]
    NotEnoughPartials { have: usize, need: usize },
}

/// A committee member's secret key share `x_j` (from [`crate::dkg`]).
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct KeyShare {
    #[zeroize(skip)]
    index: u32,
    secret: Scalar,
}

impl std::fmt::Debug for KeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyShare(member {})", self.index)
    }
}

/// The committee's public data: threshold, joint public key, and the
/// verification key `y_i` of every member `i = 1..=c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupKey {
    threshold: u32,
    public_key: PublicKey,
    verification_keys: Vec<RistrettoPoint>,
}

/// A member's partial decryption of a list, with its batched DLEQ proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialDecryption {
    pub member: u32,
    pub shares: Vec<RistrettoPoint>,
    pub proof: DleqProof,
}

impl KeyShare {
    pub(crate) fn new(index: u32, secret: Scalar) -> Self {
        KeyShare { index, secret }
    }

    /// The member index (1-based).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The secret share `x_j` (for the other proofs on the same share, e.g.
    /// [`crate::reencrypt`]).
    pub(crate) fn secret(&self) -> &Scalar {
        &self.secret
    }

    /// `y_j = x_j·G`.
    pub fn verification_key(&self) -> RistrettoPoint {
        &self.secret * RISTRETTO_BASEPOINT_TABLE
    }

    /// Partially decrypt a list and prove it (constant-time multiplications
    /// by the share; on the rayon pool).
    pub fn partial_decrypt<R: RngCore + CryptoRng>(
        &self,
        cts: &[Ciphertext],
        context: &[u8],
        rng: &mut R,
    ) -> PartialDecryption {
        // Halves `(x_i / 2)·c1_k` of the shares: the shares are their
        // doubles and their encodings come in one batch
        // (`compress_doubles`), the same bytes as compressing each share.
        let mut xh = self.secret * half();
        let halves: Vec<RistrettoPoint> = cts.par_iter().map(|c| xh * c.c1).collect();
        xh.zeroize();
        let shares: Vec<RistrettoPoint> = halves.iter().map(|h| h + h).collect();
        let encoded = compress_doubles(&halves);
        let y = self.verification_key();
        let (t, base, d) = batch_statement(self.index, &y, cts, &shares, &encoded, context);
        let proof = dleq::prove_in(t, &G, &y, &base, &d, &self.secret, rng);
        PartialDecryption {
            member: self.index,
            shares,
            proof,
        }
    }
}

/// The transcript and the combined DLEQ statement `(C, D)` of a partial
/// (`encoded`: the shares' encodings).
fn batch_statement(
    member: u32,
    y: &RistrettoPoint,
    cts: &[Ciphertext],
    shares: &[RistrettoPoint],
    encoded: &[CompressedRistretto],
    context: &[u8],
) -> (ProofTranscript, RistrettoPoint, RistrettoPoint) {
    let mut t = ProofTranscript::new(PARTIAL_DOMAIN);
    t.append_bytes(b"context", context);
    t.append_u64(b"member", member as u64);
    t.append_point(b"y", &y.compress());
    let c1: Vec<RistrettoPoint> = cts.iter().map(|c| c.c1).collect();
    t.append_u64(b"n", cts.len() as u64);
    t.append_points(b"c1", &compress_all(&c1));
    t.append_points(b"d", encoded);
    let rho = t.challenge_scalars(b"rho", cts.len());
    let base = vartime_msm(&rho, &c1);
    let d = vartime_msm(&rho, shares);
    (t, base, d)
}

impl GroupKey {
    pub(crate) fn new(
        threshold: u32,
        public_key: PublicKey,
        verification_keys: Vec<RistrettoPoint>,
    ) -> Self {
        GroupKey {
            threshold,
            public_key,
            verification_keys,
        }
    }

    /// Number of partials needed.
    pub fn threshold(&self) -> u32 {
        self.threshold
    }

    /// Committee size.
    pub fn members(&self) -> u32 {
        self.verification_keys.len() as u32
    }

    /// The joint ElGamal public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public_key
    }

    /// Member `i`'s verification key, if `i` is in `1..=c`.
    pub fn verification_key(&self, i: u32) -> Option<RistrettoPoint> {
        (i as usize)
            .checked_sub(1)
            .and_then(|k| self.verification_keys.get(k))
            .copied()
    }

    /// Check one partial decryption of `cts`.
    pub fn verify_partial(
        &self,
        cts: &[Ciphertext],
        partial: &PartialDecryption,
        context: &[u8],
    ) -> Result<(), ThresholdError> {
        let member = partial.member;
        let y = self
            .verification_key(member)
            .ok_or(ThresholdError::UnknownMember { member })?;
        if partial.shares.len() != cts.len() {
            return Err(ThresholdError::LengthMismatch {
                member,
                got: partial.shares.len(),
                expected: cts.len(),
            });
        }
        let encoded = compress_all(&partial.shares);
        let (t, base, d) = batch_statement(member, &y, cts, &partial.shares, &encoded, context);
        dleq::verify_in(t, &G, &y, &base, &d, &partial.proof)
            .map_err(|_| ThresholdError::InvalidPartial { member })
    }

    /// Split partials into the valid ones and the rejected ones (with why).
    pub fn filter_valid<'a>(
        &self,
        cts: &[Ciphertext],
        partials: &'a [PartialDecryption],
        context: &[u8],
    ) -> (Vec<&'a PartialDecryption>, Vec<ThresholdError>) {
        let mut ok: Vec<&PartialDecryption> = Vec::new();
        let mut bad = Vec::new();
        for p in partials {
            if ok.iter().any(|q| q.member == p.member) {
                bad.push(ThresholdError::DuplicateMember { member: p.member });
                continue;
            }
            match self.verify_partial(cts, p, context) {
                Ok(()) => ok.push(p),
                Err(e) => bad.push(e),
            }
        }
        (ok, bad)
    }

    /// Combine partial decryptions into the message elements. Every partial
    /// given is verified; an invalid one is an error naming the member (use
    /// [`GroupKey::filter_valid`] first to drop bad partials and continue
    /// with the rest). The first `t` partials are used.
    pub fn combine(
        &self,
        cts: &[Ciphertext],
        partials: &[PartialDecryption],
        context: &[u8],
    ) -> Result<Vec<RistrettoPoint>, ThresholdError> {
        let mut seen: Vec<u32> = Vec::with_capacity(partials.len());
        for p in partials {
            if seen.contains(&p.member) {
                return Err(ThresholdError::DuplicateMember { member: p.member });
            }
            seen.push(p.member);
            self.verify_partial(cts, p, context)?;
        }
        let t = self.threshold as usize;
        if partials.len() < t {
            return Err(ThresholdError::NotEnoughPartials {
                have: partials.len(),
                need: t,
            });
        }
        let used = &partials[..t];
        let lambda = lagrange_at_zero(&used.iter().map(|p| p.member).collect::<Vec<_>>())?;
        Ok(cts
            .par_iter()
            .enumerate()
            .map(|(k, c)| {
                let pts: Vec<RistrettoPoint> = used.iter().map(|p| p.shares[k]).collect();
                c.c2 - RistrettoPoint::vartime_multiscalar_mul(&lambda, &pts)
            })
            .collect())
    }

    /// Combine and decode to `u64` messages (each may fail to decode if the
    /// encrypting client sent an element outside the message space).
    pub fn decrypt_messages(
        &self,
        cts: &[Ciphertext],
        partials: &[PartialDecryption],
        context: &[u8],
    ) -> Result<Vec<Result<u64, MessageError>>, ThresholdError> {
        let pts = self.combine(cts, partials, context)?;
        Ok(pts.par_iter().map(encoding::decode_u64).collect())
    }
}

/// Lagrange coefficients at 0 for distinct nonzero indices `xs`:
/// `lambda_j = prod_{m != j} x_m / (x_m - x_j)` (one batch inversion)
/// [Shamir, "How to Share a Secret", CACM 1979]. Rejects an empty list, a
/// zero index and a repeated index (issue 9, item 7: a zero denominator
/// made every coefficient zero in release builds).
pub fn lagrange_at_zero(xs: &[u32]) -> Result<Vec<Scalar>, ThresholdError> {
    let mut sorted = xs.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() || sorted[0] == 0 || sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(ThresholdError::BadIndices {
            indices: xs.to_vec(),
        });
    }
    let s: Vec<Scalar> = xs.iter().map(|&x| Scalar::from(x)).collect();
    let mut nums = Vec::with_capacity(s.len());
    let mut dens = Vec::with_capacity(s.len());
    for (j, xj) in s.iter().enumerate() {
        let mut num = Scalar::ONE;
        let mut den = Scalar::ONE;
        for (m, xm) in s.iter().enumerate() {
            if m != j {
                num *= xm;
                den *= xm - xj;
            }
        }
        nums.push(num);
        dens.push(den);
    }
    // Distinct nonzero u32 indices are distinct nonzero scalars (l > 2^32),
    // so every denominator is invertible.
    Scalar::batch_invert(&mut dens);
    Ok(nums.iter().zip(&dens).map(|(n, d)| n * d).collect())
}

#[cfg(test)]
pub(crate) fn interpolate_secret_for_tests(shares: &[KeyShare]) -> Scalar {
    let l = lagrange_at_zero(&shares.iter().map(|s| s.index).collect::<Vec<_>>())
        .expect("test shares have distinct nonzero indices");
    shares.iter().zip(&l).map(|(s, l)| s.secret * l).sum()
}

const WHAT: &str = "partial decryption";

impl PartialDecryption {
    /// `u32 member | u32 n | n points | 64-byte DLEQ proof`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + POINT_BYTES * self.shares.len() + DLEQ_PROOF_BYTES);
        out.extend_from_slice(&self.member.to_le_bytes());
        out.extend_from_slice(&(self.shares.len() as u32).to_le_bytes());
        for c in compress_all(&self.shares) {
            out.extend_from_slice(c.as_bytes());
        }
        out.extend_from_slice(&self.proof.to_bytes());
        out
    }

    /// Decode; rejects wrong length, oversize counts, non-canonical points
    /// and scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let member = r.u32()?;
        let n = r.u32()? as usize;
        if n > MAX_LIST_LEN {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: n as u64,
                max: MAX_LIST_LEN as u64,
            });
        }
        let expected = 8 + POINT_BYTES * n + DLEQ_PROOF_BYTES;
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected,
                got: bytes.len(),
            });
        }
        let pts = r.take(POINT_BYTES * n)?;
        let shares = pts
            .par_chunks(POINT_BYTES)
            .enumerate()
            .map(|(i, b)| crate::wire::decode_point(b, WHAT, i).map(|p| p.0))
            .collect::<Result<Vec<_>, _>>()?;
        let proof = DleqProof::from_bytes(r.take(DLEQ_PROOF_BYTES)?)?;
        r.finish()?;
        Ok(PartialDecryption {
            member,
            shares,
            proof,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dkg::tests::run_dkg;
    use crate::dkg::DkgParams;
    use crate::shuffle;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    const CTX: &[u8] = b"decrypt/session-1";

    #[test]
    fn any_t_of_c_decrypt_after_shuffle() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let params = DkgParams::new(5, 3, b"t").unwrap();
        // Member 4 drops out before dealing.
        let (gk, shares) = run_dkg(params, &[1, 2, 3, 5], &mut rng);
        let msgs: Vec<u64> = (0..12u64).map(|i| i * 7 + 1).collect();
        let cts: Vec<Ciphertext> = msgs
            .iter()
            .map(|&m| gk.public_key().encrypt(m, &mut rng).unwrap())
            .collect();
        let gens = shuffle::Generators::new(cts.len());
        let (out, proof) =
            shuffle::shuffle_and_prove(&gens, gk.public_key(), &cts, b"s", &mut rng).unwrap();
        shuffle::verify(&gens, gk.public_key(), &cts, &out, &proof, b"s").unwrap();
        let partials: Vec<PartialDecryption> = shares
            .iter()
            .map(|s| s.partial_decrypt(&out, CTX, &mut rng))
            .collect();
        for p in &partials {
            gk.verify_partial(&out, p, CTX).unwrap();
            let back = PartialDecryption::from_bytes(&p.to_bytes()).unwrap();
            assert_eq!(&back, p);
        }
        let mut want = msgs.clone();
        want.sort_unstable();
        // Every 3-subset of the 4 present members.
        for skip in 0..4 {
            let subset: Vec<PartialDecryption> = partials
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, p)| p.clone())
                .collect();
            let mut got: Vec<u64> = gk
                .decrypt_messages(&out, &subset, CTX)
                .unwrap()
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            got.sort_unstable();
            assert_eq!(got, want);
        }
        // Two are not enough.
        assert_eq!(
            gk.combine(&out, &partials[..2], CTX).err(),
            Some(ThresholdError::NotEnoughPartials { have: 2, need: 3 })
        );
    }

    #[test]
    fn bad_partial_detected_and_named() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let params = DkgParams::new(4, 2, b"t").unwrap();
        let (gk, shares) = run_dkg(params, &[1, 2, 3, 4], &mut rng);
        let cts: Vec<Ciphertext> = (0..6u64)
            .map(|m| gk.public_key().encrypt(m, &mut rng).unwrap())
            .collect();
        let mut partials: Vec<PartialDecryption> = shares
            .iter()
            .map(|s| s.partial_decrypt(&cts, CTX, &mut rng))
            .collect();
        // Member 2 lies about one share.
        partials[1].shares[3] += G;
        assert_eq!(
            gk.verify_partial(&cts, &partials[1], CTX),
            Err(ThresholdError::InvalidPartial { member: 2 })
        );
        assert_eq!(
            gk.combine(&cts, &partials, CTX).err(),
            Some(ThresholdError::InvalidPartial { member: 2 })
        );
        // Member 3 uses a proof made for another context.
        partials[2] = shares[2].partial_decrypt(&cts, b"other", &mut rng);
        assert_eq!(
            gk.verify_partial(&cts, &partials[2], CTX),
            Err(ThresholdError::InvalidPartial { member: 3 })
        );
        // Member 4 claims to be member 1.
        let mut impostor = partials[3].clone();
        impostor.member = 1;
        assert_eq!(
            gk.verify_partial(&cts, &impostor, CTX),
            Err(ThresholdError::InvalidPartial { member: 1 })
        );
        let mut unknown = partials[3].clone();
        unknown.member = 9;
        assert_eq!(
            gk.verify_partial(&cts, &unknown, CTX),
            Err(ThresholdError::UnknownMember { member: 9 })
        );
        let mut short = partials[0].clone();
        short.shares.pop();
        assert!(matches!(
            gk.verify_partial(&cts, &short, CTX),
            Err(ThresholdError::LengthMismatch { member: 1, .. })
        ));
        // The valid ones still decrypt.
        let all = vec![
            partials[0].clone(),
            partials[1].clone(),
            partials[2].clone(),
            partials[3].clone(),
            partials[0].clone(),
        ];
        let (ok, bad) = gk.filter_valid(&cts, &all, CTX);
        assert_eq!(ok.iter().map(|p| p.member).collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(
            bad,
            vec![
                ThresholdError::InvalidPartial { member: 2 },
                ThresholdError::InvalidPartial { member: 3 },
                ThresholdError::DuplicateMember { member: 1 },
            ]
        );
        let ok: Vec<PartialDecryption> = ok.into_iter().cloned().collect();
        let got: Vec<u64> = gk
            .decrypt_messages(&cts, &ok, CTX)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got, (0..6).collect::<Vec<_>>());
        assert_eq!(
            gk.combine(&cts, &[partials[0].clone(), partials[0].clone()], CTX)
                .err(),
            Some(ThresholdError::DuplicateMember { member: 1 })
        );
    }

    #[test]
    fn partial_decoder_rejects_malformed() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let params = DkgParams::new(2, 1, b"t").unwrap();
        let (gk, shares) = run_dkg(params, &[1, 2], &mut rng);
        let cts: Vec<Ciphertext> = (0..3u64)
            .map(|m| gk.public_key().encrypt(m, &mut rng).unwrap())
            .collect();
        let b = shares[0].partial_decrypt(&cts, CTX, &mut rng).to_bytes();
        assert!(matches!(
            PartialDecryption::from_bytes(&b[..b.len() - 1]),
            Err(DecodeError::WrongLength { .. })
        ));
        assert!(matches!(
            PartialDecryption::from_bytes(&b[..5]),
            Err(DecodeError::Truncated { .. })
        ));
        let mut bad = b.clone();
        bad[8 + 32] |= 1;
        assert!(matches!(
            PartialDecryption::from_bytes(&bad),
            Err(DecodeError::NonCanonicalPoint { index: 1, .. })
        ));
        let mut bad = b.clone();
        let off = b.len() - 32;
        bad[off..].copy_from_slice(&[0xff; 32]);
        assert!(matches!(
            PartialDecryption::from_bytes(&bad),
            Err(DecodeError::NonCanonicalScalar { index: 1, .. })
        ));
        let mut huge = b.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            PartialDecryption::from_bytes(&huge),
            Err(DecodeError::CountOutOfRange { .. })
        ));
    }

    #[test]
    fn lagrange_reconstructs_constant() {
        // f(x) = 5 + 3x + 2x^2 evaluated at 2, 4, 7.
        let f = |x: u64| Scalar::from(5 + 3 * x + 2 * x * x);
        let l = lagrange_at_zero(&[2, 4, 7]).unwrap();
        let v: Scalar = [2u64, 4, 7].iter().zip(&l).map(|(&x, l)| f(x) * l).sum();
        assert_eq!(v, Scalar::from(5u8));
        for bad in [&[][..], &[0, 1][..], &[3, 1, 3][..]] {
            assert_eq!(
                lagrange_at_zero(bad),
                Err(ThresholdError::BadIndices {
                    indices: bad.to_vec()
                })
            );
        }
    }
}
