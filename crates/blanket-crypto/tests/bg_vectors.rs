//! Checked-in test vectors for the Bayer-Groth proof of shuffle (issue 17):
//! `bg10.*` (N = 10: two rows of five, Hadamard argument, one row
//! halving) with positive and negative cases, and `bg130.*` (N = 130:
//! eight rows of 17, padded by 6, three row halvings) with a positive and
//! a negative case. Each negative case replaces one field of the statement
//! or the proof and records the result a verifier must give. Regenerate with
//! `BLANKET_UPDATE_VECTORS=1` only on an intended change; the test then
//! re-checks every case from the file alone.

use blanket_crypto::curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT;
use blanket_crypto::curve25519_dalek::scalar::Scalar;
use blanket_crypto::elgamal::{decode_ciphertexts, encode_ciphertexts, Ciphertext, Keypair};
use blanket_crypto::shuffle::bayer_groth::{self as bg, Arrangement, BgProof, CommitmentKey};
use blanket_crypto::PublicKey;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/bayer_groth_v1.txt"
);

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The statement and proof of one case, as bytes.
#[derive(Clone)]
struct Case {
    context: Vec<u8>,
    pk: Vec<u8>,
    input: Vec<u8>,
    output: Vec<u8>,
    proof: Vec<u8>,
}

const FIELDS: [&str; 5] = ["context", "pk", "input", "output", "proof"];

impl Case {
    fn field(&mut self, name: &str) -> &mut Vec<u8> {
        match name {
            "context" => &mut self.context,
            "pk" => &mut self.pk,
            "input" => &mut self.input,
            "output" => &mut self.output,
            "proof" => &mut self.proof,
            _ => panic!("unknown field {name}"),
        }
    }

    /// What a verifier says.
    fn check(&self) -> String {
        let pk = match PublicKey::from_bytes(&self.pk) {
            Ok(pk) => pk,
            Err(e) => return format!("decode pk: {e:?}"),
        };
        let (input, output) = match (
            decode_ciphertexts(&self.input),
            decode_ciphertexts(&self.output),
        ) {
            (Ok(i), Ok(o)) => (i, o),
            (Err(e), _) | (_, Err(e)) => return format!("decode list: {e:?}"),
        };
        let proof = match BgProof::from_bytes(&self.proof) {
            Ok(p) => p,
            Err(e) => return format!("decode proof: {e:?}"),
        };
        let ck = match CommitmentKey::for_len(input.len()) {
            Ok(ck) => ck,
            Err(e) => return format!("setup: {e:?}"),
        };
        match bg::verify(&ck, &pk, &input, &output, &proof, &self.context) {
            Ok(()) => "ok".into(),
            Err(e) => format!("verify: {e:?}"),
        }
    }
}

fn make(n: usize, seed: u64, context: &[u8]) -> (Case, Vec<Ciphertext>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = Keypair::generate(&mut rng);
    let input: Vec<Ciphertext> = (0..n as u64)
        .map(|m| kp.public.encrypt(m * 7 + 1, &mut rng).unwrap())
        .collect();
    let ck = CommitmentKey::for_len(n).unwrap();
    let (output, proof) =
        bg::shuffle_and_prove(&ck, &kp.public, &input, context, &mut rng).unwrap();
    (
        Case {
            context: context.to_vec(),
            pk: kp.public.to_bytes().to_vec(),
            input: encode_ciphertexts(&input),
            output: encode_ciphertexts(&output),
            proof: proof.to_bytes(),
        },
        output,
    )
}

fn generate() -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        out.push_str(k);
        out.push_str(" = ");
        out.push_str(&v);
        out.push('\n');
    };
    line(
        "# blanket Bayer-Groth proof of shuffle test vectors",
        "ChaCha20Rng::seed_from_u64(seed): keypair, encryptions of 7 i + 1, shuffle_and_prove"
            .into(),
    );
    for (tag, n, seed) in [("bg10", 10usize, 20_261_217u64), ("bg130", 130, 20_261_218)] {
        let ctx = format!("blanket/test-vector/{tag}");
        let (base, output) = make(n, seed, ctx.as_bytes());
        let arr = Arrangement::for_len(n).unwrap();
        line(&format!("{tag}.seed"), seed.to_string());
        line(&format!("{tag}.N"), n.to_string());
        line(&format!("{tag}.m"), arr.m.to_string());
        line(&format!("{tag}.n"), arr.n.to_string());
        line(&format!("{tag}.factors"), format!("{:?}", arr.factors));
        for f in FIELDS {
            line(&format!("{tag}.{f}"), hex(base.clone().field(f)));
        }
        line(&format!("{tag}.expect"), base.check());

        let mut neg: Vec<(&str, &str, Vec<u8>)> = Vec::new();
        let p = &base.proof;
        let last = p.len() - 32;
        let mut b = p.clone();
        let s = Scalar::from_canonical_bytes(b[last..].try_into().unwrap()).unwrap() + Scalar::ONE;
        b[last..].copy_from_slice(s.as_bytes());
        neg.push(("last_scalar_plus_one", "proof", b));
        if tag == "bg10" {
            let mut b = p.clone();
            let q = blanket_crypto::curve25519_dalek::ristretto::CompressedRistretto(
                b[4..36].try_into().unwrap(),
            )
            .decompress()
            .unwrap()
                + RISTRETTO_BASEPOINT_POINT;
            b[4..36].copy_from_slice(q.compress().as_bytes());
            neg.push(("first_point_plus_g", "proof", b));
            neg.push((
                "other_context",
                "context",
                b"blanket/test-vector/other".to_vec(),
            ));
            let other = Keypair::generate(&mut ChaCha20Rng::seed_from_u64(1));
            neg.push(("other_pk", "pk", other.public.to_bytes().to_vec()));
            let mut o = output.clone();
            o.swap(0, 1);
            neg.push(("outputs_swapped", "output", encode_ciphertexts(&o)));
            let mut o = output.clone();
            o[3] = Ciphertext::identity();
            neg.push((
                "output_replaced_by_padding",
                "output",
                encode_ciphertexts(&o),
            ));
            let mut o = output.clone();
            o.pop();
            neg.push(("output_dropped", "output", encode_ciphertexts(&o)));
            neg.push(("proof_truncated", "proof", p[..p.len() - 1].to_vec()));
            let mut b = p.clone();
            b[last..].copy_from_slice(&[0xff; 32]);
            neg.push(("non_canonical_scalar", "proof", b));
            let mut b = p.clone();
            b[..4].copy_from_slice(&0u32.to_le_bytes());
            neg.push(("count_zero", "proof", b));
            let mut b = p.clone();
            b[..4].copy_from_slice(&9u32.to_le_bytes());
            neg.push(("count_nine", "proof", b));
        }
        for (name, field, bytes) in neg {
            let mut c = base.clone();
            *c.field(field) = bytes.clone();
            line(
                &format!("{tag}.neg.{name}"),
                format!("{field} {} ; {}", hex(&bytes), c.check()),
            );
        }
    }
    out
}

#[test]
fn bayer_groth_vectors_match_and_verify() {
    let out = generate();
    if std::env::var_os("BLANKET_UPDATE_VECTORS").is_some() {
        std::fs::write(PATH, &out).unwrap();
    }
    let want = std::fs::read_to_string(PATH)
        .expect("test vector file (BLANKET_UPDATE_VECTORS=1 to create)");
    assert_eq!(
        out, want,
        "Bayer-Groth proof changed: regenerate only if intended"
    );

    // Re-check every case from the file alone.
    let get = |k: &str| {
        want.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} = ")))
            .unwrap()
            .to_string()
    };
    let mut negatives = 0;
    for tag in ["bg10", "bg130"] {
        let mut base = Case {
            context: vec![],
            pk: vec![],
            input: vec![],
            output: vec![],
            proof: vec![],
        };
        for f in FIELDS {
            *base.field(f) = unhex(&get(&format!("{tag}.{f}")));
        }
        assert_eq!(base.check(), "ok");
        assert_eq!(get(&format!("{tag}.expect")), "ok");
        let prefix = format!("{tag}.neg.");
        for l in want.lines().filter(|l| l.starts_with(&prefix)) {
            let (name, rest) = l.split_once(" = ").unwrap();
            let (field_hex, expected) = rest.split_once(" ; ").unwrap();
            let (field, h) = field_hex.split_once(' ').unwrap();
            let mut c = base.clone();
            *c.field(field) = unhex(h);
            let got = c.check();
            assert_eq!(got, expected, "{name}");
            assert_ne!(got, "ok", "{name} must be refused");
            negatives += 1;
        }
    }
    assert_eq!(negatives, 12);
}
