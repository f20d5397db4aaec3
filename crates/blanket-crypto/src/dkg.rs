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
//! Known limitation: joint-Feldman lets a rushing adversary bias the
//! distribution of `pk` (Gennaro, Jarecki, Krawczyk, Rabin, 1999); Gennaro et
//! al. (CT-RSA 2003) show that ElGamal-type uses stay secure with such keys,
//! which is why blanket accepts it instead of the 2-round Pedersen-VSS
//! variant.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, VartimeMultiscalarMul};
use rand_core::{CryptoRng, RngCore};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::elgamal::PublicKey;
use crate::threshold::{GroupKey, KeyShare};
use crate::wire::{DecodeError, Reader, POINT_BYTES};

/// Committee parameters: `members` (c) and `threshold` (t, the number of
/// key holders needed to decrypt; polynomials have degree t - 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DkgParams {
    pub members: u32,
    pub threshold: u32,
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
}

impl DkgParams {
    /// Check `1 <= threshold <= members`.
    pub fn new(members: u32, threshold: u32) -> Result<Self, DkgError> {
        if threshold == 0 || threshold > members {
            return Err(DkgError::BadParams { members, threshold });
        }
        Ok(DkgParams { members, threshold })
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
}

/// The public part of a dealing: Feldman commitments `A_{j,k} = a_{j,k}·G`,
/// `k = 0..t`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dealing {
    pub dealer: u32,
    pub commitments: Vec<RistrettoPoint>,
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
        let coeffs = (0..params.threshold).map(|_| Scalar::random(rng)).collect();
        Ok(Dealer {
            params,
            index,
            coeffs,
        })
    }

    /// The public commitments to broadcast.
    pub fn dealing(&self) -> Dealing {
        Dealing {
            dealer: self.index,
            commitments: self
                .coeffs
                .iter()
                .map(|a| a * RISTRETTO_BASEPOINT_TABLE)
                .collect(),
        }
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

/// `sum_k i^k A_k` (public data: variable time).
fn eval_commitments(commitments: &[RistrettoPoint], i: u32) -> RistrettoPoint {
    let x = Scalar::from(i);
    let mut pow = Scalar::ONE;
    let mut powers = Vec::with_capacity(commitments.len());
    for _ in commitments {
        powers.push(pow);
        pow *= x;
    }
    RistrettoPoint::vartime_multiscalar_mul(&powers, commitments)
}

fn check_dealing(params: &DkgParams, dealing: &Dealing) -> Result<(), DkgError> {
    params.check_index(dealing.dealer)?;
    if dealing.commitments.len() != params.threshold as usize {
        return Err(DkgError::BadDealing {
            dealer: dealing.dealer,
            got: dealing.commitments.len(),
            expected: params.threshold as usize,
        });
    }
    Ok(())
}

/// Check a received share against its dealer's commitments:
/// `f_j(i)·G == sum_k i^k A_{j,k}`.
pub fn verify_share(
    params: &DkgParams,
    dealing: &Dealing,
    share: &SecretShare,
) -> Result<(), DkgError> {
    check_dealing(params, dealing)?;
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
    let mut seen = vec![false; params.members as usize + 1];
    for d in qualified {
        check_dealing(params, d)?;
        if seen[d.dealer as usize] {
            return Err(DkgError::DuplicateDealer(d.dealer));
        }
        seen[d.dealer as usize] = true;
    }
    if qualified.len() < params.threshold as usize {
        return Err(DkgError::TooFewQualified {
            have: qualified.len(),
            need: params.threshold as usize,
        });
    }
    Ok(())
}

/// The committee's public data from the dealings of QUAL: the joint public
/// key and every member's verification key.
pub fn group_key(params: &DkgParams, qualified: &[Dealing]) -> Result<GroupKey, DkgError> {
    check_qualified(params, qualified)?;
    let t = params.threshold as usize;
    let mut agg = vec![RistrettoPoint::identity(); t];
    for d in qualified {
        for (a, c) in agg.iter_mut().zip(&d.commitments) {
            *a += c;
        }
    }
    let verification_keys = (1..=params.members)
        .map(|i| eval_commitments(&agg, i))
        .collect();
    Ok(GroupKey::new(
        params.threshold,
        PublicKey::from_point_unchecked(agg[0]),
        verification_keys,
    ))
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
        verify_share(params, d, s)?;
        *x += s.value;
    }
    Ok(KeyShare::new(index, *x))
}

const DEALING: &str = "DKG dealing";
const SHARE: &str = "DKG share";

/// Encoded size of a [`SecretShare`].
pub const SECRET_SHARE_BYTES: usize = 40;

impl Dealing {
    /// `u32 dealer | u32 t | t points`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + POINT_BYTES * self.commitments.len());
        out.extend_from_slice(&self.dealer.to_le_bytes());
        out.extend_from_slice(&(self.commitments.len() as u32).to_le_bytes());
        for c in &self.commitments {
            out.extend_from_slice(c.compress().as_bytes());
        }
        out
    }

    /// Decode; rejects truncation, a count above 4096, trailing bytes and
    /// non-canonical points.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, DEALING);
        let dealer = r.u32()?;
        let t = r.u32()? as usize;
        if t > 4096 {
            return Err(DecodeError::CountOutOfRange {
                what: DEALING,
                count: t as u64,
                max: 4096,
            });
        }
        let expected = 8 + POINT_BYTES * t;
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: DEALING,
                expected,
                got: bytes.len(),
            });
        }
        let commitments = (0..t)
            .map(|i| r.point(i).map(|p| p.0))
            .collect::<Result<_, _>>()?;
        r.finish()?;
        Ok(Dealing {
            dealer,
            commitments,
        })
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
    pub(crate) fn tampered(&self, delta: Scalar) -> Self {
        SecretShare {
            dealer: self.dealer,
            recipient: self.recipient,
            value: self.value + delta,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// Run the DKG among `present` members (the others drop out before
    /// dealing). Returns the group key and the key shares of present members.
    pub(crate) fn run_dkg(
        params: DkgParams,
        present: &[u32],
        rng: &mut ChaCha20Rng,
    ) -> (GroupKey, Vec<KeyShare>) {
        let dealers: Vec<Dealer> = present
            .iter()
            .map(|&i| Dealer::new(params, i, rng).unwrap())
            .collect();
        let dealings: Vec<Dealing> = dealers
            .iter()
            .map(|d| Dealing::from_bytes(&d.dealing().to_bytes()).unwrap())
            .collect();
        let gk = group_key(&params, &dealings).unwrap();
        let shares = present
            .iter()
            .map(|&i| {
                let mine: Vec<SecretShare> = dealers
                    .iter()
                    .map(|d| SecretShare::from_bytes(&*d.share_for(i).unwrap().to_bytes()).unwrap())
                    .collect();
                key_share(&params, i, &dealings, &mine).unwrap()
            })
            .collect();
        (gk, shares)
    }

    #[test]
    fn shares_match_verification_keys_and_pk() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let params = DkgParams::new(5, 3).unwrap();
        let (gk, shares) = run_dkg(params, &[1, 2, 3, 4, 5], &mut rng);
        for s in &shares {
            assert_eq!(
                s.verification_key(),
                gk.verification_key(s.index()).unwrap()
            );
        }
        // Interpolating any 3 shares at 0 gives the secret key of pk.
        let sk = crate::threshold::interpolate_secret_for_tests(&shares[1..4]);
        assert_eq!(sk * G, *gk.public_key().point());
    }

    #[test]
    fn dropout_before_dealing_excluded() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let params = DkgParams::new(5, 3).unwrap();
        let (gk, shares) = run_dkg(params, &[1, 2, 3, 5], &mut rng);
        assert_eq!(shares.len(), 4);
        let sk = crate::threshold::interpolate_secret_for_tests(&[
            shares[0].clone(),
            shares[2].clone(),
            shares[3].clone(),
        ]);
        assert_eq!(sk * G, *gk.public_key().point());
        // Member 4 still has a verification key, but no share: it is just absent.
        assert!(gk.verification_key(4).is_some());
    }

    #[test]
    fn cheating_dealer_detected_and_complaints_resolved() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let params = DkgParams::new(4, 2).unwrap();
        let d2 = Dealer::new(params, 2, &mut rng).unwrap();
        let dealing = d2.dealing();
        let good = d2.share_for(3).unwrap();
        verify_share(&params, &dealing, &good).unwrap();
        let bad = good.tampered(Scalar::ONE);
        assert_eq!(
            verify_share(&params, &dealing, &bad),
            Err(DkgError::InvalidShare {
                dealer: 2,
                recipient: 3
            })
        );
        let complaint = Complaint {
            dealer: 2,
            complainer: 3,
        };
        // Dealer answers with the right share: cleared.
        resolve_complaint(&params, &dealing, &complaint, Some(&good)).unwrap();
        // Dealer answers with a bad share, or not at all: disqualified.
        assert_eq!(
            resolve_complaint(&params, &dealing, &complaint, Some(&bad)),
            Err(DkgError::Disqualified {
                dealer: 2,
                complainer: 3
            })
        );
        assert_eq!(
            resolve_complaint(&params, &dealing, &complaint, None),
            Err(DkgError::Disqualified {
                dealer: 2,
                complainer: 3
            })
        );
        // Reveals somebody else's share: disqualified.
        let other = d2.share_for(4).unwrap();
        assert!(resolve_complaint(&params, &dealing, &complaint, Some(&other)).is_err());
        // A key share cannot be built from a bad share.
        let d1 = Dealer::new(params, 1, &mut rng).unwrap();
        let dealings = vec![d1.dealing(), dealing.clone()];
        assert_eq!(
            key_share(
                &params,
                3,
                &dealings,
                &[d1.share_for(3).unwrap(), bad.clone()]
            )
            .err(),
            Some(DkgError::InvalidShare {
                dealer: 2,
                recipient: 3
            })
        );
        assert_eq!(
            key_share(&params, 3, &dealings, &[d1.share_for(3).unwrap()]).err(),
            Some(DkgError::MissingShare(2))
        );
    }

    #[test]
    fn malformed_dealings_and_params() {
        assert!(DkgParams::new(3, 0).is_err());
        assert!(DkgParams::new(3, 4).is_err());
        let params = DkgParams::new(3, 2).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        assert_eq!(
            Dealer::new(params, 0, &mut rng).err(),
            Some(DkgError::BadIndex(0))
        );
        assert_eq!(
            Dealer::new(params, 4, &mut rng).err(),
            Some(DkgError::BadIndex(4))
        );
        let d = Dealer::new(params, 1, &mut rng).unwrap();
        let mut dealing = d.dealing();
        dealing.commitments.pop();
        assert!(matches!(
            group_key(
                &params,
                &[
                    dealing.clone(),
                    Dealer::new(params, 2, &mut rng).unwrap().dealing()
                ]
            ),
            Err(DkgError::BadDealing {
                dealer: 1,
                got: 1,
                expected: 2
            })
        ));
        let good = d.dealing();
        assert_eq!(
            group_key(&params, &[good.clone(), good.clone()]).err(),
            Some(DkgError::DuplicateDealer(1))
        );
        assert!(matches!(
            group_key(&params, std::slice::from_ref(&good)),
            Err(DkgError::TooFewQualified { .. })
        ));
        let b = good.to_bytes();
        assert!(matches!(
            Dealing::from_bytes(&b[..b.len() - 1]),
            Err(DecodeError::WrongLength { .. })
        ));
        let mut bad = b.clone();
        bad[8] |= 1;
        assert!(matches!(
            Dealing::from_bytes(&bad),
            Err(DecodeError::NonCanonicalPoint { index: 0, .. })
        ));
        let mut huge = b.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            Dealing::from_bytes(&huge),
            Err(DecodeError::CountOutOfRange { .. })
        ));
        assert!(SecretShare::from_bytes(&[0u8; 39]).is_err());
        let mut sb = [0u8; 40];
        sb[8..].copy_from_slice(&[0xff; 32]);
        assert!(matches!(
            SecretShare::from_bytes(&sb),
            Err(DecodeError::NonCanonicalScalar { .. })
        ));
    }
}
