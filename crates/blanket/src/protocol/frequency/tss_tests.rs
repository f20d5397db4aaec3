//! Tests of TSS and TSS' (`tss.rs`).

use super::super::test_util::{data_with, variances};
use super::super::Dpds;
use super::*;
use crate::params::ParamError;
use crate::rng::{simulation_rng, SimulationRng};
use crate::sample::stats::{chi_square, chi_square_critical};
use rand_core::RngCore;

fn random_data(rng: &mut SimulationRng, n: usize, items: u32) -> Vec<u32> {
    (0..n)
        .map(|_| (rng.next_u64() % u64::from(items)) as u32)
        .collect()
}

fn tss(
    n: u64,
    items: u32,
    p: f64,
    alpha: f64,
    chi: Chi,
    phi: Option<u64>,
    q: u128,
) -> Result<Tss, FrequencyError> {
    Tss::new(
        n,
        items,
        Sampling::new(p, 1e-9).unwrap(),
        alpha,
        chi,
        phi,
        q,
        ConditionPolicy::ReleaseWithViolations,
    )
}

fn field_of(e: FrequencyError) -> &'static str {
    match e {
        FrequencyError::Param(ParamError::OutOfRange { field, .. }) => field,
        other => panic!("expected a named parameter error, got {other:?}"),
    }
}

/// p = 1 and alpha = 1 (every user reports every item): with the noise (sampling) off, both
/// modes reconstruct the exact counts, for random data, TSS and TSS', uniform and adaptive chi.
#[test]
fn tss_noise_off_reconstructs_exact_counts() {
    let mut rng = simulation_rng(31);
    for trial in 0..24u64 {
        let n = 2 + (rng.next_u64() % 30) as usize;
        let items = 1 + (trial % 5) as u32;
        let data = random_data(&mut rng, n, items);
        let pi = holders(&data, items).unwrap();
        for q in [n as u128 + 1, 1_000_003, 1u128 << 64] {
            for phi in [None, Some(n as u64 - 1)] {
                for chi in [Chi::Uniform, Chi::Adaptive { gamma: 3 }] {
                    let proto = tss(n as u64, items, 1.0, 1.0, chi, phi, q).unwrap();
                    for mode in [TssMode::Literal, TssMode::Fast] {
                        let out = proto.simulate(&data, mode, trial).unwrap();
                        assert_eq!(
                            out.sampled_counts, pi,
                            "n {n} q {q} {phi:?} {chi:?} {mode:?}"
                        );
                        for (e, &h) in out.estimate.iter().zip(&pi) {
                            assert!((e - h as f64 / n as f64).abs() < 1e-12);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn tss_literal_and_fast_identical_for_the_same_seed() {
    let mut rng = simulation_rng(8);
    for seed in 0..30u64 {
        let data = random_data(&mut rng, 30, 6);
        for (chi, phi) in [
            (Chi::Uniform, None),
            (Chi::Adaptive { gamma: 4 }, None),
            (Chi::Uniform, Some(5)),
            (Chi::Adaptive { gamma: 2 }, Some(12)),
        ] {
            let proto = tss(30, 6, 0.6, 0.34, chi, phi, 97).unwrap();
            let lit = proto.simulate(&data, TssMode::Literal, seed).unwrap();
            let fast = proto.simulate(&data, TssMode::Fast, seed).unwrap();
            assert_eq!(lit, fast, "seed {seed} {chi:?} {phi:?}");
        }
    }
}

/// The literal counts equal the closed forms of the transcript exactly, on small instances,
/// and the per-item helper counts follow TSS / TSS'.
#[test]
fn tss_cost_counters_equal_closed_forms() {
    for (n, items, alpha, chi, phi) in [
        (2u64, 1u32, 1.0, Chi::Uniform, None),
        (3, 2, 0.5, Chi::Uniform, Some(2)),
        (5, 3, 0.34, Chi::Adaptive { gamma: 5 }, None),
        (8, 5, 0.4, Chi::Uniform, Some(3)),
        (12, 4, 0.5, Chi::Adaptive { gamma: 2 }, Some(6)),
    ] {
        let data: Vec<u32> = (0..n).map(|i| (i % u64::from(items)) as u32).collect();
        let proto = tss(n, items, 0.7, alpha, chi, phi, 1 << 20).unwrap();
        for seed in 0..5 {
            let out = proto.simulate(&data, TssMode::Literal, seed).unwrap();
            let t = &out.transcript;
            let want = tss_cost::closed_form(
                n,
                u64::from(proto.set_size()),
                matches!(chi, Chi::Adaptive { .. }),
                t,
            );
            assert_eq!(
                out.costs, want,
                "n {n} N {items} {chi:?} {phi:?} seed {seed}"
            );
            assert_eq!(
                t.reports.iter().sum::<u64>(),
                n * u64::from(proto.set_size())
            );
            for (&m, &h) in t.reports.iter().zip(&t.helpers) {
                assert_eq!(h, phi.map_or(m, |f| m.max(f + 1)));
            }
            // The seed's TSS' extra work per item with m_j < phi + 1: phi + 1 - m_j more
            // samples by S1 and additions by S2 (here: all of S1's draws and S2's additions).
            let s1_draws: u64 = t.helpers.iter().sum();
            assert_eq!(out.costs.s1.random_samples, s1_draws);
        }
    }
}

/// The seed's saving of about 1/(p_chi alpha) in a user's communication against DPDS: the
/// expected closed form against DPDS's exact n N, and the mean of the realized counts over 200
/// runs against the expectation (relative standard error below 0.5%; tolerance 3%).
#[test]
fn tss_saving_against_dpds_matches_closed_forms() {
    let (n, items, alpha) = (2000u64, 20u32, 0.1);
    let pi = vec![100u64; 20];
    let data = data_with(&pi);
    let proto = tss(n, items, 1.0, alpha, Chi::Uniform, None, 1 << 32).unwrap();
    let expected = proto.expected_user_elements_sent(&pi).unwrap();
    // By hand: a + (1 - 1/n) N (n alpha (1 - alpha) + n^2 alpha^2) / n + N n alpha / n.
    let (a, nf, nn) = (2.0, n as f64, f64::from(items));
    let hand = a + (1.0 - 1.0 / nf) * nn * (nf * 0.09 + nf * nf * 0.01) / nf + nn * nf * 0.1 / nf;
    assert!(
        (expected - hand).abs() < 1e-9 * hand,
        "{expected} vs {hand}"
    );
    let dpds = Dpds::new(
        n,
        items,
        Sampling::new(0.5, 1e-9).unwrap(),
        1 << 32,
        ConditionPolicy::Refuse,
    )
    .unwrap()
    .closed_form_costs()
    .per_user
    .elements_sent as f64;
    assert_eq!(dpds, nf * nn);
    let saving = dpds / expected;
    let seed_saving = 1.0 / (proto.p_chi() * proto.alpha());
    eprintln!(
        "DPDS {dpds} / TSS {expected:.1} = {saving:.2}; seed 1/(p_chi alpha) = {seed_saving}"
    );
    assert!((saving / seed_saving - 1.0).abs() < 0.02);
    let runs = 200;
    let mean = (0..runs)
        .map(|s| {
            proto
                .simulate(&data, TssMode::Fast, s)
                .unwrap()
                .costs
                .mean_user_elements_sent(n)
        })
        .sum::<f64>()
        / runs as f64;
    eprintln!("mean realized {mean:.2} expected {expected:.2}");
    assert!((mean / expected - 1.0).abs() < 0.03);
    // TSS' raises the cost when phi + 1 exceeds the typical m_j = alpha n = 200.
    let prime = tss(n, items, 1.0, alpha, Chi::Uniform, Some(399), 1 << 32).unwrap();
    let e_prime = prime.expected_user_elements_sent(&pi).unwrap();
    let m = prime.simulate(&data, TssMode::Fast, 1).unwrap();
    assert!(m.transcript.helpers.iter().all(|&h| h == 400));
    let realized = m.costs.mean_user_elements_sent(n);
    assert!(
        (realized / e_prime - 1.0).abs() < 0.03,
        "{realized} vs {e_prime}"
    );
    assert!(e_prime > 1.8 * expected);
}

/// Var[psi_hat_j] = psi_j (1 - p p_chi) / (n p p_chi): n = 1000, 4000 repetitions (relative
/// standard error of a sample variance ~2.2%); tolerance 12%; TSS uniform, TSS' adaptive.
#[test]
fn tss_observed_variance_matches_formula() {
    let pi = [400u64, 300, 200, 100];
    let data = data_with(&pi);
    let s = Sampling::new(0.8, 0.05).unwrap();
    for (chi, phi) in [(Chi::Uniform, None), (Chi::Adaptive { gamma: 3 }, Some(10))] {
        let proto = Tss::new(1000, 4, s, 0.5, chi, phi, 1 << 32, ConditionPolicy::Refuse).unwrap();
        let runs: Vec<Vec<f64>> = (0..4000)
            .map(|seed| proto.simulate(&data, TssMode::Fast, seed).unwrap().estimate)
            .collect();
        let report = proto.simulate(&data, TssMode::Fast, 0).unwrap().report;
        let pp = proto.effective_sampling().p();
        for (j, (o, pr)) in variances(&runs)
            .iter()
            .zip(&report.predicted_variance)
            .enumerate()
        {
            let by_hand = (pi[j] as f64 / 1000.0) * (1.0 - pp) / (1000.0 * pp);
            assert!((pr - by_hand).abs() < 1e-15);
            let ratio = o / pr;
            eprintln!("{chi:?} item {j}: observed {o:.4e} predicted {pr:.4e} ratio {ratio:.4}");
            assert!(
                (ratio - 1.0).abs() < 0.12,
                "{chi:?} item {j}: ratio {ratio:.3}"
            );
        }
    }
}

/// Adaptive chi: Pr[v in A] = gamma a / (gamma a + N - a), and a set of items not containing
/// v is uniform: N = 4, a = 2, gamma = 3, item 0: the six 2-subsets have probabilities
/// proportional to 3, 3, 3, 1, 1, 1. 12000 draws, chi-square at ~1e-6 significance.
#[test]
fn adaptive_chi_set_distribution() {
    let proto = tss(5, 4, 1.0, 0.5, Chi::Adaptive { gamma: 3 }, None, 101).unwrap();
    assert_eq!(proto.p_chi_ratio(), (6, 8));
    let subsets = [[0u32, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
    let mut cells = [0u64; 6];
    let mut rng = simulation_rng(77);
    let mut part = simulation_rng(78);
    let mut scratch = Vec::new();
    let runs = 12_000u64;
    for _ in 0..runs {
        let (_, set, inc) = proto
            .user_round1(
                0,
                &mut part,
                &mut rng,
                &mut scratch,
                &mut RoleCost::default(),
            )
            .unwrap();
        assert_eq!(inc, set.contains(&0));
        let k = subsets.iter().position(|s| s[..] == set[..]).unwrap();
        cells[k] += 1;
    }
    let expected: Vec<f64> = [3.0, 3.0, 3.0, 1.0, 1.0, 1.0]
        .iter()
        .map(|w| w / 12.0 * runs as f64)
        .collect();
    let chi = chi_square(&cells, &expected);
    assert!(
        chi < chi_square_critical(5),
        "chi-square {chi:.1}: {cells:?}"
    );
}

#[test]
fn tss_rejects_bad_parameters_and_data() {
    let s = Sampling::new(0.5, 0.2).unwrap();
    let mk = |n, alpha, chi, phi, q| Tss::new(n, 3, s, alpha, chi, phi, q, ConditionPolicy::Refuse);
    assert_eq!(
        field_of(mk(10, 0.0, Chi::Uniform, None, 11).unwrap_err()),
        "alpha"
    );
    assert_eq!(
        field_of(mk(10, 1.5, Chi::Uniform, None, 11).unwrap_err()),
        "alpha"
    );
    assert_eq!(
        field_of(mk(10, 0.5, Chi::Adaptive { gamma: 0 }, None, 11).unwrap_err()),
        "gamma"
    );
    assert_eq!(
        field_of(mk(10, 0.5, Chi::Uniform, Some(10), 11).unwrap_err()),
        "phi"
    );
    assert_eq!(
        field_of(mk(10, 0.5, Chi::Uniform, Some(0), 11).unwrap_err()),
        "phi"
    );
    assert!(mk(10, 0.5, Chi::Uniform, Some(9), 11).is_ok());
    assert_eq!(
        field_of(mk(0, 0.5, Chi::Uniform, None, 11).unwrap_err()),
        "n"
    );
    assert_eq!(
        mk(10, 0.5, Chi::Uniform, None, 10).unwrap_err(),
        FrequencyError::FieldTooSmall { q: 10, n: 10 }
    );
    assert!(matches!(
        mk(10, 0.5, Chi::Uniform, None, 1).unwrap_err(),
        FrequencyError::Field(_)
    ));
    assert!(Tss::new(
        10,
        0,
        s,
        0.5,
        Chi::Uniform,
        None,
        11,
        ConditionPolicy::Refuse
    )
    .is_err());
    let proto = mk(10, 0.5, Chi::Uniform, None, 11).unwrap();
    let mut bad = data_with(&[4, 3, 3]);
    bad[6] = 3;
    assert_eq!(
        proto.simulate(&bad, TssMode::Fast, 0).unwrap_err(),
        FrequencyError::ItemOutOfDomain {
            user: 6,
            item: 3,
            items: 3
        }
    );
    let e = proto
        .simulate(&data_with(&[9, 1, 0]), TssMode::Fast, 0)
        .unwrap_err();
    assert!(matches!(
        e,
        FrequencyError::ConditionViolated { count: 2, .. }
    ));
    let released = Tss::new(
        10,
        3,
        s,
        0.5,
        Chi::Uniform,
        None,
        11,
        ConditionPolicy::ReleaseWithViolations,
    )
    .unwrap()
    .simulate(&data_with(&[9, 1, 0]), TssMode::Literal, 0)
    .unwrap();
    let notes = &released.report.notes;
    assert!(notes[0].contains("NOT WORST-CASE DP"));
    assert!(notes[1].contains("0 vs 1 holders"));
    assert!(notes.iter().any(|n| n.starts_with("VIOLATION: 2 of 3")));
    assert!(notes.iter().any(|n| n.contains("p' = p p_chi")));
    // The literal mode refuses to materialize too many shares.
    let big = tss(3000, 1, 0.5, 1.0, Chi::Uniform, None, 1 << 20).unwrap();
    assert!(matches!(
        big.simulate(&vec![0; 3000], TssMode::Literal, 0)
            .unwrap_err(),
        FrequencyError::LiteralTooLarge { .. }
    ));
}

/// Realistic scale (ignored by default; `cargo test -p blanket --lib tss_scale -- --ignored
/// --nocapture`): TSS fast mode at n = 10^6, N = 10^3, alpha = 0.01, 20 repetitions; the
/// observed variance of the estimates over items with equal holders against the formula.
#[test]
#[ignore]
fn tss_scale_n_1e6() {
    let (n, items) = (1_000_000u64, 1000u32);
    let data: Vec<u32> = (0..n as u32).map(|i| i % items).collect();
    let s = Sampling::new(1.0, 1e-4).unwrap();
    let proto = Tss::new(
        n,
        items,
        s,
        0.01,
        Chi::Uniform,
        Some(20),
        1 << 32,
        ConditionPolicy::Refuse,
    )
    .unwrap();
    let t = std::time::Instant::now();
    let out = proto.simulate(&data, TssMode::Fast, 1).unwrap();
    eprintln!("tss fast n=1e6 N=1e3 a=10: {:?}", t.elapsed());
    // All items have 1000 holders: the N estimates are i.i.d. with the predicted variance.
    let mean = out.estimate.iter().sum::<f64>() / f64::from(items);
    let var = out.estimate.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / f64::from(items - 1);
    let pred = out.report.predicted_variance[0];
    eprintln!(
        "observed {var:.4e} predicted {pred:.4e} ratio {:.3}",
        var / pred
    );
    // 1000 samples: relative standard error ~4.5%; tolerance 20%.
    assert!((var / pred - 1.0).abs() < 0.2);
    eprintln!(
        "mean elements sent per user {:.1} (DPDS: {})",
        out.costs.mean_user_elements_sent(n),
        n * u64::from(items)
    );
}
