//! Checked-in test vectors for threshold re-encryption
//! (`blanket/reencrypt/v1`, [`ReencryptionPartial`] wire version 1): a
//! 2-of-3 row committee (its dealings, so the group key is rebuilt from the
//! file), two ciphertexts re-encrypted to two target keys, the partials of
//! members 1 and 2, their combination, and negative cases with the error a
//! verifier must return. Regenerate with `BLANKET_UPDATE_VECTORS=1` only on
//! an intended change; the test then re-checks every case from the file
//! itself.

use blanket_crypto::curve25519_dalek::scalar::Scalar;
use blanket_crypto::dkg::{self, Dealer, Dealing, DkgParams, SecretShare};
use blanket_crypto::elgamal::{decode_ciphertexts, encode_ciphertexts, Ciphertext, Keypair};
use blanket_crypto::reencrypt::{self, ReencryptContext, ReencryptionPartial};
use blanket_crypto::threshold::GroupKey;
use blanket_crypto::PublicKey;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/reencrypt_v1.txt"
);
const DKG_CONTEXT: &[u8] = b"blanket/test-vector run 1, row committee 0";
const RUN: &[u8] = b"blanket/test-vector run 1";
const LANE: u32 = 0;
const NEGATIVES: usize = 10;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn params() -> DkgParams {
    DkgParams::new(3, 2, DKG_CONTEXT).unwrap()
}

fn ctx() -> ReencryptContext<'static> {
    ReencryptContext {
        run: RUN,
        lane: LANE,
    }
}

/// What the relay says about a partial's bytes.
fn check(gk: &GroupKey, cts: &[Ciphertext], targets: &[PublicKey], bytes: &[u8]) -> String {
    match ReencryptionPartial::from_bytes(bytes) {
        Err(e) => format!("decode: {e:?}"),
        Ok(p) => match reencrypt::verify_partial(gk, cts, targets, &p, &ctx()) {
            Ok(()) => "ok".into(),
            Err(e) => format!("verify: {e:?}"),
        },
    }
}

fn keys_bytes(targets: &[PublicKey]) -> Vec<u8> {
    targets.iter().flat_map(|k| k.to_bytes()).collect()
}

fn keys_from(bytes: &[u8]) -> Vec<PublicKey> {
    bytes
        .chunks(32)
        .map(|c| PublicKey::from_bytes(c).unwrap())
        .collect()
}

fn generate() -> String {
    let mut rng = ChaCha20Rng::seed_from_u64(20_261_201);
    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&v);
        out.push('\n');
    };
    line(
        "# blanket threshold re-encryption test vectors",
        "ChaCha20Rng::seed_from_u64(20261201)".into(),
    );
    let p = params();
    let dealers: Vec<Dealer> = (1..=3)
        .map(|i| Dealer::new(p, i, &mut rng).unwrap())
        .collect();
    let dealings: Vec<Dealing> = dealers.iter().map(Dealer::dealing).collect();
    let gk = dkg::group_key(&p, &dealings).unwrap();
    let shares: Vec<_> = (1..=3u32)
        .map(|i| {
            let mine: Vec<SecretShare> = dealers.iter().map(|d| d.share_for(i).unwrap()).collect();
            dkg::key_share(&p, i, &dealings, &mine).unwrap()
        })
        .collect();
    line("dkg.context", hex(DKG_CONTEXT));
    line("dkg.members", "3".into());
    line("dkg.threshold", "2".into());
    for d in &dealings {
        line(&format!("dkg.dealing_{}", d.dealer), hex(&d.to_bytes()));
    }
    line("row.pk", hex(&gk.public_key().to_bytes()));
    let msgs = [1_000_003u64, 42];
    let cts: Vec<Ciphertext> = msgs
        .iter()
        .map(|&m| gk.public_key().encrypt(m, &mut rng).unwrap())
        .collect();
    let cols: Vec<Keypair> = (0..2).map(|_| Keypair::generate(&mut rng)).collect();
    let targets: Vec<PublicKey> = cols.iter().map(|k| k.public).collect();
    line("run", hex(RUN));
    line("lane", LANE.to_string());
    line("messages", format!("{} {}", msgs[0], msgs[1]));
    line("ciphertexts", hex(&encode_ciphertexts(&cts)));
    line("targets", hex(&keys_bytes(&targets)));
    let parts: Vec<ReencryptionPartial> = shares[..2]
        .iter()
        .map(|s| reencrypt::reencrypt(s, &cts, &targets, &ctx(), &mut rng).unwrap())
        .collect();
    line("partial_1", hex(&parts[0].to_bytes()));
    line("partial_2", hex(&parts[1].to_bytes()));
    let combined = reencrypt::combine(&gk, &cts, &targets, &parts, &ctx()).unwrap();
    for (k, c) in combined.iter().enumerate() {
        assert_eq!(cols[k].secret.decrypt(c).unwrap(), msgs[k]);
    }
    line("combined", hex(&encode_ciphertexts(&combined)));

    let b = parts[0].to_bytes();
    let mut neg: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut other_member = b.clone();
    other_member[1..5].copy_from_slice(&2u32.to_le_bytes());
    neg.push(("neg.claims_member_2", other_member));
    let mut outsider = b.clone();
    outsider[1..5].copy_from_slice(&4u32.to_le_bytes());
    neg.push(("neg.non_member_4", outsider));
    let other_lane = ReencryptContext { run: RUN, lane: 1 };
    let ol = reencrypt::reencrypt(&shares[0], &cts, &targets, &other_lane, &mut rng).unwrap();
    neg.push(("neg.made_for_lane_1", ol.to_bytes()));
    let swapped_targets = [targets[1], targets[0]];
    let st = reencrypt::reencrypt(&shares[0], &cts, &swapped_targets, &ctx(), &mut rng).unwrap();
    neg.push(("neg.targets_swapped", st.to_bytes()));
    let mut s1 = parts[0].clone();
    s1.proof.s_x += Scalar::ONE;
    neg.push(("neg.s_x_plus_one", s1.to_bytes()));
    let mut sw = parts[0].clone();
    sw.shares.swap(0, 1);
    neg.push(("neg.shares_swapped", sw.to_bytes()));
    let mut ida = b.clone();
    ida[9..41].copy_from_slice(&[0u8; 32]);
    neg.push(("neg.identity_a", ida));
    let mut nc = b.clone();
    let off = 9 + 64 * 2 + 32;
    nc[off..off + 32].copy_from_slice(&[0xff; 32]);
    neg.push(("neg.non_canonical_s_x", nc));
    let mut v2 = b.clone();
    v2[0] = 2;
    neg.push(("neg.version_2", v2));
    neg.push(("neg.truncated", b[..b.len() - 32].to_vec()));
    assert_eq!(neg.len(), NEGATIVES);
    for (name, bytes) in &neg {
        line(
            name,
            format!("{} ; {}", hex(bytes), check(&gk, &cts, &targets, bytes)),
        );
    }
    out
}

#[test]
fn reencrypt_vectors_match_and_verify() {
    let out = generate();
    if std::env::var_os("BLANKET_UPDATE_VECTORS").is_some() {
        std::fs::write(PATH, &out).unwrap();
    }
    let want = std::fs::read_to_string(PATH)
        .expect("test vector file (BLANKET_UPDATE_VECTORS=1 to create)");
    assert_eq!(
        out, want,
        "re-encryption encoding changed: regenerate only if intended"
    );

    // Re-check every case from the file alone.
    let get = |k: &str| {
        want.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} = ")))
            .unwrap()
            .to_string()
    };
    let dealings: Vec<Dealing> = (1..=3)
        .map(|i| Dealing::from_bytes(&unhex(&get(&format!("dkg.dealing_{i}")))).unwrap())
        .collect();
    let gk = dkg::group_key(&params(), &dealings).unwrap();
    assert_eq!(hex(&gk.public_key().to_bytes()), get("row.pk"));
    let cts = decode_ciphertexts(&unhex(&get("ciphertexts"))).unwrap();
    let targets = keys_from(&unhex(&get("targets")));
    let p1 = unhex(&get("partial_1"));
    let p2 = unhex(&get("partial_2"));
    assert_eq!(check(&gk, &cts, &targets, &p1), "ok");
    assert_eq!(check(&gk, &cts, &targets, &p2), "ok");
    let parts = [
        ReencryptionPartial::from_bytes(&p1).unwrap(),
        ReencryptionPartial::from_bytes(&p2).unwrap(),
    ];
    let combined = reencrypt::combine(&gk, &cts, &targets, &parts, &ctx()).unwrap();
    assert_eq!(hex(&encode_ciphertexts(&combined)), get("combined"));
    let mut negatives = 0;
    for l in want.lines().filter(|l| l.starts_with("neg.")) {
        let (name, rest) = l.split_once(" = ").unwrap();
        let (b, expected) = rest.split_once(" ; ").unwrap();
        let got = check(&gk, &cts, &targets, &unhex(b));
        assert_eq!(got, expected, "{name}");
        assert_ne!(got, "ok", "{name} must be refused");
        negatives += 1;
    }
    assert_eq!(negatives, NEGATIVES);
}
