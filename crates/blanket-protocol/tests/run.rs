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
    assert_eq!(r.output.as_ref().unwrap().shufflers.len() as u32, params.chain);
    println!("{params:?} rounds {}", r.rounds);
}
