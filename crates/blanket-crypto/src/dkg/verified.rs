//! Dealings and shares that passed their checks, as types.
//!
//! A committee member checks every dealing ([`verify_dealing`]) and every
//! share addressed to it ([`verify_share`]) when they arrive, and needs the
//! same dealings again for the joint key and its key share once QUAL is
//! announced; the relay checks each dealing on arrival and needs QUAL's
//! group key later. [`group_key`] and [`key_share`] take plain dealings and
//! re-check everything (a proof verification per dealing, a share check
//! per share), which at `n = 10,000` with per-lane committees was a large
//! part of the run's CPU (issue 16). The types here carry the fact that the
//! check was made, for the same [`DkgParams`]: a [`VerifiedDealing`] is only
//! made by [`VerifiedDealing::new`] (which runs [`verify_dealing`]) or from
//! a [`Dealer`]'s own dealing, and a [`VerifiedShare`] only by
//! [`VerifiedShare::new`] (the share check against a verified dealing) or
//! from a [`Dealer`]. The functions taking them still check what is cheap
//! and depends on the set (repeated dealers, QUAL's size, the parameters
//! each item was checked for, the recipient, the identity key), and skip
//! only the repeated proof and share checks.

use curve25519_dalek::scalar::Scalar;
use zeroize::Zeroizing;

use super::{
    aggregate, check_qualified_set, group_key_of, share_matches, verify_dealing, Dealer, Dealing,
    DkgError, DkgParams, SecretShare,
};
use crate::elgamal::PublicKey;
use crate::threshold::{GroupKey, KeyShare};

/// A dealing that passed [`verify_dealing`] for the parameters it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedDealing {
    params: DkgParams,
    dealing: Dealing,
}

impl VerifiedDealing {
    /// Verify `dealing` for `params` ([`verify_dealing`]).
    pub fn new(params: &DkgParams, dealing: Dealing) -> Result<Self, DkgError> {
        verify_dealing(params, &dealing)?;
        Ok(VerifiedDealing {
            params: *params,
            dealing,
        })
    }

    /// The dealing.
    pub fn dealing(&self) -> &Dealing {
        &self.dealing
    }

    /// The dealer's index.
    pub fn dealer(&self) -> u32 {
        self.dealing.dealer
    }

    /// A dealing checked for other parameters (committee, threshold or
    /// session) proves nothing for these: its proof is treated as invalid.
    fn check_params(&self, params: &DkgParams) -> Result<(), DkgError> {
        if self.params == *params {
            Ok(())
        } else {
            Err(DkgError::InvalidProof {
                dealer: self.dealing.dealer,
            })
        }
    }
}

/// A share that matched its dealer's verified commitments
/// (`f_j(i)·G == sum_k i^k A_{j,k}`).
#[derive(Clone, PartialEq, Eq)]
pub struct VerifiedShare {
    params: DkgParams,
    share: SecretShare,
}

impl std::fmt::Debug for VerifiedShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Verified{:?}", self.share)
    }
}

impl VerifiedShare {
    /// Check `share` against `dealing` ([`verify_share`] without repeating
    /// the dealing's proof check).
    ///
    /// [`verify_share`]: super::verify_share
    pub fn new(
        params: &DkgParams,
        dealing: &VerifiedDealing,
        share: SecretShare,
    ) -> Result<Self, DkgError> {
        dealing.check_params(params)?;
        share_matches(params, &dealing.dealing, &share)?;
        Ok(VerifiedShare {
            params: *params,
            share,
        })
    }

    /// The share.
    pub fn share(&self) -> &SecretShare {
        &self.share
    }

    /// Its dealer.
    pub fn dealer(&self) -> u32 {
        self.share.dealer
    }

    /// Its recipient.
    pub fn recipient(&self) -> u32 {
        self.share.recipient
    }
}

impl Dealer {
    /// This dealer's own dealing, valid by construction (no proof check).
    pub fn verified_dealing(&self) -> VerifiedDealing {
        VerifiedDealing {
            params: self.params,
            dealing: self.dealing.clone(),
        }
    }

    /// The share for `recipient`, valid by construction (no share check).
    pub fn verified_share_for(&self, recipient: u32) -> Result<VerifiedShare, DkgError> {
        Ok(VerifiedShare {
            params: self.params,
            share: self.share_for(recipient)?,
        })
    }
}

fn check_set(params: &DkgParams, qualified: &[&VerifiedDealing]) -> Result<(), DkgError> {
    for d in qualified {
        d.check_params(params)?;
    }
    check_qualified_set(params, qualified.iter().map(|d| d.dealer()))
}

/// [`group_key`](super::group_key) of verified dealings: the same checks
/// on the set (no repeated dealer, at least `threshold`, not the identity
/// key) without re-verifying each proof.
pub fn group_key_verified(
    params: &DkgParams,
    qualified: &[&VerifiedDealing],
) -> Result<GroupKey, DkgError> {
    check_set(params, qualified)?;
    group_key_of(params, qualified.iter().map(|d| &d.dealing))
}

/// The joint public key `sum_{j in QUAL} A_{j,0}` alone (a member compares
/// it with the announced key; the verification keys of
/// [`group_key_verified`] cost `c` polynomial evaluations it does not need).
pub fn joint_public_key(
    params: &DkgParams,
    qualified: &[&VerifiedDealing],
) -> Result<PublicKey, DkgError> {
    check_set(params, qualified)?;
    let agg = aggregate(params, qualified.iter().map(|d| &d.dealing));
    PublicKey::from_point(agg[0]).map_err(|_| DkgError::IdentityKey)
}

/// [`key_share`](super::key_share) from verified dealings and shares: the
/// same checks on the set and on every share's dealer and recipient,
/// without repeating the proof and share checks.
pub fn key_share_verified(
    params: &DkgParams,
    index: u32,
    qualified: &[&VerifiedDealing],
    shares: &[VerifiedShare],
) -> Result<KeyShare, DkgError> {
    params.check_index(index)?;
    check_set(params, qualified)?;
    let mut x = Zeroizing::new(Scalar::ZERO);
    for d in qualified {
        let s = shares
            .iter()
            .find(|s| s.share.dealer == d.dealer())
            .ok_or(DkgError::MissingShare(d.dealer()))?;
        if s.params != *params {
            return Err(DkgError::InvalidShare {
                dealer: s.share.dealer,
                recipient: s.share.recipient,
            });
        }
        if s.share.recipient != index {
            return Err(DkgError::MisaddressedShare {
                dealer: s.share.dealer,
                recipient: s.share.recipient,
            });
        }
        *x += s.share.value;
    }
    Ok(KeyShare::new(index, *x))
}
