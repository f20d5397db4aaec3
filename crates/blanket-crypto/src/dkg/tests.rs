use super::*;
use crate::wire::DecodeError;
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
    let params = DkgParams::new(5, 3, b"test").unwrap();
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
    let params = DkgParams::new(5, 3, b"test").unwrap();
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
    let params = DkgParams::new(4, 2, b"test").unwrap();
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
    assert!(DkgParams::new(3, 0, b"test").is_err());
    assert!(DkgParams::new(3, 4, b"test").is_err());
    let params = DkgParams::new(3, 2, b"test").unwrap();
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
    let full = d.dealing();
    let dealing = Dealing::new(1, full.commitments()[..1].to_vec(), full.proof);
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
    bad[9] |= 1;
    assert!(matches!(
        Dealing::from_bytes(&bad),
        Err(DecodeError::NonCanonicalPoint { index: 0, .. })
    ));
    let mut huge = b.clone();
    huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
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

#[test]
fn proof_of_knowledge_is_bound_to_dealer_committee_and_session() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let params = DkgParams::new(4, 2, b"run-1").unwrap();
    let d = Dealer::new(params, 2, &mut rng).unwrap().dealing();
    verify_dealing(&params, &d).unwrap();
    let back = Dealing::from_bytes(&d.to_bytes()).unwrap();
    assert_eq!(back, d);
    // Another run, another committee size or threshold, another index.
    for other in [
        DkgParams::new(4, 2, b"run-2").unwrap(),
        DkgParams::new(5, 2, b"run-1").unwrap(),
    ] {
        assert_eq!(
            verify_dealing(&other, &d),
            Err(DkgError::InvalidProof { dealer: 2 })
        );
    }
    let mut moved = d.clone();
    moved.dealer = 3;
    assert_eq!(
        verify_dealing(&params, &moved),
        Err(DkgError::InvalidProof { dealer: 3 })
    );
    // Changed higher commitment: the proof binds all of them.
    let mut bumped = d.commitments().to_vec();
    bumped[1] += G;
    let changed = Dealing::new(d.dealer, bumped, d.proof);
    assert_eq!(
        verify_dealing(&params, &changed),
        Err(DkgError::InvalidProof { dealer: 2 })
    );
    // Identity constant term, even with a valid proof for x = 0.
    let zero = vec![RistrettoPoint::identity(), G];
    let t = pok_transcript(&params, 1, &crate::transcript::compress_all(&zero));
    let proof = schnorr::prove_in(t, &zero[0], &Scalar::ZERO, &mut rng);
    let id = Dealing::new(1, zero, proof);
    assert_eq!(
        verify_dealing(&params, &id),
        Err(DkgError::IdentityCommitment { dealer: 1 })
    );
    // A bad proof keeps the dealer out of QUAL in every function.
    let mut forged = d.clone();
    forged.proof.s += Scalar::ONE;
    let d1 = Dealer::new(params, 1, &mut rng).unwrap();
    assert_eq!(
        group_key(&params, &[d1.dealing(), forged.clone()]).err(),
        Some(DkgError::InvalidProof { dealer: 2 })
    );
    let d2 = Dealer::new(params, 2, &mut rng).unwrap();
    let mut forged2 = d2.dealing();
    forged2.proof.s += Scalar::ONE;
    let invalid = Some(DkgError::InvalidProof { dealer: 2 });
    let shares = [d1.share_for(3).unwrap(), d2.share_for(3).unwrap()];
    assert_eq!(
        key_share(&params, 3, &[d1.dealing(), forged2.clone()], &shares).err(),
        invalid
    );
    assert_eq!(verify_share(&params, &forged2, &shares[1]).err(), invalid);
    let complaint = Complaint {
        dealer: 2,
        complainer: 3,
    };
    assert!(resolve_complaint(&params, &forged2, &complaint, Some(&shares[1])).is_err());
    key_share(&params, 3, &[d1.dealing(), d2.dealing()], &shares).unwrap();
    let mut bad_version = d.to_bytes();
    bad_version[0] = 1;
    assert_eq!(
        Dealing::from_bytes(&bad_version),
        Err(DecodeError::UnknownVersion {
            what: "DKG dealing",
            tag: 1
        })
    );
}

#[test]
fn joint_key_equal_to_identity_is_refused() {
    // Two colluding dealers with a_0 and -a_0 (each proof valid).
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let params = DkgParams::new(2, 1, b"x").unwrap();
    let a = Scalar::random(&mut rng);
    let mk = |dealer: u32, a0: Scalar, rng: &mut ChaCha20Rng| {
        let commitments = vec![a0 * G];
        let t = pok_transcript(
            &params,
            dealer,
            &crate::transcript::compress_all(&commitments),
        );
        let proof = schnorr::prove_in(t, &commitments[0], &a0, rng);
        Dealing::new(dealer, commitments, proof)
    };
    let d1 = mk(1, a, &mut rng);
    let d2 = mk(2, -a, &mut rng);
    assert_eq!(
        group_key(&params, &[d1, d2]).err(),
        Some(DkgError::IdentityKey)
    );
}

#[test]
fn honest_member_assumption() {
    // 3-of-5: one malicious member and one dropout are fine (5 >= 1 + 1 + 3).
    let p = DkgParams::new(5, 3, b"x").unwrap();
    p.check_adversary(1, 1).unwrap();
    // Two malicious and one dropout: only 2 honest verifiers (the rogue-key
    // setting of the review).
    assert!(matches!(
        p.check_adversary(2, 1),
        Err(DkgError::HonestAssumption { .. })
    ));
    // c-of-c with one malicious member, 4-of-5 with two: refused.
    assert!(DkgParams::new(3, 3, b"x")
        .unwrap()
        .check_adversary(1, 0)
        .is_err());
    assert!(DkgParams::new(5, 4, b"x")
        .unwrap()
        .check_adversary(2, 0)
        .is_err());
    // The smallest threshold for an adversary.
    let q = DkgParams::for_adversary(9, 3, 2, b"x").unwrap();
    assert_eq!(q.threshold, 4);
    assert!(DkgParams::for_adversary(8, 3, 2, b"x").is_err());
}

#[test]
fn horner_evaluation_matches_the_multiscalar_one() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let cs: Vec<RistrettoPoint> = (0..20).map(|_| RistrettoPoint::random(&mut rng)).collect();
    for i in [0u32, 1, 2, 35, 1023, HORNER_BELOW, 5000, u32::MAX] {
        let x = Scalar::from(i);
        let mut pow = Scalar::ONE;
        let mut naive = RistrettoPoint::identity();
        for c in &cs {
            naive += pow * c;
            pow *= x;
        }
        assert_eq!(eval_commitments(&cs, i), naive, "index {i}");
    }
    for k in [0u32, 1, 2, 3, 35, 1 << 20] {
        assert_eq!(mul_small(&G, k), Scalar::from(k) * G, "k = {k}");
    }
}

#[test]
fn verified_types_give_the_same_keys_and_keep_every_check() {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let params = DkgParams::new(4, 3, b"verified").unwrap();
    let dealers: Vec<Dealer> = (1..=4)
        .map(|i| Dealer::new(params, i, &mut rng).unwrap())
        .collect();
    let plain: Vec<Dealing> = dealers
        .iter()
        .map(|d| Dealing::from_bytes(&d.dealing().to_bytes()).unwrap())
        .collect();
    let verified: Vec<VerifiedDealing> = plain
        .iter()
        .map(|d| VerifiedDealing::new(&params, d.clone()).unwrap())
        .collect();
    let refs: Vec<&VerifiedDealing> = verified.iter().collect();
    let gk = group_key(&params, &plain).unwrap();
    assert_eq!(group_key_verified(&params, &refs).unwrap(), gk);
    assert_eq!(joint_public_key(&params, &refs).unwrap(), *gk.public_key());
    // Member 2's key share, from its own dealing and shares and the others'.
    let own = dealers[1].verified_dealing();
    assert_eq!(own, verified[1]);
    let shares: Vec<SecretShare> = dealers.iter().map(|d| d.share_for(2).unwrap()).collect();
    let vshares: Vec<VerifiedShare> = verified
        .iter()
        .zip(&shares)
        .map(|(d, s)| VerifiedShare::new(&params, d, s.clone()).unwrap())
        .collect();
    let ks = key_share(&params, 2, &plain, &shares).unwrap();
    let ks2 = key_share_verified(&params, 2, &refs, &vshares).unwrap();
    assert_eq!(ks.verification_key(), ks2.verification_key());
    assert_eq!(ks2.verification_key(), gk.verification_key(2).unwrap());
    assert_eq!(
        dealers[0].verified_share_for(2).unwrap().share(),
        &shares[0]
    );
    // A wrong share is named (dealer and recipient), as by `verify_share`.
    assert_eq!(
        VerifiedShare::new(&params, &verified[2], shares[2].tampered(Scalar::ONE)).err(),
        Some(DkgError::InvalidShare {
            dealer: 3,
            recipient: 2
        })
    );
    // A share of another dealer, a share for someone else.
    assert_eq!(
        VerifiedShare::new(&params, &verified[2], shares[1].clone()).err(),
        Some(DkgError::MisaddressedShare {
            dealer: 2,
            recipient: 2
        })
    );
    assert_eq!(
        key_share_verified(&params, 3, &refs, &vshares).err(),
        Some(DkgError::MisaddressedShare {
            dealer: 1,
            recipient: 2
        })
    );
    // A bad proof never becomes a verified dealing.
    let mut forged = plain[3].clone();
    forged.proof.s += Scalar::ONE;
    assert_eq!(
        VerifiedDealing::new(&params, forged).err(),
        Some(DkgError::InvalidProof { dealer: 4 })
    );
    // Verified for other parameters: refused for these.
    let other = DkgParams::new(4, 3, b"another").unwrap();
    let foreign = Dealer::new(other, 4, &mut rng).unwrap().verified_dealing();
    let mixed = [refs[0], refs[1], &foreign];
    assert_eq!(
        group_key_verified(&params, &mixed).err(),
        Some(DkgError::InvalidProof { dealer: 4 })
    );
    assert_eq!(
        VerifiedShare::new(&params, &foreign, shares[3].clone()).err(),
        Some(DkgError::InvalidProof { dealer: 4 })
    );
    // Set checks: a repeated dealer, too few dealers, a missing share.
    assert_eq!(
        joint_public_key(&params, &[refs[0], refs[1], refs[0]]).err(),
        Some(DkgError::DuplicateDealer(1))
    );
    assert_eq!(
        group_key_verified(&params, &refs[..2]).err(),
        Some(DkgError::TooFewQualified { have: 2, need: 3 })
    );
    assert_eq!(
        key_share_verified(&params, 2, &refs, &vshares[..3]).err(),
        Some(DkgError::MissingShare(4))
    );
    assert_eq!(
        key_share_verified(&params, 9, &refs, &vshares).err(),
        Some(DkgError::BadIndex(9))
    );
}

#[test]
fn dealing_keeps_the_bytes_it_was_decoded_from() {
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let params = DkgParams::new(3, 3, b"bytes").unwrap();
    let d = Dealer::new(params, 1, &mut rng).unwrap().dealing();
    let decoded = Dealing::from_bytes(&d.to_bytes()).unwrap();
    assert_eq!(decoded, d);
    for (p, c) in decoded
        .commitments()
        .iter()
        .zip(decoded.encoded_commitments())
    {
        assert_eq!(p.compress(), *c);
    }
    let rebuilt = Dealing::new(d.dealer, d.commitments().to_vec(), d.proof);
    assert_eq!(rebuilt.to_bytes(), d.to_bytes());
}
