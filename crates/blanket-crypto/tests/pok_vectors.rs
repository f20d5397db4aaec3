//! Checked-in test vectors for the two proof-of-knowledge encodings (issue
//! 9): the DKG dealing with its Schnorr proof of knowledge of `a_0`
//! (`blanket/dkg-pok/v1`, dealing wire version 2) and the client submission
//! with its proof of knowledge of the randomness
//! (`blanket/client-ciphertext-pok/v1`, submission wire version 1), each
//! with negative cases and the error a verifier must return. Regenerate with
//! `BLANKET_UPDATE_VECTORS=1` only on an intended change; the test then
//! re-checks every case from the file itself.

use blanket_crypto::curve25519_dalek::scalar::Scalar;
use blanket_crypto::dkg::{self, Dealer, Dealing, DkgParams};
use blanket_crypto::elgamal::{Ciphertext, Keypair};
use blanket_crypto::submission::{
    encrypt_with_proof, verify_submission, ClientSubmission, SubmissionContext,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/pok_v1.txt");
const DKG_CONTEXT: &[u8] = b"blanket/test-vector run 1, committee 1..3";
const RUN: &[u8] = b"blanket/test-vector run 1";
const TASK: &[u8] = b"histogram";

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

fn ctx() -> SubmissionContext<'static> {
    SubmissionContext {
        run: RUN,
        task: TASK,
    }
}

/// What a verifier says about a dealing's bytes.
fn check_dealing(bytes: &[u8]) -> String {
    match Dealing::from_bytes(bytes) {
        Err(e) => format!("decode: {e:?}"),
        Ok(d) => match dkg::verify_dealing(&params(), &d) {
            Ok(()) => "ok".into(),
            Err(e) => format!("verify: {e:?}"),
        },
    }
}

/// What the relay says about a submission's bytes (public key `pk`).
fn check_submission(pk: &blanket_crypto::PublicKey, bytes: &[u8]) -> String {
    match ClientSubmission::from_bytes(bytes) {
        Err(e) => format!("decode: {e:?}"),
        Ok(s) => match verify_submission(pk, &ctx(), &s) {
            Ok(()) => "ok".into(),
            Err(e) => format!("verify: {e:?}"),
        },
    }
}

fn generate() -> String {
    let mut rng = ChaCha20Rng::seed_from_u64(20_261_130);
    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&v);
        out.push('\n');
    };
    line(
        "# blanket proof-of-knowledge test vectors",
        "ChaCha20Rng::seed_from_u64(20261130)".into(),
    );

    // DKG dealing.
    let p = params();
    let dealer = Dealer::new(p, 2, &mut rng).unwrap();
    let d = dealer.dealing();
    let bytes = d.to_bytes();
    line("dkg.context", hex(DKG_CONTEXT));
    line("dkg.members", p.members.to_string());
    line("dkg.threshold", p.threshold.to_string());
    line("dkg.session", hex(p.session()));
    line("dkg.dealer", d.dealer.to_string());
    for (k, a) in d.commitments().iter().enumerate() {
        line(&format!("dkg.A_{k}"), hex(a.compress().as_bytes()));
    }
    line("dkg.proof.c", hex(d.proof.c.as_bytes()));
    line("dkg.proof.s", hex(d.proof.s.as_bytes()));
    line("dkg.dealing", hex(&bytes));
    let mut neg: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut moved = bytes.clone();
    moved[1..5].copy_from_slice(&3u32.to_le_bytes());
    neg.push(("dkg.neg.other_dealer_index", moved));
    let other = DkgParams::new(3, 2, b"another run").unwrap();
    let d_other = Dealer::new(other, 2, &mut rng).unwrap().dealing();
    neg.push(("dkg.neg.proof_for_another_session", d_other.to_bytes()));
    let mut s1 = d.clone();
    s1.proof.s += Scalar::ONE;
    neg.push(("dkg.neg.response_plus_one", s1.to_bytes()));
    let mut swapped_points = d.commitments().to_vec();
    swapped_points.swap(0, 1);
    let swapped = Dealing::new(d.dealer, swapped_points, d.proof);
    neg.push(("dkg.neg.commitments_swapped", swapped.to_bytes()));
    let mut nc = bytes.clone();
    let off = nc.len() - 32;
    nc[off..].copy_from_slice(&[0xff; 32]);
    neg.push(("dkg.neg.non_canonical_response", nc));
    let mut v1 = bytes.clone();
    v1[0] = 1;
    neg.push(("dkg.neg.version_1", v1));
    neg.push(("dkg.neg.without_proof", bytes[..bytes.len() - 64].to_vec()));

    // Client submission.
    let kp = Keypair::generate(&mut rng);
    let sub = encrypt_with_proof(&kp.public, 1_000_003, 42, &ctx(), &mut rng).unwrap();
    let sb = sub.to_bytes().to_vec();
    line("sub.run", hex(RUN));
    line("sub.task", hex(TASK));
    line("sub.pk", hex(&kp.public.to_bytes()));
    line("sub.client", sub.client.to_string());
    line("sub.m", "1000003".into());
    line("sub.c1", hex(sub.ciphertext.c1.compress().as_bytes()));
    line("sub.c2", hex(sub.ciphertext.c2.compress().as_bytes()));
    line("sub.proof.c", hex(sub.proof.c.as_bytes()));
    line("sub.proof.s", hex(sub.proof.s.as_bytes()));
    line("sub.bytes", hex(&sb));
    let mut other_id = sb.clone();
    other_id[1..5].copy_from_slice(&43u32.to_le_bytes());
    neg.push(("sub.neg.other_client_id", other_id));
    let two = Scalar::from(2u8);
    let doubled = ClientSubmission {
        client: 43,
        ciphertext: Ciphertext {
            c1: two * sub.ciphertext.c1,
            c2: two * sub.ciphertext.c2,
        },
        proof: sub.proof,
    };
    neg.push((
        "sub.neg.doubled_with_victim_proof",
        doubled.to_bytes().to_vec(),
    ));
    let rr = ClientSubmission {
        client: 42,
        ciphertext: sub
            .ciphertext
            .rerandomize_with(&kp.public, &Scalar::from(5u8)),
        proof: sub.proof,
    };
    neg.push((
        "sub.neg.rerandomized_with_victim_proof",
        rr.to_bytes().to_vec(),
    ));
    let other_task = SubmissionContext {
        run: RUN,
        task: b"mean",
    };
    let ot = encrypt_with_proof(&kp.public, 1_000_003, 42, &other_task, &mut rng).unwrap();
    neg.push(("sub.neg.proof_for_another_task", ot.to_bytes().to_vec()));
    let mut idc1 = sb.clone();
    idc1[5..37].copy_from_slice(&[0u8; 32]);
    neg.push(("sub.neg.identity_c1", idc1));
    let mut ncs = sb.clone();
    ncs[69..101].copy_from_slice(&[0xff; 32]);
    neg.push(("sub.neg.non_canonical_challenge", ncs));
    neg.push((
        "sub.neg.bare_ciphertext",
        sub.ciphertext.to_bytes().to_vec(),
    ));
    let mut sv = sb.clone();
    sv[0] = 0;
    neg.push(("sub.neg.version_0", sv));

    for (name, b) in &neg {
        let want = if name.starts_with("dkg") {
            check_dealing(b)
        } else {
            check_submission(&kp.public, b)
        };
        line(name, format!("{} ; {}", hex(b), want));
    }
    out
}

#[test]
fn pok_vectors_match_and_verify() {
    let out = generate();
    if std::env::var_os("BLANKET_UPDATE_VECTORS").is_some() {
        std::fs::write(PATH, &out).unwrap();
    }
    let want = std::fs::read_to_string(PATH)
        .expect("test vector file (BLANKET_UPDATE_VECTORS=1 to create)");
    assert_eq!(
        out, want,
        "proof encodings changed: regenerate only if intended"
    );

    // Re-check every case from the file alone.
    let get = |k: &str| {
        want.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} = ")))
            .unwrap()
            .to_string()
    };
    assert_eq!(check_dealing(&unhex(&get("dkg.dealing"))), "ok");
    let pk = blanket_crypto::PublicKey::from_bytes(&unhex(&get("sub.pk"))).unwrap();
    let sb = unhex(&get("sub.bytes"));
    assert_eq!(check_submission(&pk, &sb), "ok");
    let mut negatives = 0;
    for l in want.lines().filter(|l| l.contains(".neg.")) {
        let (name, rest) = l.split_once(" = ").unwrap();
        let (b, expected) = rest.split_once(" ; ").unwrap();
        let got = if name.starts_with("dkg") {
            check_dealing(&unhex(b))
        } else {
            check_submission(&pk, &unhex(b))
        };
        assert_eq!(got, expected, "{name}");
        assert_ne!(got, "ok", "{name} must be refused");
        negatives += 1;
    }
    assert_eq!(negatives, 15);
}
