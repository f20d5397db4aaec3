//! Every malicious behaviour, placed where it bites, is detected and named,
//! and the run still delivers the correct multiset.

use blanket_protocol::driver::{self, Behaviour, Fate, SimConfig, SimReport};
use blanket_protocol::relay::{Offence, RelayRefusal};
use blanket_protocol::wire::Kind;
use blanket_protocol::ProtocolParams;

const N: u32 = 40;
const SEED: u64 = 11;

fn params(m: u32) -> ProtocolParams {
    ProtocolParams::new(N, 0.05, 0.05, 8, 4, m).unwrap()
}

fn inputs(m: u32) -> Vec<Vec<u64>> {
    (0..N)
        .map(|i| (0..m).map(|j| (i as u64 * 3 + j as u64) % 7).collect())
        .collect()
}

fn run_with(m: u32, fates: &[(u32, Fate)]) -> SimReport {
    let mut cfg = SimConfig::random(params(m), 0, 0, &[], inputs(m), SEED);
    for &(c, f) in fates {
        cfg.fates[c as usize] = f;
    }
    let r = driver::run(&cfg, &mut |_| {}).unwrap();
    assert!(r.client_errors.is_empty(), "{:?}", r.client_errors);
    assert!(r.honest_named.is_empty(), "{:?}", r.honest_named);
    assert!(r.cheaters_missed.is_empty(), "{:?}", r.cheaters_missed);
    r
}

fn roles() -> blanket_protocol::select::Roles {
    driver::roles_for(&params(1), SEED)
}

/// Some client that is neither shuffler nor committee member.
fn plain() -> u32 {
    let r = roles();
    (0..N)
        .find(|c| !r.committee.contains(c) && !r.shufflers.contains(c))
        .unwrap()
}

fn named(r: &SimReport, c: u32) -> &Offence {
    &r.cheaters
        .iter()
        .find(|x| x.client == c)
        .unwrap_or_else(|| panic!("client {c} not named: {:?}", r.cheaters))
        .offence
}

fn assert_ok(r: &SimReport) {
    assert!(r.delivered, "{:?}", r.error);
    assert!(r.correct);
}

#[test]
fn invalid_shuffle_proof_is_named_and_replaced() {
    let s = roles().shufflers[0];
    let r = run_with(1, &[(s, Fate::Malicious(Behaviour::BadProof))]);
    assert_ok(&r);
    assert!(matches!(named(&r, s), Offence::InvalidShuffle(_)));
    assert!(!r.output.unwrap().shufflers.contains(&s));
}

#[test]
fn replaced_ciphertext_in_shuffle_is_named() {
    let s = roles().shufflers[1];
    let r = run_with(1, &[(s, Fate::Malicious(Behaviour::ReplaceCiphertext))]);
    assert_ok(&r);
    assert!(matches!(named(&r, s), Offence::InvalidShuffle(_)));
}

#[test]
fn duplicated_ciphertext_in_shuffle_is_named() {
    let s = roles().shufflers[0];
    let r = run_with(1, &[(s, Fate::Malicious(Behaviour::DuplicateCiphertext))]);
    assert_ok(&r);
    assert!(matches!(named(&r, s), Offence::InvalidShuffle(_)));
}

#[test]
fn silent_shuffler_is_replaced_and_listed() {
    let s = roles().shufflers[0];
    let r = run_with(1, &[(s, Fate::Malicious(Behaviour::Silent))]);
    assert_ok(&r);
    assert!(r.silent.iter().any(|(c, _)| *c == s));
    let base = run_with(1, &[]);
    assert_eq!(
        r.rounds,
        base.rounds + 1,
        "a replaced shuffler costs one round"
    );
    assert!(
        r.output.unwrap().accepted_clients.contains(&s),
        "it submitted honestly"
    );
}

#[test]
fn garbage_from_shuffler_and_client_is_named() {
    let s = roles().shufflers[0];
    let p = plain();
    let r = run_with(
        1,
        &[
            (s, Fate::Malicious(Behaviour::Garbage)),
            (p, Fate::Malicious(Behaviour::Garbage)),
        ],
    );
    assert_ok(&r);
    assert!(matches!(named(&r, s), Offence::Malformed(_)));
    assert!(matches!(named(&r, p), Offence::Malformed(_)));
    assert!(!r.output.unwrap().accepted_clients.contains(&p));
}

#[test]
fn bad_submission_proof_mauled_and_duplicated_submissions_are_named() {
    let r0 = roles();
    let plain: Vec<u32> = (0..N)
        .filter(|c| !r0.committee.contains(c) && !r0.shufflers.contains(c))
        .take(3)
        .collect();
    let r = run_with(
        1,
        &[
            (plain[0], Fate::Malicious(Behaviour::BadProof)),
            (plain[1], Fate::Malicious(Behaviour::ReplaceCiphertext)),
            (plain[2], Fate::Malicious(Behaviour::DuplicateCiphertext)),
        ],
    );
    assert_ok(&r);
    for &c in &plain {
        assert!(matches!(named(&r, c), Offence::InvalidSubmission(_)), "{c}");
    }
    assert_eq!(r.output.unwrap().accepted_clients.len() as u32, N - 3);
}

#[test]
fn wrong_partial_decryption_is_named() {
    // Decryption asks holders in member order: member 1 is asked first.
    let c = roles().committee[0];
    let r = run_with(1, &[(c, Fate::Malicious(Behaviour::WrongPartial))]);
    assert_ok(&r);
    assert!(matches!(named(&r, c), Offence::WrongPartial(_)));
    assert!(!r.output.unwrap().decryptors.contains(&c));
}

#[test]
fn invalid_dealing_is_named() {
    let c = roles().committee[1];
    let r = run_with(1, &[(c, Fate::Malicious(Behaviour::BadProof))]);
    assert_ok(&r);
    assert!(matches!(named(&r, c), Offence::InvalidDealing(_)));
}

#[test]
fn bad_share_leads_to_complaint_and_disqualification() {
    let c = roles().committee[0];
    let r = run_with(1, &[(c, Fate::Malicious(Behaviour::BadShare))]);
    assert_ok(&r);
    assert_eq!(named(&r, c), &Offence::Disqualified);
    assert!(
        r.rounds > run_with(1, &[]).rounds,
        "the reveal round was run"
    );
}

#[test]
fn equivocation_is_named_in_every_role() {
    let r0 = roles();
    let (d, s, p) = (r0.committee[0], r0.shufflers[0], plain());
    let r = run_with(
        1,
        &[
            (d, Fate::Malicious(Behaviour::Equivocate)),
            (s, Fate::Malicious(Behaviour::Equivocate)),
            (p, Fate::Malicious(Behaviour::Equivocate)),
        ],
    );
    assert_ok(&r);
    for c in [d, s, p] {
        assert_eq!(named(&r, c), &Offence::Equivocation, "{c}");
    }
}

#[test]
fn replayed_and_out_of_round_messages_are_refused() {
    let r0 = roles();
    let (d, s, p) = (r0.committee[0], r0.shufflers[0], plain());
    let r = run_with(
        1,
        &[
            (d, Fate::Malicious(Behaviour::Replay)),
            (s, Fate::Malicious(Behaviour::Replay)),
            (p, Fate::Malicious(Behaviour::Replay)),
        ],
    );
    assert_ok(&r);
    for c in [d, s, p] {
        assert!(r
            .refusals
            .iter()
            .any(|e| matches!(e, RelayRefusal::Replay { from } if *from == c)));
    }
    // Members and shufflers answered earlier rounds: their old replies are out of round.
    for c in [d, s] {
        assert!(r
            .refusals
            .iter()
            .any(|e| matches!(e, RelayRefusal::WrongRound { from, .. } if *from == c)));
    }
    // A replay is refused, not a crime: the honest content counts.
    assert!(r.output.unwrap().accepted_clients.contains(&p));
}

#[test]
fn multi_message_clients_with_cheaters() {
    let r0 = roles();
    let r = run_with(
        3,
        &[
            (
                r0.shufflers[0],
                Fate::Malicious(Behaviour::DuplicateCiphertext),
            ),
            (plain(), Fate::Malicious(Behaviour::DuplicateCiphertext)),
        ],
    );
    assert_ok(&r);
    assert_eq!(r.output.unwrap().messages.len() as u32, 3 * (N - 1));
}

#[test]
fn dropouts_at_every_step_within_the_bounds() {
    let r0 = roles();
    let p = params(1);
    // One committee member before dealing, one after, one before decrypting
    // (if the committee can spare them), a shuffler, a plain client.
    let spare = (p.committee - p.threshold) as usize;
    let mut fates = vec![
        (r0.shufflers[0], Fate::DropAt(Kind::ShuffleRequest)),
        (plain(), Fate::DropAt(Kind::KeyAnnounce)),
    ];
    let kinds = [Kind::DkgStart, Kind::DkgShares, Kind::DecryptRequest];
    for (i, k) in kinds.iter().enumerate().take(spare) {
        fates.push((r0.committee[i], Fate::DropAt(*k)));
    }
    let r = run_with(1, &fates);
    assert_ok(&r);
    assert!(r.cheaters.is_empty());
    assert_eq!(
        r.output.unwrap().accepted_clients.len() as u32,
        N - 1 - spare.min(2) as u32
    );
}

#[test]
fn too_many_committee_dropouts_fail_with_a_clear_error() {
    let r0 = roles();
    let p = params(1);
    let drop = (p.committee - p.threshold + 1) as usize;
    let fates: Vec<(u32, Fate)> = r0.committee[..drop]
        .iter()
        .map(|&c| (c, Fate::DropAt(Kind::DkgStart)))
        .collect();
    let r = run_with(1, &fates);
    assert!(!r.delivered && !r.correct && r.output.is_none());
    let e = r.error.unwrap();
    assert!(e.contains("dealings") && e.contains("dropped out"), "{e}");
}

#[test]
fn too_many_silent_shufflers_fail_with_a_clear_error() {
    let r0 = roles();
    let p = params(1);
    let drop = (p.backups + 1) as usize;
    let fates: Vec<(u32, Fate)> = r0.shufflers[..drop]
        .iter()
        .map(|&c| (c, Fate::DropAt(Kind::ShuffleRequest)))
        .collect();
    let r = run_with(1, &fates);
    assert!(!r.delivered && r.output.is_none());
    assert!(r.error.unwrap().contains("exhausted"));
}

#[test]
fn too_many_decryptor_dropouts_fail_with_a_clear_error() {
    let r0 = roles();
    let p = params(1);
    let drop = (p.committee - p.threshold + 1) as usize;
    let fates: Vec<(u32, Fate)> = r0.committee[..drop]
        .iter()
        .map(|&c| (c, Fate::DropAt(Kind::DecryptRequest)))
        .collect();
    let r = run_with(1, &fates);
    assert!(!r.delivered && r.output.is_none());
    assert!(r.error.unwrap().contains("partial decryptions"));
}
