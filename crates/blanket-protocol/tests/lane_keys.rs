//! Per-lane key committees in the alternating variant, end to end in
//! memory (`docs/protocol.md`, "Per-lane key committees and threshold
//! re-encryption"): K DKGs in parallel, per-row keys, dummies in the cells
//! of absent clients, re-encryption from rows to columns (answers verified,
//! cheaters named), per-column decryption.

use blanket_protocol::driver::{self, Behaviour, Fate, SimConfig};
use blanket_protocol::params::Variant;
use blanket_protocol::relay::Offence;
use blanket_protocol::wire::Kind;
use blanket_protocol::ProtocolParams;

fn inputs(n: u32) -> Vec<Vec<u64>> {
    (0..n).map(|i| vec![(i as u64 * 7) % 11]).collect()
}

fn params(n: u32) -> ProtocolParams {
    ProtocolParams::for_variant(Variant::Alternating, n, 0.03, 0.03, 6, 3, 1)
        .unwrap()
        .with_lane_keys()
        .unwrap()
}

#[test]
fn lane_keys_need_the_alternating_variant() {
    let p = ProtocolParams::new(120, 0.03, 0.03, 6, 3, 1).unwrap();
    assert!(p.with_lane_keys().is_err());
    assert_eq!(p.lane_committees, None);
}

#[test]
fn honest_run_with_lane_committees_delivers() {
    let n = 120;
    let p = params(n);
    let (kr, kc) = p.lane_committees.unwrap();
    assert!(kr >= 1 && kc >= 1);
    let cfg = SimConfig::random(p, 0, 0, &[], inputs(n), 3);
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct);
    assert!(r.cheaters.is_empty(), "{:?}", r.cheaters);
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert_eq!(r.output.as_ref().unwrap().messages.len(), n as usize);
    assert_eq!(r.dummies, 0);
    assert_eq!(r.roles.committees.len() as u32, kr + kc);
    println!("{p:?} rounds {}", r.rounds);
}

#[test]
fn dropouts_and_cheaters_in_the_new_roles_are_named_and_the_output_is_correct() {
    let n = 120;
    let p = params(n);
    let (kr, _) = p.lane_committees.unwrap();
    let (c, t) = (p.committee as usize, p.threshold as usize);
    assert!(c - t >= 2, "c = {c}, t = {t}: no room for two bad members");
    let roles = driver::roles_for(&p, 5);
    let row0 = &roles.committees[0];
    let col0 = &roles.committees[kr as usize];
    let mut cfg = SimConfig::random(p, 0, 0, &[], inputs(n), 5);
    // Row committee 0: a wrong re-encryption (named at the re-encryption)
    // and a tampered proof (its first tampered message is its dealing:
    // named in the DKG), so that the relay must ask other members.
    cfg.fates[row0[0] as usize] = Fate::Malicious(Behaviour::WrongPartial);
    cfg.fates[row0[1] as usize] = Fate::Malicious(Behaviour::BadProof);
    // Column committee 0: a wrong partial decryption and a dropout at the
    // decryption.
    cfg.fates[col0[0] as usize] = Fate::Malicious(Behaviour::WrongPartial);
    cfg.fates[col0[1] as usize] = Fate::DropAt(Kind::LaneDecryptRequest);
    // A row member of another committee drops out at the re-encryption.
    if let Some(q) = roles.committees.get(1).filter(|_| kr > 1) {
        cfg.fates[q[0] as usize] = Fate::DropAt(Kind::ReencryptRequest);
    }
    // Two clients never submit (members of other committees: at this n
    // every client has a role): their cells become public dummies.
    let plain: Vec<u32> = (2..roles.committees.len())
        .filter(|&q| q != kr as usize)
        .take(2)
        .map(|q| roles.committees[q][2])
        .collect();
    assert_eq!(plain.len(), 2, "{} committees", roles.committees.len());
    for &x in &plain {
        cfg.fates[x as usize] = Fate::DropAt(Kind::KeyAnnounce);
    }
    // A cheating shuffler in list 0 (row 0, then column 0).
    cfg.fates[roles.list(0)[0] as usize] = Fate::Malicious(Behaviour::ReplaceCiphertext);
    assert!(driver::assumptions_hold(&cfg));
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct, "{:?}", r.output);
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert!(r.cheaters_missed.is_empty(), "{:?}", r.cheaters_missed);
    assert!(r.honest_named.is_empty(), "{:?}", r.honest_named);
    let named = |x: u32| {
        r.cheaters
            .iter()
            .find(|ch| ch.client == x)
            .map(|ch| ch.offence.clone())
    };
    assert!(matches!(
        named(row0[0]),
        Some(Offence::WrongReencryption(_))
    ));
    assert!(matches!(named(row0[1]), Some(Offence::InvalidDealing(_))));
    assert!(matches!(named(col0[0]), Some(Offence::WrongPartial(_))));
    assert!(matches!(
        named(roles.list(0)[0]),
        Some(Offence::InvalidShuffle(_))
    ));
    assert_eq!(r.cheaters.len(), 4, "{:?}", r.cheaters);
    let out = r.output.as_ref().unwrap();
    // The two plain dropouts and the dealer named in the DKG (it gets no
    // key announcement) submit nothing; everybody else is in the output.
    let absent: Vec<u32> = (0..n)
        .filter(|x| !out.accepted_clients.contains(x))
        .collect();
    let mut want = vec![plain[0], plain[1], row0[1]];
    want.sort_unstable();
    assert_eq!(absent, want);
    assert_eq!(out.messages.len(), n as usize - 3);
    assert_eq!(r.dummies, 3);
}

#[test]
fn random_schedules_with_lane_committees() {
    // Random dropouts (at every step of every role) and every malicious
    // behaviour, over a few seeds: whenever the assumptions hold the run
    // delivers the right multiset and names every cheater; otherwise it
    // fails with an error, never a wrong output.
    let n = 120;
    let p = params(n);
    for seed in 0..3u64 {
        let cfg = SimConfig::random(p, 3, 3, &driver::ALL_BEHAVIOURS, inputs(n), 100 + seed);
        let r = driver::run(&cfg, &mut |_| {}).unwrap();
        assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
        assert!(r.honest_named.is_empty(), "{seed}: {:?}", r.honest_named);
        if driver::assumptions_hold(&cfg) {
            assert!(r.delivered, "{seed}: {:?}", r.error);
            assert!(r.correct, "{seed}");
            assert!(r.cheaters_missed.is_empty(), "{:?}", r.cheaters_missed);
        } else {
            assert!(!r.delivered || r.correct, "{seed}");
        }
    }
}

#[test]
fn a_replaying_shuffler_pays_for_its_own_replays() {
    // A malicious `Replay` shuffler at the head of list 0 shuffles row 0 and
    // column 0, re-sending every reply: it is the worst client (five proofs'
    // worth of bytes), the relay asks it once per lane and never makes an
    // honest client pay for it; the worst honest client is reported apart,
    // and the rounds per step add up to the rounds.
    let n = 120;
    let p = params(n);
    let roles = driver::roles_for(&p, 9);
    let mut cfg = SimConfig::random(p, 0, 0, &[], inputs(n), 9);
    let replayer = roles.list(0)[0];
    cfg.fates[replayer as usize] = Fate::Malicious(Behaviour::Replay);
    let honest_run =
        driver::run(&SimConfig::random(p, 0, 0, &[], inputs(n), 9), &mut |_| {}).unwrap();
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.delivered && r.correct, "{:?}", r.error);
    assert!(r.honest_named.is_empty(), "{:?}", r.honest_named);
    let (worst, _) = r.worst_client();
    assert_eq!(worst, replayer);
    assert!(!r.is_honest(worst));
    // Two lanes, each answered twice plus the previous reply: 5 proofs.
    let one = honest_run.proof_bytes[replayer as usize] / 2;
    assert_eq!(r.proof_bytes[replayer as usize], 5 * one);
    let (h, hb) = r.worst_honest_client().unwrap();
    assert!(r.is_honest(h) && hb <= r.bytes_of(worst));
    // Nobody honest pays more than in the run without the replayer.
    for c in (0..n).filter(|&c| c != replayer) {
        assert_eq!(
            r.bytes_of(c),
            honest_run.bytes_of(c),
            "client {c} ({})",
            r.fates[c as usize]
        );
    }
    for (_, rc) in &r.by_role {
        assert!(rc.bytes_worst_honest <= rc.bytes_worst && rc.honest_parties <= rc.parties);
    }
    let steps: u32 = r.rounds_by_step.iter().map(|(_, k)| k).sum();
    assert_eq!(steps, r.rounds, "{:?}", r.rounds_by_step);
    let names: Vec<&str> = r.rounds_by_step.iter().map(|(s, _)| *s).collect();
    for s in [
        "dkg_deal",
        "submit",
        "row_shuffle",
        "reencrypt",
        "column_shuffle",
        "decrypt",
    ] {
        assert!(names.contains(&s), "{names:?}");
    }
}
