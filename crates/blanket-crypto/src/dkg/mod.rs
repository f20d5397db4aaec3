//! Distributed key generation for a key committee: joint-Feldman
//! (Pedersen's DKG), t-of-c.
//!
//! [Pedersen, "A Threshold Cryptosystem without a Trusted Party",
//! EUROCRYPT 1991; Feldman, "A Practical Scheme for Non-interactive
//! Verifiable Secret Sharing", FOCS 1987. The paper (building block 3) only
//! says a DKG is run; the protocol below is blanket's choice.]
//!
//! Members are numbered `1..=c`. Round 1: every member `j` picks a random
//! polynomial `f_j` of degree `t - 1`, broadcasts (through the server) the
//! [`Dealing`] `A_{j,k} = a_{j,k}·G`, and sends `f_j(i)` to each member `i`
//! over an authenticated channel ([`crate::channel`]). Round 2: each member
//! checks its shares with [`verify_share`] and broadcasts a [`Complaint`]
//! for each bad or missing one. Round 3: an accused dealer reveals the share
//! publicly; [`resolve_complaint`] decides. The qualified set QUAL is every
//! dealer whose dealing arrived, is well formed and cleared all complaints;
//! members that drop out before dealing are simply not in QUAL, and members
//! that drop out afterwards do not stop the others (any `t` key holders can
//! decrypt). Then `pk = sum_{j in QUAL} A_{j,0}`, member `i` holds
//! `x_i = sum_{j in QUAL} f_j(i)` and everybody can compute the verification
//! key `y_i = x_i·G = sum_j sum_k i^k A_{j,k}` ([`group_key`]).
//!
//! Proof of knowledge of the constant term (issue 9, item 1). Without it a
//! dealer that deals last can publish `A_{j,0} = x·G - sum_{m != j} A_{m,0}`
//! for an `x` it knows and hand the honest members shares consistent with
//! it (interpolating in the exponent), so that `pk = x·G` (the rogue-key
//! attack, `tests/attacks.rs`). As in FROST's key generation [Komlo and
//! Goldberg, "FROST: Flexible Round-Optimized Schnorr Threshold
//! Signatures", SAC 2020, Figure 1, KeyGen round 1, steps 2 and 5; RFC 9591
//! standardizes FROST signing but leaves the DKG out], every [`Dealing`]
//! carries a Schnorr proof of knowledge of `a_{j,0}` ([`crate::schnorr`])
//! on a transcript with domain `blanket/dkg-pok/v1` that binds the dealer's
//! index, the committee size and threshold, the session (the caller's
//! description of the protocol run and of the committee, hashed into
//! [`DkgParams`]) and all of the dealer's commitments. Every function that
//! uses a dealing ([`verify_dealing`], [`verify_share`],
//! [`resolve_complaint`], [`group_key`], [`key_share`]) checks the proof
//! first, so a dealer without a valid proof never enters QUAL. A dealer
//! that knows `a_{j,0}` can no longer cancel the others' constant terms
//! (it would need their discrete logarithms), and cannot replay another
//! dealer's proof (the index is bound). `A_{j,0} = 0` and a joint key equal
//! to the identity are refused.
//!
//! The honest-member assumption (blanket's analysis, checked by
//! [`DkgParams::check_adversary`] and [`DkgParams::for_adversary`]): with
//! threshold `t`, (a) at most `t - 1` members are malicious, otherwise they
//! hold `t` shares and know the key; (b) at least `t` honest members stay
//! through the complaint round and verify their shares. (b) pins every
//! qualified dealer's committed polynomial to shares held by honest members
//! (a degree `t - 1` polynomial is fixed by `t` points), and leaves `t`
//! honest key holders to decrypt; the rogue-key attack above needed at most
//! `t - 1` honest verifiers (c-of-c with one malicious member, 4-of-5 with
//! two, 3-of-5 with two malicious and one honest member gone after
//! dealing). Together: `members >= max_malicious + max_dropouts + t` with
//! `t > max_malicious`, i.e. `members >= 2·max_malicious + max_dropouts + 1`
//! at the smallest threshold.
//!
//! Known limitation: joint-Feldman lets a rushing adversary bias the
//! distribution of `pk` (Gennaro, Jarecki, Krawczyk, Rabin, 1999); Gennaro et
//! al. (CT-RSA 2003) show that ElGamal-type uses stay secure with such keys,
//! which is why blanket accepts it instead of the 2-round Pedersen-VSS
//! variant.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, IsIdentity, VartimeMultiscalarMul};
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::elgamal::PublicKey;
use crate::schnorr::{self, SchnorrProof};
use crate::threshold::{GroupKey, KeyShare};
use crate::transcript::ProofTranscript;

/// Domain separator of the dealer's proof of knowledge of `a_{j,0}`.
pub const DKG_POK_DOMAIN: &[u8] = b"blanket/dkg-pok/v1";
const SESSION_DOMAIN: &[u8] = b"blanket/dkg-session/v1";

/// Committee parameters: `members` (c), `threshold` (t, the number of
/// key holders needed to decrypt; polynomials have degree t - 1) and the
/// session: a SHA-256 digest of the caller's context (protocol run,
/// committee membership), to which every dealer's proof of knowledge is
/// bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DkgParams {
    pub members: u32,
    pub threshold: u32,
    session: [u8; 32],
}

/// Errors of the DKG.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DkgError {
    /// Threshold must be in `1..=members`.
    #[error("invalid parameters: threshold {threshold} of {members} members")]
    BadParams { members: u32, threshold: u32 },
    /// A member index outside `1..=members`.
    #[error("member index {0} out of range")]
    BadIndex(u32),
    /// A dealing has the wrong number of commitments.
    #[error("dealing of member {dealer} has {got} commitments, expected {expected}")]
    BadDealing {
        dealer: u32,
        got: usize,
        expected: usize,
    },
    /// A share does not match its dealer's commitments.
    #[error(
        "share from dealer {dealer} to member {recipient} does not match the dealer's commitments"
    )]
    InvalidShare { dealer: u32, recipient: u32 },
    /// A share is addressed to someone else or belongs to another dealing.
    #[error(
        "share from dealer {dealer} to member {recipient} used for the wrong dealing or recipient"
    )]
    MisaddressedShare { dealer: u32, recipient: u32 },
    /// A complaint was not answered with a valid share: dealer disqualified.
    #[error("dealer {dealer} disqualified by the complaint of member {complainer}")]
    Disqualified { dealer: u32, complainer: u32 },
    /// The same dealer appears twice.
    #[error("dealer {0} appears twice")]
    DuplicateDealer(u32),
    /// No share from a qualified dealer.
    #[error("missing share from qualified dealer {0}")]
    MissingShare(u32),
    /// Fewer qualified dealers than needed (at least one is; blanket requires
    /// at least `threshold` so that a coalition below the threshold cannot
    /// know the key by construction).
    #[error("only {have} qualified dealers, need at least {need}")]
    TooFewQualified { have: usize, need: usize },
    /// The dealer's proof of knowledge of its constant term is missing or
    /// does not verify for this dealer, committee and session.
    #[error("dealer {dealer}: invalid proof of knowledge of the constant term")]
    InvalidProof { dealer: u32 },
    /// A dealer's constant-term commitment `A_{j,0}` is the identity.
    #[error("dealer {dealer}: constant-term commitment is the identity")]
    IdentityCommitment { dealer: u32 },
    /// The qualified dealings sum to the identity as joint key.
    #[error("the joint public key is the identity")]
    IdentityKey,
    /// The committee does not meet the honest-member assumption.
    #[error(
        "committee of {members} with threshold {threshold} does not tolerate {max_malicious} \
         malicious members and {max_dropouts} dropouts: need threshold > {max_malicious} and \
         members >= {max_malicious} + {max_dropouts} + threshold"
    )]
    HonestAssumption {
        members: u32,
        threshold: u32,
        max_malicious: u32,
        max_dropouts: u32,
    },
}

impl DkgParams {
    /// Check `1 <= threshold <= members`. `context` names the protocol run
    /// and the committee (e.g. run id and the members' client ids): proofs
    /// of knowledge made for one context do not verify in another.
    pub fn new(members: u32, threshold: u32, context: &[u8]) -> Result<Self, DkgError> {
        if threshold == 0 || threshold > members {
            return Err(DkgError::BadParams { members, threshold });
        }
        let session = Sha256::new()
            .chain_update(SESSION_DOMAIN)
            .chain_update((context.len() as u64).to_le_bytes())
            .chain_update(context)
            .finalize()
            .into();
        Ok(DkgParams {
            members,
            threshold,
            session,
        })
    }

    /// The smallest threshold that tolerates `max_malicious` malicious
    /// members (`t = max_malicious + 1`), checked against the honest-member
    /// assumption for `max_dropouts` members that drop out (before or after
    /// dealing).
    pub fn for_adversary(
        members: u32,
        max_malicious: u32,
        max_dropouts: u32,
        context: &[u8],
    ) -> Result<Self, DkgError> {
        let t = max_malicious.saturating_add(1);
        let p = DkgParams::new(members, t.min(members.max(1)), context)?;
        p.check_adversary(max_malicious, max_dropouts)?;
        Ok(p)
    }

    /// The honest-member assumption (module documentation): at most `t - 1`
    /// malicious members, and at least `t` honest members that stay to
    /// verify their shares: `threshold > max_malicious` and
    /// `members >= max_malicious + max_dropouts + threshold`.
    pub fn check_adversary(&self, max_malicious: u32, max_dropouts: u32) -> Result<(), DkgError> {
        let need = (max_malicious as u64) + (max_dropouts as u64) + (self.threshold as u64);
        if self.threshold <= max_malicious || (self.members as u64) < need {
            return Err(DkgError::HonestAssumption {
                members: self.members,
                threshold: self.threshold,
                max_malicious,
                max_dropouts,
            });
        }
        Ok(())
    }

    /// The session digest the proofs are bound to.
    pub fn session(&self) -> &[u8; 32] {
        &self.session
    }

    fn check_index(&self, i: u32) -> Result<(), DkgError> {
        if i == 0 || i > self.members {
            Err(DkgError::BadIndex(i))
        } else {
            Ok(())
        }
    }
}

/// A member's secret polynomial for one DKG run.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Dealer {
    #[zeroize(skip)]
    params: DkgParams,
    #[zeroize(skip)]
    index: u32,
    coeffs: Vec<Scalar>,
    #[zeroize(skip)]
    dealing: Dealing,
}

/// The public part of a dealing: Feldman commitments `A_{j,k} = a_{j,k}·G`,
/// `k = 0..t`, and the Schnorr proof of knowledge of `a_{j,0}` bound to the
/// dealer, the committee and the session.
///
/// Each commitment is kept both as a point and as its canonical 32-byte
/// encoding (the bytes it was decoded from, or its compression when it was
/// made): the proof transcript and the wire encoding use the bytes, the
/// share checks use the points. A Ristretto compression costs an inversion
/// square root, and a committee of `c` members otherwise re-compressed every
/// one of the `c t` commitments at each member and at the relay several
/// times (issue 16). The two lists are private and set together
/// ([`Dealing::new`], [`Dealing::from_bytes`]), so they cannot disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dealing {
    pub dealer: u32,
    commitments: Vec<RistrettoPoint>,
    encoded: Vec<CompressedRistretto>,
    pub proof: SchnorrProof,
}

impl Dealing {
    /// A dealing from its parts (the commitments are compressed here).
    pub fn new(dealer: u32, commitments: Vec<RistrettoPoint>, proof: SchnorrProof) -> Self {
        let encoded = crate::transcript::compress_all(&commitments);
        Dealing {
            dealer,
            commitments,
            encoded,
            proof,
        }
    }

    /// From points and their canonical encodings, known to agree (decoded
    /// from those bytes, or compressed from those points).
    pub(crate) fn from_parts(
        dealer: u32,
        commitments: Vec<RistrettoPoint>,
        encoded: Vec<CompressedRistretto>,
        proof: SchnorrProof,
    ) -> Self {
        debug_assert_eq!(commitments.len(), encoded.len());
        Dealing {
            dealer,
            commitments,
            encoded,
            proof,
        }
    }

    /// The commitments `A_{j,0..t}`.
    pub fn commitments(&self) -> &[RistrettoPoint] {
        &self.commitments
    }

    /// Their canonical encodings, in the same order.
    pub fn encoded_commitments(&self) -> &[CompressedRistretto] {
        &self.encoded
    }
}

/// A share `f_j(i)` sent privately from dealer `j` to member `i`.
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct SecretShare {
    #[zeroize(skip)]
    pub dealer: u32,
    #[zeroize(skip)]
    pub recipient: u32,
    value: Scalar,
}

impl std::fmt::Debug for SecretShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretShare({} -> {})", self.dealer, self.recipient)
    }
}

/// Member `complainer` accuses `dealer` of a bad or missing share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complaint {
    pub dealer: u32,
    pub complainer: u32,
}

impl Dealer {
    /// Member `index` picks its random polynomial.
    pub fn new<R: RngCore + CryptoRng>(
        params: DkgParams,
        index: u32,
        rng: &mut R,
    ) -> Result<Self, DkgError> {
        params.check_index(index)?;
        let mut coeffs: Vec<Scalar> = (0..params.threshold).map(|_| Scalar::random(rng)).collect();
        // A zero constant term would commit to the identity (probability
        // 2^-252; redrawn so that every honest dealing is accepted).
        while coeffs[0] == Scalar::ZERO {
            coeffs[0] = Scalar::random(rng);
        }
        let commitments: Vec<RistrettoPoint> = coeffs
            .iter()
            .map(|a| a * RISTRETTO_BASEPOINT_TABLE)
            .collect();
        let encoded = crate::transcript::compress_all(&commitments);
        let t = pok_transcript(&params, index, &encoded);
        let proof = schnorr::prove_in(t, &commitments[0], &coeffs[0], rng);
        Ok(Dealer {
            params,
            index,
            coeffs,
            dealing: Dealing::from_parts(index, commitments, encoded, proof),
        })
    }

    /// The public commitments and proof of knowledge to broadcast.
    pub fn dealing(&self) -> Dealing {
        self.dealing.clone()
    }

    /// The share for member `recipient` (including itself).
    pub fn share_for(&self, recipient: u32) -> Result<SecretShare, DkgError> {
        self.params.check_index(recipient)?;
        let x = Scalar::from(recipient);
        // Horner evaluation of f(x).
        let mut v = Scalar::ZERO;
        for a in self.coeffs.iter().rev() {
            v = v * x + a;
        }
        Ok(SecretShare {
            dealer: self.index,
            recipient,
            value: v,
        })
    }
}

/// Member indices below this bound evaluate the committed polynomial by
/// Horner's rule in the exponent (see [`eval_commitments`]).
const HORNER_BELOW: u32 = 1 << 10;

/// `sum_k i^k A_k` (public data: variable time).
///
/// Member indices are small (committees have at most a few hundred
/// members), so Horner's rule `(..(A_{t-1}·i + A_{t-2})·i + ..)·i + A_0`
/// with a double-and-add multiplication by the index costs about
/// `t (log2 i + popcount i)` point additions, against about `250 + 60 t`
/// for a multiscalar multiplication with the full-size scalars `i^k`
/// (at `t = 20`, `i <= 35`: about 180 against 1,400). Larger indices use
/// the multiscalar multiplication. Both give the same point.
fn eval_commitments(commitments: &[RistrettoPoint], i: u32) -> RistrettoPoint {
    if i < HORNER_BELOW {
        let mut acc = RistrettoPoint::identity();
        for c in commitments.iter().rev() {
            acc = mul_small(&acc, i) + c;
        }
        return acc;
    }
    let x = Scalar::from(i);
    let mut pow = Scalar::ONE;
    let mut powers = Vec::with_capacity(commitments.len());
    for _ in commitments {
        powers.push(pow);
        pow *= x;
    }
    RistrettoPoint::vartime_multiscalar_mul(&powers, commitments)
}

/// `k·P` by double-and-add over the bits of `k` (public: variable time).
fn mul_small(p: &RistrettoPoint, k: u32) -> RistrettoPoint {
    let bits = u32::BITS - k.leading_zeros();
    if bits == 0 {
        return RistrettoPoint::identity();
    }
    // The top bit is 1: start from P.
    let mut acc = *p;
    for bit in (0..bits - 1).rev() {
        acc = acc + acc;
        if (k >> bit) & 1 == 1 {
            acc += p;
        }
    }
    acc
}

/// The transcript of a dealer's proof of knowledge of `a_{j,0}`: the
/// committee (size, threshold, session), the dealer's index and all its
/// commitments [FROST, Komlo-Goldberg 2020, KeyGen round 1 step 2: the
/// challenge binds the dealer's index and a context string], appended as
/// their canonical encodings.
pub(crate) fn pok_transcript(
    params: &DkgParams,
    dealer: u32,
    commitments: &[CompressedRistretto],
) -> ProofTranscript {
    let mut t = ProofTranscript::new(DKG_POK_DOMAIN);
    t.append_u64(b"members", params.members as u64);
    t.append_u64(b"threshold", params.threshold as u64);
    t.append_bytes(b"session", &params.session);
    t.append_u64(b"dealer", dealer as u64);
    t.append_points(b"commitments", commitments);
    t
}

/// Check a dealing before it is used: index in range, `t` commitments,
/// `A_{j,0}` not the identity, and a valid proof of knowledge of `a_{j,0}`
/// for this dealer, committee and session.
pub fn verify_dealing(params: &DkgParams, dealing: &Dealing) -> Result<(), DkgError> {
    params.check_index(dealing.dealer)?;
    if dealing.commitments.len() != params.threshold as usize {
        return Err(DkgError::BadDealing {
            dealer: dealing.dealer,
            got: dealing.commitments.len(),
            expected: params.threshold as usize,
        });
    }
    let a0 = &dealing.commitments[0];
    if a0.is_identity() {
        return Err(DkgError::IdentityCommitment {
            dealer: dealing.dealer,
        });
    }
    let t = pok_transcript(params, dealing.dealer, &dealing.encoded);
    schnorr::verify_in_compressed(t, a0, &dealing.encoded[0], &dealing.proof).map_err(|_| {
        DkgError::InvalidProof {
            dealer: dealing.dealer,
        }
    })
}

/// Check a received share against its dealer's commitments:
/// `f_j(i)·G == sum_k i^k A_{j,k}` (after [`verify_dealing`]).
pub fn verify_share(
    params: &DkgParams,
    dealing: &Dealing,
    share: &SecretShare,
) -> Result<(), DkgError> {
    verify_dealing(params, dealing)?;
    share_matches(params, dealing, share)
}

/// The share check alone, for a dealing already verified.
fn share_matches(
    params: &DkgParams,
    dealing: &Dealing,
    share: &SecretShare,
) -> Result<(), DkgError> {
    params.check_index(share.recipient)?;
    if share.dealer != dealing.dealer {
        return Err(DkgError::MisaddressedShare {
            dealer: share.dealer,
            recipient: share.recipient,
        });
    }
    let lhs = &share.value * RISTRETTO_BASEPOINT_TABLE;
    if lhs == eval_commitments(&dealing.commitments, share.recipient) {
        Ok(())
    } else {
        Err(DkgError::InvalidShare {
            dealer: share.dealer,
            recipient: share.recipient,
        })
    }
}

/// Decide a complaint: the dealer is cleared (`Ok`) only if it revealed the
/// complainer's share and that share verifies. A cleared share is then
/// public and the complainer uses it.
pub fn resolve_complaint(
    params: &DkgParams,
    dealing: &Dealing,
    complaint: &Complaint,
    revealed: Option<&SecretShare>,
) -> Result<(), DkgError> {
    let disq = DkgError::Disqualified {
        dealer: complaint.dealer,
        complainer: complaint.complainer,
    };
    match revealed {
        Some(s)
            if s.dealer == complaint.dealer
                && s.recipient == complaint.complainer
                && dealing.dealer == complaint.dealer
                && verify_share(params, dealing, s).is_ok() =>
        {
            Ok(())
        }
        _ => Err(disq),
    }
}

fn check_qualified(params: &DkgParams, qualified: &[Dealing]) -> Result<(), DkgError> {
    for d in qualified {
        verify_dealing(params, d)?;
    }
    check_qualified_set(params, qualified.iter().map(|d| d.dealer))
}

/// QUAL has no repeated dealer and at least `threshold` of them (dealings
/// already verified).
fn check_qualified_set(
    params: &DkgParams,
    dealers: impl ExactSizeIterator<Item = u32>,
) -> Result<(), DkgError> {
    let have = dealers.len();
    let mut seen = vec![false; params.members as usize + 1];
    for d in dealers {
        // `verify_dealing` checked the index range.
        let slot = seen.get_mut(d as usize).ok_or(DkgError::BadIndex(d))?;
        if *slot {
            return Err(DkgError::DuplicateDealer(d));
        }
        *slot = true;
    }
    if have < params.threshold as usize {
        return Err(DkgError::TooFewQualified {
            have,
            need: params.threshold as usize,
        });
    }
    Ok(())
}

/// The coefficient-wise sum of QUAL's commitments (the joint polynomial
/// committed in the exponent).
fn aggregate<'a>(
    params: &DkgParams,
    qualified: impl Iterator<Item = &'a Dealing>,
) -> Vec<RistrettoPoint> {
    let mut agg = vec![RistrettoPoint::identity(); params.threshold as usize];
    for d in qualified {
        for (a, c) in agg.iter_mut().zip(&d.commitments) {
            *a += c;
        }
    }
    agg
}

/// The group key of verified, qualified dealings.
fn group_key_of<'a>(
    params: &DkgParams,
    qualified: impl Iterator<Item = &'a Dealing>,
) -> Result<GroupKey, DkgError> {
    let agg = aggregate(params, qualified);
    let verification_keys = (1..=params.members)
        .map(|i| eval_commitments(&agg, i))
        .collect();
    let pk = PublicKey::from_point(agg[0]).map_err(|_| DkgError::IdentityKey)?;
    Ok(GroupKey::new(params.threshold, pk, verification_keys))
}

/// The committee's public data from the dealings of QUAL: the joint public
/// key and every member's verification key.
pub fn group_key(params: &DkgParams, qualified: &[Dealing]) -> Result<GroupKey, DkgError> {
    check_qualified(params, qualified)?;
    group_key_of(params, qualified.iter())
}

/// Member `index`'s key share: the sum of the (verified) shares it received
/// from every dealer in QUAL.
pub fn key_share(
    params: &DkgParams,
    index: u32,
    qualified: &[Dealing],
    shares: &[SecretShare],
) -> Result<KeyShare, DkgError> {
    params.check_index(index)?;
    check_qualified(params, qualified)?;
    let mut x = Zeroizing::new(Scalar::ZERO);
    for d in qualified {
        let s = shares
            .iter()
            .find(|s| s.dealer == d.dealer)
            .ok_or(DkgError::MissingShare(d.dealer))?;
        if s.recipient != index {
            return Err(DkgError::MisaddressedShare {
                dealer: s.dealer,
                recipient: s.recipient,
            });
        }
        // Every dealing passed `verify_dealing` in `check_qualified`.
        share_matches(params, d, s)?;
        *x += s.value;
    }
    Ok(KeyShare::new(index, *x))
}

mod attest;
mod verified;
mod wire;
pub use attest::verify_attestation;
pub use verified::{
    group_key_verified, joint_public_key, key_share_verified, VerifiedDealing, VerifiedShare,
};
pub use wire::{DEALING_VERSION, MAX_THRESHOLD, SECRET_SHARE_BYTES};

#[cfg(test)]
pub(crate) mod tests;
