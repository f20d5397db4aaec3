//! Runs with either proof of shuffle (`ProtocolParams::proof`, `--proof
//! tw|bg`): both deliver the correct multiset, the byte accounting counts
//! the proof actually sent, a tampered Bayer-Groth proof is named, and a
//! proof of the other system than the run's is refused and its shuffler
//! named with `Offence::WrongProofSystem`.

use blanket_crypto::shuffle::bayer_groth::BgProof;
use blanket_crypto::shuffle::{ProofSystem, ShuffleProof};
use blanket_protocol::driver::{self, Behaviour, Fate, SimConfig, SimReport};
use blanket_protocol::params::Variant;
use blanket_protocol::relay::Offence;
use blanket_protocol::ProtocolParams;

const N: u32 = 40;
const SEED: u64 = 5;
const SYSTEMS: [ProofSystem; 2] = [ProofSystem::TereliusWikstrom, ProofSystem::BayerGroth];

fn params(proof: ProofSystem) -> ProtocolParams {
    ProtocolParams::new(N, 0.05, 0.05, 8, 4, 1)
        .unwrap()
        .with_proof(proof)
}

fn inputs(n: u32) -> Vec<Vec<u64>> {
    (0..n).map(|i| vec![(i as u64 * 5 + 1) % 6]).collect()
}

fn run(params: ProtocolParams, fates: &[(u32, Fate)], seed: u64) -> SimReport {
    let mut cfg = SimConfig::random(params, 0, 0, &[], inputs(params.clients), seed);
    for &(c, f) in fates {
        cfg.fates[c as usize] = f;
    }
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct);
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert!(r.honest_named.is_empty(), "{:?}", r.honest_named);
    assert!(r.cheaters_missed.is_empty(), "{:?}", r.cheaters_missed);
    r
}

/// Encoded `AnyShuffleProof` of `len` ciphertexts: tag byte and proof.
fn tagged_len(proof: ProofSystem, len: usize) -> u64 {
    1 + match proof {
        ProofSystem::TereliusWikstrom => ShuffleProof::encoded_len(len),
        ProofSystem::BayerGroth => BgProof::encoded_len(len).unwrap(),
    } as u64
}

#[test]
fn the_default_is_terelius_wikstrom() {
    let p = ProtocolParams::new(N, 0.05, 0.05, 8, 4, 1).unwrap();
    assert_eq!(p.proof, ProofSystem::TereliusWikstrom);
    // The proof system changes nothing else.
    assert_eq!(p.with_proof(ProofSystem::BayerGroth).chain, p.chain);
}

#[test]
fn honest_runs_deliver_with_either_proof_and_count_its_bytes() {
    let mut worst = Vec::new();
    for proof in SYSTEMS {
        let r = run(params(proof), &[], SEED);
        assert!(r.cheaters.is_empty(), "{proof:?}: {:?}", r.cheaters);
        let out = r.output.as_ref().unwrap();
        assert_eq!(out.messages.len(), N as usize);
        assert_eq!(out.shufflers.len() as u32, r.params.chain);
        // Every accepted shuffler sent exactly one proof over all N messages.
        for &s in &out.shufflers {
            assert_eq!(
                r.proof_bytes[s as usize],
                tagged_len(proof, N as usize),
                "{proof:?}"
            );
        }
        worst.push(r.proof_bytes.iter().copied().max().unwrap());
    }
    // The two systems' proofs differ in size even at N = 40.
    assert_ne!(worst[0], worst[1]);
}

#[test]
fn tampered_bayer_groth_proof_is_named_and_replaced() {
    let p = params(ProofSystem::BayerGroth);
    let s = driver::roles_for(&p, SEED).shufflers[0];
    let r = run(p, &[(s, Fate::Malicious(Behaviour::BadProof))], SEED);
    let c = r.cheaters.iter().find(|c| c.client == s).unwrap();
    assert!(
        matches!(&c.offence, Offence::InvalidShuffle(_)),
        "{:?}",
        c.offence
    );
    assert!(!r.output.unwrap().shufflers.contains(&s));
}

#[test]
fn a_proof_of_the_other_system_is_refused_and_named() {
    for expected in SYSTEMS {
        let got = match expected {
            ProofSystem::TereliusWikstrom => ProofSystem::BayerGroth,
            ProofSystem::BayerGroth => ProofSystem::TereliusWikstrom,
        };
        let p = params(expected);
        let s = driver::roles_for(&p, SEED).shufflers[1];
        let r = run(
            p,
            &[(s, Fate::Malicious(Behaviour::WrongProofSystem))],
            SEED,
        );
        assert_eq!(r.cheaters.len(), 1, "{:?}", r.cheaters);
        assert_eq!(r.cheaters[0].client, s);
        assert_eq!(
            r.cheaters[0].offence,
            Offence::WrongProofSystem { expected, got }
        );
        assert!(!r.output.unwrap().shufflers.contains(&s));
        // Its (refused) proof still counts as bytes it sent.
        assert_eq!(r.proof_bytes[s as usize], tagged_len(got, N as usize));
    }
}

#[test]
fn alternating_run_with_bayer_groth_names_a_cheating_shuffler() {
    let n = 120;
    let p = ProtocolParams::for_variant(Variant::Alternating, n, 0.03, 0.03, 6, 3, 1)
        .unwrap()
        .with_proof(ProofSystem::BayerGroth);
    let roles = driver::roles_for(&p, 4);
    let s = roles.list(0)[0];
    let r = run(p, &[(s, Fate::Malicious(Behaviour::ReplaceCiphertext))], 4);
    assert_eq!(r.cheaters.len(), 1, "{:?}", r.cheaters);
    assert_eq!(r.cheaters[0].client, s);
    assert!(matches!(r.cheaters[0].offence, Offence::InvalidShuffle(_)));
    let out = r.output.as_ref().unwrap();
    assert_eq!(out.shufflers.len() as u32, 2 * p.lanes * p.chain);
}
