//! `blanket bench crypto [--json]`: cost of the verifiable shuffle
//! (blanket-crypto), per ciphertext, for lists of 100, 1,000 and 10,000
//! ciphertexts, on one thread (a 1-thread rayon pool) and on all threads.
//!
//! "prove" is the shuffler's whole computation (re-randomize, permute,
//! prove); "verify" is the server's (decode the proof from bytes, verify).
//! Generator derivation is a one-time setup and is reported separately.
//! Each figure is the best of several runs (10 runs at n = 100, 3 at 1,000,
//! 1 at 10,000).
//!
//! The same figures for the Bayer-Groth proof (issue 17) under the keys
//! `shuffle_N_bg`.
//!
//! Also (issue 9): a client's `encrypt_with_proof` and the relay's
//! `verify_submission` in microseconds, and one key-committee member's DKG
//! computation (deal with proof of knowledge, verify all dealings and
//! shares, derive the keys) for a 10-of-20 committee, one thread.

use anyhow::Result;
use blanket_crypto::bench::{
    measure_client, measure_dkg, measure_shuffle, measure_shuffle_kind, ProofSystem, ShuffleBench,
};
use serde_json::{json, Map, Value};

const SIZES: [(usize, usize); 3] = [(100, 10), (1_000, 3), (10_000, 1)];

/// DKG committee measured: 10-of-20 tolerates 9 malicious members and 1
/// dropout under the honest-member assumption.
const DKG_MEMBERS: u32 = 20;
const DKG_THRESHOLD: u32 = 10;

/// The paper's reference figure (seed: 2-3 s of computation per shuffling
/// client for n = 10,000) and the spec's reference implementation figures.
const REFERENCE_PROVE_MS: f64 = 0.75;
const REFERENCE_VERIFY_MS: f64 = 0.67;
const TARGET_MS: f64 = 0.4;

fn row_json(b: &ShuffleBench) -> Value {
    json!({
        "n": b.n,
        "threads": b.threads,
        "prove_ms_per_ciphertext_single_thread": b.prove_ms_single,
        "verify_ms_per_ciphertext_single_thread": b.verify_ms_single,
        "prove_ms_per_ciphertext_all_threads": b.prove_ms_all,
        "verify_ms_per_ciphertext_all_threads": b.verify_ms_all,
        "shuffle_only_ms_per_ciphertext_single_thread": b.shuffle_only_ms_single,
        "decode_ms_per_ciphertext_single_thread": b.decode_ms_single,
        "generators_ms_per_ciphertext_all_threads": b.generators_ms_all,
        "proof_bytes": b.proof_bytes,
        "proof_bytes_per_ciphertext": b.proof_bytes as f64 / b.n as f64,
        "prove_s_total_single_thread": b.prove_ms_single * b.n as f64 / 1e3,
    })
}

/// Run the benchmark and print a table, or JSON with `json`.
pub fn run(json: bool) -> Result<()> {
    let mut rows = Vec::new();
    for (n, reps) in SIZES {
        if !json {
            eprintln!("measuring shuffle of {n} ciphertexts ...");
        }
        rows.push(
            measure_shuffle(n, reps).map_err(|e| anyhow::anyhow!("shuffle bench n = {n}: {e}"))?,
        );
    }
    let mut bg_rows = Vec::new();
    for (n, reps) in SIZES {
        if !json {
            eprintln!("measuring shuffle of {n} ciphertexts (Bayer-Groth) ...");
        }
        bg_rows.push(
            measure_shuffle_kind(ProofSystem::BayerGroth, n, reps)
                .map_err(|e| anyhow::anyhow!("Bayer-Groth shuffle bench n = {n}: {e}"))?,
        );
    }
    if !json {
        eprintln!("measuring client submissions and the DKG ...");
    }
    let client = measure_client(200, 3).map_err(|e| anyhow::anyhow!("client bench: {e}"))?;
    let dkg = measure_dkg(DKG_MEMBERS, DKG_THRESHOLD, 3)
        .map_err(|e| anyhow::anyhow!("DKG bench: {e}"))?;
    if json {
        let mut obj = Map::new();
        for b in &rows {
            obj.insert(format!("shuffle_{}", b.n), row_json(b));
        }
        for b in &bg_rows {
            obj.insert(format!("shuffle_{}_bg", b.n), row_json(b));
        }
        obj.insert(
            "client_encrypt_with_proof_us".into(),
            json!(client.encrypt_with_proof_us),
        );
        obj.insert("client_encode_us".into(), json!(client.encode_us));
        obj.insert(
            "client_verify_submission_us".into(),
            json!(client.verify_submission_us),
        );
        obj.insert("dkg_ms_per_member".into(), json!(dkg.ms_per_member));
        obj.insert(
            "dkg".into(),
            json!({
                "members": dkg.members,
                "threshold": dkg.threshold,
                "deal_ms": dkg.deal_ms,
                "verify_and_derive_ms": dkg.verify_ms,
                "ms_per_member": dkg.ms_per_member,
            }),
        );
        obj.insert(
            "notes".into(),
            json!({
                "prove": "shuffle_and_prove: re-randomize, permute and prove (Terelius-Wikstrom, Haenni et al.)",
                "verify": "ShuffleProof::from_bytes + verify (one batched multi-scalar multiplication)",
                "shuffle_N_bg": "the same figures for the Bayer-Groth proof (shuffle::bayer_groth: shuffle_and_prove, BgProof::from_bytes + verify); its generators are the commitment key H, G_1..G_n (n about sqrt(2N))",
                "target_bg_10000": "proof_bytes <= 50,000; prove <= 0.5 and verify <= 0.3 ms per ciphertext, one thread",
                "generators": "one-time derivation of h_1..h_n, excluded from prove and verify",
                "client_encrypt_with_proof": "encode (constant number of attempts) + ElGamal + Schnorr proof of knowledge of the randomness, one thread",
                "client_verify_submission": "the relay's check of one submission's proof",
                "dkg": "one member, one thread: deal (commitments, proof of knowledge of a_0, c shares) + group_key + key_share (verify every proof and share)",
                "target_ms_per_ciphertext_single_thread": TARGET_MS,
                "reference_rust_prove_ms_per_ciphertext": REFERENCE_PROVE_MS,
                "reference_rust_verify_ms_per_ciphertext": REFERENCE_VERIFY_MS,
            }),
        );
        crate::outln!("{}", serde_json::to_string_pretty(&Value::Object(obj))?);
        return Ok(());
    }
    let threads = rows.first().map(|b| b.threads).unwrap_or(1);
    crate::outln!("Verifiable shuffle (ElGamal over ristretto255, Terelius-Wikstrom proof), ms per ciphertext");
    crate::outln!(
        "{:>7}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>10}",
        "n",
        "prove 1 thr",
        "verify 1 thr",
        format!("prove {threads} thr"),
        format!("verify {threads} thr"),
        "proof bytes",
        "prove total"
    );
    for b in &rows {
        crate::outln!(
            "{:>7}  {:>12.4}  {:>12.4}  {:>12.4}  {:>12.4}  {:>12}  {:>9.2}s",
            b.n,
            b.prove_ms_single,
            b.verify_ms_single,
            b.prove_ms_all,
            b.verify_ms_all,
            b.proof_bytes,
            b.prove_ms_single * b.n as f64 / 1e3
        );
    }
    crate::outln!(
        "prove = re-randomize + permute + prove; verify = decode proof + verify. Target <= {TARGET_MS} ms \
         single-thread at n = 10,000; reference Rust implementation {REFERENCE_PROVE_MS} / {REFERENCE_VERIFY_MS} ms; \
         paper: 2-3 s per shuffling client at n = 10,000."
    );
    crate::outln!("Bayer-Groth proof, ms per ciphertext");
    for b in &bg_rows {
        crate::outln!(
            "{:>7}  {:>12.4}  {:>12.4}  {:>12.4}  {:>12.4}  {:>12}  {:>9.2}s",
            b.n,
            b.prove_ms_single,
            b.verify_ms_single,
            b.prove_ms_all,
            b.verify_ms_all,
            b.proof_bytes,
            b.prove_ms_single * b.n as f64 / 1e3
        );
    }
    if let Some(b) = rows.last() {
        crate::outln!(
            "n = {}: of prove, re-randomize + permute {:.4} ms; of verify, proof decoding {:.4} ms; \
             generator setup {:.4} ms (all threads, one-time).",
            b.n, b.shuffle_only_ms_single, b.decode_ms_single, b.generators_ms_all
        );
    }
    crate::outln!(
        "client: encrypt with proof {:.1} us (of which encoding {:.1} us), relay check {:.1} us; \
         DKG {}-of-{}: {:.2} ms per member (deal {:.2} ms, verify and derive {:.2} ms).",
        client.encrypt_with_proof_us,
        client.encode_us,
        client.verify_submission_us,
        dkg.threshold,
        dkg.members,
        dkg.ms_per_member,
        dkg.deal_ms,
        dkg.verify_ms
    );
    Ok(())
}
