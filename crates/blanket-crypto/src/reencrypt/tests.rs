//! Round trips and the attacks a verifier must refuse.

use super::*;
use crate::dkg::tests::run_dkg;
use crate::dkg::DkgParams;
use crate::elgamal::Keypair;
use crate::threshold::PartialDecryption;
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const RUN: &[u8] = b"reencrypt/run-1";
const CTX: ReencryptContext<'static> = ReencryptContext { run: RUN, lane: 3 };

struct Setup {
    row: GroupKey,
    row_shares: Vec<KeyShare>,
    cols: Vec<(GroupKey, Vec<KeyShare>)>,
    msgs: Vec<u64>,
    cts: Vec<Ciphertext>,
    targets: Vec<PublicKey>,
}

/// A 5-member, threshold-3 row committee (member 4 absent), two column
/// committees, and 6 ciphertexts whose targets alternate between columns.
fn setup(seed: u64) -> (Setup, ChaCha20Rng) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (row, row_shares) = run_dkg(
        DkgParams::new(5, 3, b"row 3").unwrap(),
        &[1, 2, 3, 5],
        &mut rng,
    );
    let cols: Vec<_> = (0..2)
        .map(|j| {
            let p = DkgParams::new(4, 2, format!("column {j}").as_bytes()).unwrap();
            run_dkg(p, &[1, 2, 3, 4], &mut rng)
        })
        .collect();
    let msgs: Vec<u64> = (0..6u64).map(|i| 1000 + 17 * i).collect();
    let cts = msgs
        .iter()
        .map(|&m| row.public_key().encrypt(m, &mut rng).unwrap())
        .collect();
    let targets = (0..6).map(|k| *cols[k % 2].0.public_key()).collect();
    (
        Setup {
            row,
            row_shares,
            cols,
            msgs,
            cts,
            targets,
        },
        rng,
    )
}

fn partials(s: &Setup, rng: &mut ChaCha20Rng) -> Vec<ReencryptionPartial> {
    s.row_shares
        .iter()
        .map(|k| reencrypt(k, &s.cts, &s.targets, &CTX, rng).unwrap())
        .collect()
}

#[test]
fn honest_round_trip_decrypts_under_the_column_keys() {
    let (s, mut rng) = setup(1);
    let ps = partials(&s, &mut rng);
    for p in &ps {
        verify_partial(&s.row, &s.cts, &s.targets, p, &CTX).unwrap();
        let back = ReencryptionPartial::from_bytes(&p.to_bytes()).unwrap();
        assert_eq!(&back, p);
        assert_eq!(p.to_bytes().len(), ReencryptionPartial::encoded_len(6));
    }
    // Every 3-subset of the 4 present members.
    let mut outputs = Vec::new();
    for skip in 0..4 {
        let subset: Vec<_> = ps
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, p)| p.clone())
            .collect();
        let out = combine(&s.row, &s.cts, &s.targets, &subset, &CTX).unwrap();
        // Column j's committee decrypts its ciphertexts (threshold decryption).
        for j in 0..2 {
            let (gk, shares) = &s.cols[j];
            let mine: Vec<Ciphertext> = out.iter().skip(j).step_by(2).copied().collect();
            let pd: Vec<PartialDecryption> = shares[..2]
                .iter()
                .map(|k| k.partial_decrypt(&mine, b"col", &mut rng))
                .collect();
            let got: Vec<u64> = gk
                .decrypt_messages(&mine, &pd, b"col")
                .unwrap()
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            let want: Vec<u64> = s.msgs.iter().skip(j).step_by(2).copied().collect();
            assert_eq!(got, want);
        }
        outputs.push(out);
    }
    // Different subsets give different randomness R (same messages).
    assert_ne!(outputs[0], outputs[1]);
    // The row key no longer decrypts the output.
    let row_pd: Vec<PartialDecryption> = s.row_shares[..3]
        .iter()
        .map(|k| k.partial_decrypt(&outputs[0], b"row", &mut rng))
        .collect();
    let wrong = s
        .row
        .decrypt_messages(&outputs[0], &row_pd, b"row")
        .unwrap();
    assert!(wrong
        .iter()
        .zip(&s.msgs)
        .all(|(r, m)| r.as_ref().ok() != Some(m)));
}

#[test]
fn single_key_target_decrypts_with_its_secret() {
    let (s, mut rng) = setup(2);
    let kp = Keypair::generate(&mut rng);
    let targets = vec![kp.public; s.cts.len()];
    let ps: Vec<_> = s.row_shares[1..]
        .iter()
        .map(|k| reencrypt(k, &s.cts, &targets, &CTX, &mut rng).unwrap())
        .collect();
    let out = combine(&s.row, &s.cts, &targets, &ps, &CTX).unwrap();
    let got: Vec<u64> = out.iter().map(|c| kp.secret.decrypt(c).unwrap()).collect();
    assert_eq!(got, s.msgs);
}

#[test]
fn wrong_share_is_refused() {
    let (s, mut rng) = setup(3);
    // Member 2 uses a share that is not x_2 (e.g. an old or guessed one).
    let fake = KeyShare::new(2, s.row_shares[1].secret() + Scalar::ONE);
    let p = reencrypt(&fake, &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 2 })
    );
    // A correct proof, then one B shifted: the combination would be wrong.
    let mut p = reencrypt(&s.row_shares[1], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    p.shares[4].b += G;
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 2 })
    );
    let mut all = partials(&s, &mut rng);
    all[1] = p;
    assert_eq!(
        combine(&s.row, &s.cts, &s.targets, &all, &CTX).err(),
        Some(ReencryptError::InvalidProof { member: 2 })
    );
    // The valid ones still combine.
    let (ok, bad) = filter_valid(&s.row, &s.cts, &s.targets, &all, &CTX);
    assert_eq!(bad, vec![ReencryptError::InvalidProof { member: 2 }]);
    let ok: Vec<_> = ok.into_iter().cloned().collect();
    let out = combine(&s.row, &s.cts, &s.targets, &ok, &CTX).unwrap();
    assert_eq!(out.len(), 6);
}

#[test]
fn wrong_target_key_is_refused() {
    let (s, mut rng) = setup(4);
    let p = reencrypt(&s.row_shares[0], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    // The relay (or a member) claims the shares are for other keys.
    let mut other = s.targets.clone();
    other.swap(0, 1);
    assert_eq!(
        verify_partial(&s.row, &s.cts, &other, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 1 })
    );
    // A member that re-encrypts to a key it knows but claims the column key.
    let mine = Keypair::generate(&mut rng);
    let evil_targets = vec![mine.public; 6];
    let mut p2 = reencrypt(&s.row_shares[0], &s.cts, &evil_targets, &CTX, &mut rng).unwrap();
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p2, &CTX),
        Err(ReencryptError::InvalidProof { member: 1 })
    );
    // Nor with the transcript's targets patched in by recomputing nothing.
    p2.proof.e += Scalar::ONE;
    assert!(verify_partial(&s.row, &s.cts, &s.targets, &p2, &CTX).is_err());
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets[..5], &p, &CTX),
        Err(ReencryptError::TargetCount {
            got: 5,
            expected: 6
        })
    );
}

#[test]
fn replays_from_other_ciphertexts_lanes_and_runs_are_refused() {
    let (s, mut rng) = setup(5);
    let p = reencrypt(&s.row_shares[2], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    // Another ciphertext at one position (same length).
    let mut cts2 = s.cts.clone();
    cts2[3] = s.row.public_key().encrypt(5, &mut rng).unwrap();
    assert_eq!(
        verify_partial(&s.row, &cts2, &s.targets, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 3 })
    );
    // The same ciphertexts in another order.
    let mut cts3 = s.cts.clone();
    cts3.swap(0, 2);
    assert!(verify_partial(&s.row, &cts3, &s.targets, &p, &CTX).is_err());
    // Another lane, another run.
    let lane = ReencryptContext { run: RUN, lane: 4 };
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &lane),
        Err(ReencryptError::InvalidProof { member: 3 })
    );
    let run = ReencryptContext {
        run: b"reencrypt/run-2",
        lane: 3,
    };
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &run),
        Err(ReencryptError::InvalidProof { member: 3 })
    );
    // A sub-list of the shares (replaying part of a row).
    let mut short = p.clone();
    short.shares.truncate(3);
    short.proof.s_rho.truncate(3);
    assert_eq!(
        verify_partial(&s.row, &s.cts[..3], &s.targets[..3], &short, &CTX),
        Err(ReencryptError::InvalidProof { member: 3 })
    );
    assert!(matches!(
        verify_partial(&s.row, &s.cts, &s.targets, &short, &CTX),
        Err(ReencryptError::LengthMismatch { member: 3, .. })
    ));
    // Another committee's key (same member index) does not verify it.
    let (other, _) = &s.cols[0];
    assert_eq!(
        verify_partial(other, &s.cts, &s.targets, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 3 })
    );
}

type Tweak = Box<dyn Fn(&mut ReencryptionPartial)>;

#[test]
fn malleated_proofs_and_shares_are_refused() {
    let (s, mut rng) = setup(6);
    let p = reencrypt(&s.row_shares[0], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    let target1 = *s.targets[1].point();
    let tweaks: Vec<Tweak> = vec![
        Box::new(|q| q.proof.e += Scalar::ONE),
        Box::new(|q| q.proof.s_x += Scalar::ONE),
        Box::new(|q| q.proof.s_rho[5] += Scalar::ONE),
        Box::new(|q| q.proof.s_rho.swap(0, 1)),
        Box::new(|q| q.shares[0].a += G),
        Box::new(|q| q.shares.swap(0, 2)),
        // Re-randomizing a share keeps its meaning but not its proof.
        Box::new(move |q| {
            let r = Scalar::from(7u8);
            q.shares[1].a += r * G;
            q.shares[1].b += r * target1;
        }),
        // Scaling A and B (a related-key trick) is refused.
        Box::new(|q| {
            let two = Scalar::from(2u8);
            q.shares[2].a *= two;
            q.shares[2].b *= two;
        }),
    ];
    for (i, f) in tweaks.iter().enumerate() {
        let mut q = p.clone();
        f(&mut q);
        assert_eq!(
            verify_partial(&s.row, &s.cts, &s.targets, &q, &CTX),
            Err(ReencryptError::InvalidProof { member: 1 }),
            "tweak {i}"
        );
    }
}

#[test]
fn identity_points_are_refused() {
    let (s, mut rng) = setup(7);
    // A trivial ciphertext (c1 = 0) is not re-encrypted.
    let mut cts = s.cts.clone();
    cts[2] = Ciphertext {
        c1: RistrettoPoint::default(),
        c2: cts[2].c2,
    };
    assert_eq!(
        reencrypt(&s.row_shares[0], &cts, &s.targets, &CTX, &mut rng).err(),
        Some(ReencryptError::IdentityC1 { index: 2 })
    );
    // A = 0 would publish -x_i c1 in the clear: refused by the verifier...
    let mut p = reencrypt(&s.row_shares[0], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    p.shares[1].a = RistrettoPoint::default();
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &CTX),
        Err(ReencryptError::IdentityShare {
            member: 1,
            index: 1
        })
    );
    assert!(matches!(
        verify_partial(&s.row, &cts, &s.targets, &p, &CTX),
        Err(ReencryptError::IdentityC1 { index: 2 })
    ));
    // ... and by the decoder (point 2 = A_1).
    let b = p.to_bytes();
    assert_eq!(
        ReencryptionPartial::from_bytes(&b),
        Err(DecodeError::IdentityPoint {
            what: WHAT,
            index: 2
        })
    );
    let mut q = reencrypt(&s.row_shares[0], &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    q.shares[0].b = RistrettoPoint::default();
    assert_eq!(
        ReencryptionPartial::from_bytes(&q.to_bytes()),
        Err(DecodeError::IdentityPoint {
            what: WHAT,
            index: 1
        })
    );
}

#[test]
fn non_members_duplicates_and_too_few_are_refused() {
    let (s, mut rng) = setup(8);
    let ps = partials(&s, &mut rng);
    // Not a member of a 5-member committee.
    let mut outsider = ps[0].clone();
    outsider.member = 9;
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &outsider, &CTX),
        Err(ReencryptError::UnknownMember { member: 9 })
    );
    outsider.member = 0;
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &outsider, &CTX),
        Err(ReencryptError::UnknownMember { member: 0 })
    );
    // Member 5 claims to be member 4 (absent from the DKG, still listed).
    let mut impostor = ps[3].clone();
    impostor.member = 4;
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &impostor, &CTX),
        Err(ReencryptError::InvalidProof { member: 4 })
    );
    // A client outside the committee with its own key, claiming index 4.
    let mut rng2 = ChaCha20Rng::seed_from_u64(99);
    let stranger = KeyShare::new(4, Scalar::random(&mut rng2));
    let p = reencrypt(&stranger, &s.cts, &s.targets, &CTX, &mut rng).unwrap();
    assert_eq!(
        verify_partial(&s.row, &s.cts, &s.targets, &p, &CTX),
        Err(ReencryptError::InvalidProof { member: 4 })
    );
    assert_eq!(
        combine(
            &s.row,
            &s.cts,
            &s.targets,
            &[ps[0].clone(), ps[0].clone()],
            &CTX
        )
        .err(),
        Some(ReencryptError::DuplicateMember { member: 1 })
    );
    assert_eq!(
        combine(&s.row, &s.cts, &s.targets, &ps[..2], &CTX).err(),
        Some(ReencryptError::NotEnoughPartials { have: 2, need: 3 })
    );
}

#[test]
fn decoder_rejects_malformed() {
    let (s, mut rng) = setup(9);
    let b = reencrypt(&s.row_shares[0], &s.cts, &s.targets, &CTX, &mut rng)
        .unwrap()
        .to_bytes();
    assert_eq!(b.len(), 9 + 96 * 6 + 64);
    assert!(matches!(
        ReencryptionPartial::from_bytes(&b[..b.len() - 1]),
        Err(DecodeError::WrongLength { .. })
    ));
    assert!(matches!(
        ReencryptionPartial::from_bytes(&b[..6]),
        Err(DecodeError::Truncated { .. })
    ));
    let mut v = b.clone();
    v[0] = 2;
    assert_eq!(
        ReencryptionPartial::from_bytes(&v),
        Err(DecodeError::UnknownVersion { what: WHAT, tag: 2 })
    );
    let mut bad = b.clone();
    bad[9 + 32] |= 1;
    assert!(matches!(
        ReencryptionPartial::from_bytes(&bad),
        Err(DecodeError::NonCanonicalPoint { index: 1, .. })
    ));
    let mut bad = b.clone();
    let off = 9 + 64 * 6 + 32;
    bad[off..off + 32].copy_from_slice(&[0xff; 32]);
    assert!(matches!(
        ReencryptionPartial::from_bytes(&bad),
        Err(DecodeError::NonCanonicalScalar { index: 1, .. })
    ));
    let mut huge = b.clone();
    huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        ReencryptionPartial::from_bytes(&huge),
        Err(DecodeError::CountOutOfRange { .. })
    ));
    // Every single-bit flip is refused by the decoder or the verifier.
    for i in 0..b.len() {
        for bit in [0u8, 7] {
            let mut f = b.clone();
            f[i] ^= 1 << bit;
            if let Ok(p) = ReencryptionPartial::from_bytes(&f) {
                assert!(
                    verify_partial(&s.row, &s.cts, &s.targets, &p, &CTX).is_err(),
                    "flip at byte {i} bit {bit} accepted"
                );
            }
        }
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 24,
            rng_seed: RngSeed::Fixed(0x5eed_4ee1),
            ..ProptestConfig::default()
        })]

        /// Any t of the members that are present re-encrypt any list to any
        /// targets, and each target's secret decrypts its messages; the
        /// encoding round-trips and a decoder accepts only canonical bytes.
        #[test]
        fn any_t_members_reencrypt_correctly(
            c in 2u32..6,
            t_off in 0u32..5,
            msgs in proptest::collection::vec(any::<u64>(), 1..5),
            seed in any::<u64>(),
            flip in any::<(usize, u8)>(),
        ) {
            let t = 1 + t_off % c;
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let present: Vec<u32> = (1..=c).collect();
            let (gk, shares) =
                run_dkg(DkgParams::new(c, t, b"prop").unwrap(), &present, &mut rng);
            let cts: Vec<Ciphertext> = msgs
                .iter()
                .map(|&m| gk.public_key().encrypt(m, &mut rng).unwrap())
                .collect();
            let keys: Vec<Keypair> = (0..msgs.len()).map(|_| Keypair::generate(&mut rng)).collect();
            let targets: Vec<PublicKey> = keys.iter().map(|k| k.public).collect();
            // t members, starting at a seed-dependent offset.
            let start = (seed % c as u64) as usize;
            let chosen: Vec<&KeyShare> =
                (0..t as usize).map(|i| &shares[(start + i) % c as usize]).collect();
            let ps: Vec<ReencryptionPartial> = chosen
                .iter()
                .map(|k| reencrypt(k, &cts, &targets, &CTX, &mut rng).unwrap())
                .collect();
            let out = combine(&gk, &cts, &targets, &ps, &CTX).unwrap();
            for ((ct, kp), m) in out.iter().zip(&keys).zip(&msgs) {
                prop_assert_eq!(kp.secret.decrypt(ct).unwrap(), *m);
            }
            let bytes = ps[0].to_bytes();
            prop_assert_eq!(&ReencryptionPartial::from_bytes(&bytes).unwrap(), &ps[0]);
            let mut f = bytes.clone();
            let i = flip.0 % f.len();
            f[i] ^= flip.1.max(1);
            if let Ok(p) = ReencryptionPartial::from_bytes(&f) {
                prop_assert_eq!(p.to_bytes(), f);
                prop_assert!(verify_partial(&gk, &cts, &targets, &p, &CTX).is_err());
            }
        }
    }
}
