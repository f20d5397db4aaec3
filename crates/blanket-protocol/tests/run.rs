//! End-to-end runs of the amortized protocol at small n.

use blanket_protocol::driver::{self, Behaviour, Fate, SimConfig};
use blanket_protocol::ProtocolParams;

fn inputs(n: u32, m: u32) -> Vec<Vec<u64>> {
    (0..n)
        .map(|i| (0..m).map(|j| (i as u64 * 7 + j as u64) % 5).collect())
        .collect()
}

#[test]
fn honest_run_delivers_the_input_multiset() {
    let params = ProtocolParams::new(40, 0.05, 0.05, 8, 4, 1).unwrap();
    let cfg = SimConfig::random(params, 0, 0, &[], inputs(40, 1), 1);
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct);
    assert!(r.cheaters.is_empty());
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert_eq!(r.output.as_ref().unwrap().messages.len(), 40);
    assert_eq!(
        r.output.as_ref().unwrap().shufflers.len() as u32,
        params.chain
    );
    println!("{params:?} rounds {}", r.rounds);
}

#[test]
fn alternating_run_delivers_with_cheaters_and_dropouts() {
    use blanket_protocol::params::Variant;
    let n = 120;
    let params = ProtocolParams::for_variant(Variant::Alternating, n, 0.03, 0.03, 6, 3, 1).unwrap();
    assert_eq!(params.lanes, 11);
    let roles = driver::roles_for(&params, 4);
    let mut cfg = SimConfig::random(params, 0, 0, &[], inputs(n, 1), 4);
    // A cheating shuffler in list 0 (row 0, then column 0) and a dropout in list 3.
    cfg.fates[roles.list(0)[0] as usize] = Fate::Malicious(Behaviour::ReplaceCiphertext);
    cfg.fates[roles.list(3)[1] as usize] =
        Fate::DropAt(blanket_protocol::wire::Kind::ShuffleRequest);
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct);
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert_eq!(r.cheaters.len(), 1);
    assert_eq!(r.cheaters[0].client, roles.list(0)[0]);
    // Rows then columns: 11 row lanes, 11 column lanes, k stages each.
    let out = r.output.as_ref().unwrap();
    assert_eq!(out.shufflers.len() as u32, 2 * 11 * params.chain);
    // Each shuffler moves about sqrt(n) ciphertexts, far below the whole list.
    let (_, worst) = r.worst_client();
    let amortized_shuffle = 2 * 64 * n as u64 + 160 * n as u64;
    assert!(worst < amortized_shuffle, "{worst}");
}
