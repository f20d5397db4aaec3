//! Property tests over random dropout and cheating schedules at small n:
//! whenever the realized adversary meets the assumptions the run delivers;
//! a delivered output is always correct; every cheater is named and no
//! honest client is; with too many dropouts the run fails with an error,
//! never a wrong output.

use blanket_protocol::driver::{self, assumptions_hold, Fate, SimConfig, ALL_BEHAVIOURS};
use blanket_protocol::wire::Kind;
use blanket_protocol::ProtocolParams;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const N: u32 = 30;

/// Runs `cfg` and checks the properties above; returns the report for further checks.
fn check(cfg: &SimConfig) -> Result<driver::SimReport, TestCaseError> {
    let r = driver::run(cfg, &mut |_| {}).unwrap();
    prop_assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    prop_assert!(r.honest_named.is_empty(), "{:?}", r.honest_named);
    prop_assert!(r.cheaters_missed.is_empty(), "{:?}", r.cheaters_missed);
    if r.delivered {
        prop_assert!(r.correct, "delivered but not correct");
    } else {
        prop_assert!(r.output.is_none() && r.error.is_some());
    }
    if assumptions_hold(cfg) {
        prop_assert!(r.delivered, "assumptions hold but: {:?}", r.error);
    }
    Ok(r)
}

proptest! {
    // A fixed generator seed keeps CI reproducible; change it to explore other schedules
    // (a random seed once found an undetectable bad share: see `unobservable_bad_share`).
    #![proptest_config(ProptestConfig { cases: 12, rng_seed: RngSeed::Fixed(0x5eed_0001), ..ProptestConfig::default() })]

    #[test]
    fn within_the_bounds(seed in any::<u64>(), drop in 0u32..=3, bad in 0u32..=3, mix in 0usize..9, m in 1u32..=2) {
        let params = ProtocolParams::new(N, 0.1, 0.1, 6, 4, m).unwrap();
        let behaviours: Vec<_> = (0..3).map(|i| ALL_BEHAVIOURS[(mix + i * 4) % ALL_BEHAVIOURS.len()]).collect();
        let inputs = (0..N).map(|i| (0..m).map(|j| (i as u64 + j as u64 * 11) % 6).collect()).collect();
        let cfg = SimConfig::random(params, drop, bad, &behaviours, inputs, seed);
        check(&cfg)?;
    }

    #[test]
    fn beyond_the_bounds_never_wrong(seed in any::<u64>(), drop in 4u32..=12) {
        let params = ProtocolParams::new(N, 0.1, 0.1, 6, 4, 1).unwrap();
        let inputs = (0..N).map(|i| vec![i as u64 % 4]).collect();
        let mut cfg = SimConfig::random(params, drop, 2, &ALL_BEHAVIOURS, inputs, seed);
        // Push dropouts onto the committee and the list to break delivery.
        let roles = driver::roles_for(&params, seed);
        for &c in roles.committee.iter().take(drop as usize / 2) {
            cfg.fates[c as usize] = Fate::DropAt(Kind::DkgShares);
        }
        check(&cfg)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, rng_seed: RngSeed::Fixed(0x5eed_0002), ..ProptestConfig::default() })]

    #[test]
    fn alternating_within_the_bounds(seed in any::<u64>(), drop in 0u32..=2, bad in 0u32..=2, mix in 0usize..9) {
        use blanket_protocol::params::Variant;
        let n = 64;
        let params = ProtocolParams::for_variant(Variant::Alternating, n, 0.04, 0.04, 5, 3, 1).unwrap();
        let behaviours: Vec<_> = (0..2).map(|i| ALL_BEHAVIOURS[(mix + i * 5) % ALL_BEHAVIOURS.len()]).collect();
        let inputs = (0..n).map(|i| vec![i as u64 % 9]).collect();
        let cfg = SimConfig::random(params, drop, bad, &behaviours, inputs, seed);
        check(&cfg)?;
    }
}

/// Per-lane key committees (the alternating variant's default in the CLI): random dropout
/// and cheating schedules over every behaviour, at n = 120 (the smallest n at which the
/// lane rule gives at least two committees of each kind at sigma = 6).
fn lane_key_params(n: u32) -> ProtocolParams {
    use blanket_protocol::params::Variant;
    ProtocolParams::for_variant(Variant::Alternating, n, 0.03, 0.03, 6, 3, 1)
        .unwrap()
        .with_lane_keys()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, rng_seed: RngSeed::Fixed(0x5eed_0003), ..ProptestConfig::default() })]

    #[test]
    fn lane_keys_within_the_bounds(seed in any::<u64>(), drop in 0u32..=3, bad in 0u32..=3, mix in 0usize..9) {
        let n = 120;
        let params = lane_key_params(n);
        let behaviours: Vec<_> = (0..3).map(|i| ALL_BEHAVIOURS[(mix + i * 4) % ALL_BEHAVIOURS.len()]).collect();
        let inputs = (0..n).map(|i| vec![i as u64 % 11]).collect();
        let cfg = SimConfig::random(params, drop, bad, &behaviours, inputs, seed);
        check(&cfg)?;
    }

    /// Beyond the bounds: c - t + 1 members of one row committee drop at re-encryption and
    /// as many of one column committee at decryption, more than either can lose: the run
    /// fails with an error, never a wrong or partial output.
    #[test]
    fn lane_keys_beyond_the_bounds_never_wrong(seed in any::<u64>(), drop in 4u32..=20) {
        let n = 120;
        let params = lane_key_params(n);
        let inputs = (0..n).map(|i| vec![i as u64 % 11]).collect();
        let mut cfg = SimConfig::random(params, drop, 2, &ALL_BEHAVIOURS, inputs, seed);
        let roles = driver::roles_for(&params, seed);
        let (kr, _) = params.lane_committees.unwrap();
        let spare = (params.committee - params.threshold + 1) as usize;
        let row = &roles.committees[0];
        let column = &roles.committees[kr as usize];
        for &c in row.iter().take(spare) {
            cfg.fates[c as usize] = Fate::DropAt(Kind::ReencryptRequest);
        }
        for &c in column.iter().take(spare) {
            cfg.fates[c as usize] = Fate::DropAt(Kind::LaneDecryptRequest);
        }
        let r = check(&cfg)?;
        // Fewer than t members of that row committee answer: nothing may be delivered.
        prop_assert!(!r.delivered && r.error.is_some(), "delivered with {spare} of a committee gone");
    }
}
