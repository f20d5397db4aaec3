//! A malicious relay against honest clients in memory (issue 25, item 4):
//! the honest protocol runs up to the point of each attack, then the test
//! plays the relay and sends forged requests; the honest clients refuse
//! them, and nothing is decrypted or revealed (`docs/protocol.md`, "What a
//! malicious relay can and cannot do").

use std::collections::BTreeMap;

use blanket_crypto::submission::ClientSubmission;
use blanket_crypto::{Ciphertext, Keypair};
use blanket_protocol::client::{Client, ClientError};
use blanket_protocol::evidence::{self, Attestation, ChainLink, LaneChain, SignedComplaint};
use blanket_protocol::params::Variant;
use blanket_protocol::relay::{Outgoing, Phase, Relay, Step};
use blanket_protocol::wire::{Envelope, Message, RunId, COLUMN_LANE, RELAY_ID};
use blanket_protocol::ProtocolParams;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const RUN: RunId = [0x25; 16];

/// The honest relay and clients, and every envelope the clients sent.
struct Net {
    relay: Relay,
    clients: Vec<Client<ChaCha20Rng>>,
    /// Replies by kind of message, per client (the relay's view).
    sent: Vec<(u32, Message)>,
    now: u64,
}

impl Net {
    fn new(params: ProtocolParams) -> Self {
        let n = params.clients;
        let mut rng = ChaCha20Rng::seed_from_u64(25);
        let keys: Vec<Keypair> = (0..n).map(|_| Keypair::generate(&mut rng)).collect();
        let directory: Vec<_> = keys.iter().map(|k| k.public).collect();
        let shared: std::sync::Arc<[_]> = directory.clone().into();
        let clients = keys
            .into_iter()
            .enumerate()
            .map(|(i, k)| {
                let mut r = ChaCha20Rng::seed_from_u64(2500);
                r.set_stream(i as u64);
                Client::new(i as u32, RUN, k, vec![i as u64 % 5], r)
                    .with_params(&params)
                    .with_directory(shared.clone())
            })
            .collect();
        let relay = Relay::new(params, RUN, [7; 32], directory, 1000).unwrap();
        Net {
            relay,
            clients,
            sent: Vec::new(),
            now: 0,
        }
    }

    /// Deliver the relay's messages, hand the replies back to it.
    fn deliver(&mut self, out: &[Outgoing]) {
        for o in out {
            let reply = self.clients[o.to as usize]
                .handle(&o.bytes)
                .unwrap_or_else(|e| panic!("honest client {} refused: {e}", o.to));
            if let Some(r) = reply {
                self.sent
                    .push((o.to, Envelope::from_bytes(&r).unwrap().message));
                self.relay.receive(o.to, &r).unwrap();
            }
        }
    }

    /// Run the honest protocol until `stop` holds after a round closed;
    /// the messages the relay would send next (not delivered).
    fn run_until(&mut self, stop: impl Fn(&Relay) -> bool) -> Vec<Outgoing> {
        let mut out = self.relay.start(self.now);
        loop {
            self.deliver(&out);
            self.now += 1;
            match self.relay.advance(self.now).unwrap() {
                Step::Send(o) => out = o,
                Step::Done(_) => panic!("the run ended before the attack"),
            }
            if stop(&self.relay) {
                return out;
            }
        }
    }

    /// Every accepted submission, by client.
    fn submissions(&self) -> BTreeMap<u32, Vec<ClientSubmission>> {
        self.sent
            .iter()
            .filter_map(|(c, m)| match m {
                Message::Submit { submissions } => Some((*c, submissions.clone())),
                _ => None,
            })
            .collect()
    }
}

/// A forged request from the relay to `to`, in round `round`.
fn forge(to: u32, round: u32, message: Message) -> Vec<u8> {
    Envelope {
        run: RUN,
        round,
        sender: RELAY_ID,
        recipient: to,
        message,
    }
    .to_bytes()
}

fn lane_params() -> ProtocolParams {
    ProtocolParams::for_variant(Variant::Alternating, 120, 0.03, 0.03, 6, 3, 1)
        .unwrap()
        .with_lane_keys()
        .unwrap()
}

/// Attack (d): per-lane committees, a `LaneDecryptRequest` for the row
/// lanes carrying the submissions' `c1` (the rows as they came in). Every
/// row-committee member refuses: rows are re-encrypted, never decrypted.
#[test]
fn lane_decrypt_request_for_row_lanes_with_submissions_is_refused() {
    let p = lane_params();
    let (kr, _) = p.lane_committees.unwrap();
    let mut net = Net::new(p);
    net.run_until(|r| r.phase() == Phase::Shuffle);
    let c1: Vec<_> = net
        .submissions()
        .values()
        .flatten()
        .map(|s| s.ciphertext.c1)
        .collect();
    assert_eq!(c1.len(), 120);
    let round = net.relay.round() + 1;
    let mut refused = 0;
    for q in 0..kr as usize {
        let members = net.relay.roles().committees[q].clone();
        // Row q is served by row committee q.
        let row = q as u32;
        for m in members {
            let bytes = forge(
                m,
                round,
                Message::LaneDecryptRequest {
                    lanes: vec![(row, c1.clone())],
                    chains: vec![],
                },
            );
            let r = net.clients[m as usize].handle(&bytes);
            assert!(
                matches!(r, Err(ClientError::LaneKeys(_))),
                "member {m} of row committee {q}: {r:?}"
            );
            refused += 1;
        }
    }
    assert!(refused > 0);
    // And (a)'s check per lane: a row re-encrypted, or a column decrypted,
    // only with the signed chain that ends in its list.
    let (kr, kc) = (
        kr as usize,
        net.relay.params().lane_committees.unwrap().1 as usize,
    );
    for q in 0..kr + kc {
        let lane = if q < kr {
            q as u32
        } else {
            COLUMN_LANE | (q - kr) as u32
        };
        for m in net.relay.roles().committees[q].clone() {
            let lanes = vec![(lane, c1[..10].to_vec())];
            let msg = if q < kr {
                Message::ReencryptRequest {
                    lanes,
                    chains: vec![],
                }
            } else {
                Message::LaneDecryptRequest {
                    lanes,
                    chains: vec![],
                }
            };
            let r = net.clients[m as usize].handle(&forge(m, round, msg));
            assert!(
                matches!(r, Err(ClientError::Evidence(_))),
                "member {m} of committee {q}: {r:?}"
            );
        }
    }
}

fn params() -> ProtocolParams {
    ProtocolParams::new(40, 0.05, 0.05, 8, 4, 1).unwrap()
}

/// Attack (b): a `DkgRevealRequest` naming members that never complained.
/// Made every honest dealer reveal its shares (with `t` of them the relay
/// has the dealer's secret, with all dealers the joint key). Now a dealer
/// reveals only for complaints signed by their complainers, and never for
/// `t` or more.
#[test]
fn reveal_request_without_signed_complaints_reveals_nothing() {
    let p = params();
    let t = p.threshold as usize;
    let mut net = Net::new(p);
    // The honest DKG is over (no complaint): the relay holds every
    // member's signed, empty complaint list.
    net.run_until(|r| r.phase() == Phase::Submit);
    let committee = net.relay.roles().committee.clone();
    assert!(committee.len() >= t && t >= 2, "{committee:?} t = {t}");
    let session = blanket_crypto::dkg::DkgParams::new(
        committee.len() as u32,
        t as u32,
        &blanket_protocol::context::dkg(&RUN, &committee),
    )
    .unwrap()
    .session()
    .to_owned();
    let signed_empty: BTreeMap<u32, SignedComplaint> = net
        .sent
        .iter()
        .filter_map(|(c, m)| match m {
            Message::DkgComplaints { dealers, signature } => {
                let i = committee.iter().position(|x| x == c)? as u32 + 1;
                Some((
                    i,
                    SignedComplaint {
                        complainer: i,
                        dealers: dealers.clone(),
                        signature: *signature,
                    },
                ))
            }
            _ => None,
        })
        .collect();
    assert_eq!(signed_empty.len(), committee.len());
    let round = net.relay.round() + 1;
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let relay_keys = Keypair::generate(&mut rng);
    for (pos, &dealer) in committee.iter().enumerate() {
        let me = pos as u32 + 1;
        let others: Vec<u32> = (1..=committee.len() as u32).filter(|&i| i != me).collect();
        let sign = |i: u32, keys: &Keypair, rng: &mut ChaCha20Rng| SignedComplaint {
            complainer: i,
            dealers: vec![me],
            signature: evidence::sign_complaint(&session, i, &[me], keys, rng),
        };
        let member_keys = |i: u32| net.clients[committee[i as usize - 1] as usize].keys();
        let attacks: Vec<(&str, Vec<SignedComplaint>)> = vec![
            // Every other member, the relay signing for them.
            (
                "all members, signed by the relay",
                others
                    .iter()
                    .map(|&i| sign(i, &relay_keys, &mut rng))
                    .collect(),
            ),
            // Fewer than t, signed by the relay.
            (
                "t - 1 members, signed by the relay",
                others[..t - 1]
                    .iter()
                    .map(|&i| sign(i, &relay_keys, &mut rng))
                    .collect(),
            ),
            // The members' genuine signatures on their empty complaints.
            (
                "genuine empty complaints",
                others[..t - 1]
                    .iter()
                    .map(|i| signed_empty[i].clone())
                    .collect(),
            ),
            // t genuine complaints (a relay that dropped t members' shares
            // so that they complained): still never t.
            (
                "t genuine complaints",
                others[..t]
                    .iter()
                    .map(|&i| sign(i, member_keys(i), &mut rng))
                    .collect(),
            ),
        ];
        for (what, complaints) in attacks {
            let bytes = forge(dealer, round, Message::DkgRevealRequest { complaints });
            let r = net.clients[dealer as usize].handle(&bytes);
            assert!(
                matches!(r, Err(ClientError::BadComplaint(_))),
                "dealer {dealer} ({what}): {r:?}"
            );
        }
    }
    // Fewer than t genuine complaints are answered (the protocol's own
    // reveal), with exactly the complainers' shares.
    let dealer = committee[0];
    let complaints: Vec<SignedComplaint> = (2..=t as u32)
        .map(|i| SignedComplaint {
            complainer: i,
            dealers: vec![1],
            signature: evidence::sign_complaint(
                &session,
                i,
                &[1],
                net.clients[committee[i as usize - 1] as usize].keys(),
                &mut rng,
            ),
        })
        .collect();
    let bytes = forge(dealer, round, Message::DkgRevealRequest { complaints });
    let reply = net.clients[dealer as usize]
        .handle(&bytes)
        .unwrap()
        .unwrap();
    match Envelope::from_bytes(&reply).unwrap().message {
        Message::DkgReveal { shares } => {
            let to: Vec<u32> = shares.iter().map(|s| s.recipient).collect();
            assert_eq!(to, (2..=t as u32).collect::<Vec<_>>());
        }
        m => panic!("{m:?}"),
    }
}

/// Attack (c): a `KeyAnnounce` with the relay's own key and an empty QUAL
/// (members skipped their check when QUAL was empty or named an unknown
/// dealer; other clients had nothing to check). Now every client needs at
/// least `t` attestations by registered clients that sum to the key, and
/// members refuse an empty QUAL, an unknown dealer, or a QUAL without
/// themselves. No client encrypts under the relay's key.
#[test]
fn key_announce_with_the_relays_key_is_refused_by_every_client() {
    let p = params();
    let t = p.threshold as usize;
    let n = p.clients;
    let mut net = Net::new(p);
    let honest = net.run_until(|r| r.phase() == Phase::Submit);
    let committee = net.relay.roles().committee.clone();
    // The honest announcement (to a member: with QUAL).
    let member_msg = honest.iter().find(|o| o.to == committee[0]).unwrap();
    let Message::KeyAnnounce {
        public_key,
        qualified,
        evidence: genuine,
        ..
    } = Envelope::from_bytes(&member_msg.bytes).unwrap().message
    else {
        panic!("not a key announcement");
    };
    assert_eq!(genuine.len(), committee.len());
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let relay_keys = Keypair::generate(&mut rng);
    let own = relay_keys.public;
    // Sybil attestations: the relay's keys under real client ids, for a key
    // whose secret it knows (the sum of its own a0's).
    let sybils: Vec<(Keypair, blanket_crypto::dkg::Dealer)> = (0..t)
        .map(|_| {
            let dp = blanket_crypto::dkg::DkgParams::new(1, 1, b"sybil").unwrap();
            (
                Keypair::generate(&mut rng),
                blanket_crypto::dkg::Dealer::new(dp, 1, &mut rng).unwrap(),
            )
        })
        .collect();
    let sybil_evidence: Vec<Attestation> = sybils
        .iter()
        .zip(&committee)
        .map(|((k, d), &c)| Attestation {
            client: c,
            key: k.public,
            a0: d.dealing().commitments()[0],
            proof: d.attest(&evidence::attest_context(&RUN, c), k, &mut rng),
        })
        .collect();
    let sybil_key =
        blanket_crypto::PublicKey::from_point(sybil_evidence.iter().map(|a| a.a0).sum()).unwrap();
    let unknown: Vec<u32> = qualified.iter().copied().chain([99]).collect();
    let announce = |key, qualified: Vec<u32>, evidence: Vec<Attestation>| Message::KeyAnnounce {
        public_key: key,
        messages: 1,
        qualified,
        revealed: vec![],
        evidence,
    };
    let attacks = [
        ("own key, empty QUAL", announce(own, vec![], vec![])),
        (
            "own key, genuine QUAL and attestations",
            announce(own, qualified.clone(), genuine.clone()),
        ),
        (
            "sybil attestations",
            announce(sybil_key, vec![], sybil_evidence.clone()),
        ),
        (
            "an unknown dealer in QUAL",
            announce(public_key, unknown, genuine.clone()),
        ),
    ];
    let round = net.relay.round() + 1;
    for (what, msg) in attacks {
        for c in 0..n {
            let is_member = committee.contains(&c);
            if what == "an unknown dealer in QUAL" && !is_member {
                continue;
            }
            let bytes = forge(c, round, msg.clone());
            let r = net.clients[c as usize].handle(&bytes);
            assert!(
                matches!(r, Err(ClientError::Evidence(_) | ClientError::BadQual(_))),
                "client {c} (member: {is_member}), {what}: {r:?}"
            );
        }
    }
    // A QUAL that leaves a member out: that member refuses (an honest
    // dealer is never disqualified), even with a key that checks out.
    let left_out = committee[0];
    let rest: Vec<Attestation> = genuine
        .iter()
        .filter(|a| a.client != left_out)
        .cloned()
        .collect();
    let key = blanket_crypto::PublicKey::from_point(rest.iter().map(|a| a.a0).sum()).unwrap();
    let qual: Vec<u32> = qualified.iter().copied().filter(|&i| i != 1).collect();
    let bytes = forge(left_out, round, announce(key, qual, rest));
    let r = net.clients[left_out as usize].handle(&bytes);
    assert!(matches!(r, Err(ClientError::BadQual(_))), "{r:?}");
    // The honest announcement is still accepted by everyone.
    for o in &honest {
        net.clients[o.to as usize]
            .handle(&o.bytes)
            .unwrap()
            .unwrap();
    }
}

/// Attack (a): a `DecryptRequest` carrying the submissions' `c1` (not the
/// output of the shuffle chain) made the key holders decrypt every
/// submission, linked to its sender. Now a key holder decrypts only `c1`s
/// that a signed chain of exactly `k` shuffles by distinct registered
/// shufflers ends in.
#[test]
fn decrypt_request_with_the_submissions_is_refused() {
    let p = params();
    let k = p.chain as usize;
    let mut net = Net::new(p);
    let honest = net.run_until(|r| r.phase() == Phase::Decrypt);
    let subs: Vec<_> = net
        .submissions()
        .values()
        .flatten()
        .map(|s| s.ciphertext)
        .collect();
    let c1: Vec<_> = subs.iter().map(|c| c.c1).collect();
    let Message::DecryptRequest {
        c1: final_c1,
        chains: genuine,
    } = Envelope::from_bytes(&honest[0].bytes).unwrap().message
    else {
        panic!("not a decryption request");
    };
    assert_eq!((genuine.len(), genuine[0].links.len()), (1, k));
    // The list after stage k - 2 (a real, signed, but unfinished chain).
    let shuffles: Vec<&Vec<Ciphertext>> = net
        .sent
        .iter()
        .filter_map(|(_, m)| match m {
            Message::ShuffleResponse { list, .. } => Some(list),
            _ => None,
        })
        .collect();
    assert_eq!(shuffles.len(), k);
    let early = shuffles[k - 2];
    let early_c1: Vec<_> = early.iter().map(|c| c.c1).collect();
    let mut short = genuine[0].clone();
    short.links.pop();
    short.digests.pop();
    short.c2_digest = evidence::c2_digest(early);
    // A chain the relay signs itself under registered shufflers' ids, from
    // the submissions to the submissions.
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let d = evidence::list_digest(&subs);
    let shufflers = net.relay.roles().shufflers.clone();
    let forged = LaneChain {
        lane: 0,
        len: c1.len() as u32,
        c2_digest: evidence::c2_digest(&subs),
        digests: vec![d; k + 1],
        links: (0..k)
            .map(|s| {
                let keys = Keypair::generate(&mut rng);
                ChainLink {
                    shuffler: shufflers[s],
                    key: keys.public,
                    signature: evidence::sign_shuffle(
                        &RUN,
                        0,
                        s as u32,
                        shufflers[s],
                        &d,
                        &d,
                        &keys,
                        &mut rng,
                    ),
                }
            })
            .collect(),
    };
    let attacks = [
        ("no chain", c1.clone(), vec![]),
        ("the genuine chain", c1.clone(), genuine.clone()),
        ("a chain signed by the relay", c1.clone(), vec![forged]),
        ("a chain one shuffle short", early_c1, vec![short]),
    ];
    let round = net.relay.round() + 1;
    let holders: Vec<u32> = honest.iter().map(|o| o.to).collect();
    assert!(!holders.is_empty());
    for (what, c1, chains) in attacks {
        for &h in &holders {
            let msg = Message::DecryptRequest {
                c1: c1.clone(),
                chains: chains.clone(),
            };
            let r = net.clients[h as usize].handle(&forge(h, round, msg));
            assert!(
                matches!(r, Err(ClientError::Evidence(_))),
                "key holder {h}, {what}: {r:?}"
            );
        }
    }
    // The genuine request is answered.
    assert_eq!(final_c1.len(), c1.len());
    for o in &honest {
        net.clients[o.to as usize]
            .handle(&o.bytes)
            .unwrap()
            .unwrap();
    }
}

/// With the directory, a `DkgStart` that swaps a member's key for the
/// relay's (to sit in the committee as that member) or lowers the
/// threshold is refused before any dealing is made.
#[test]
fn dkg_start_with_a_substituted_key_or_threshold_is_refused() {
    let p = params();
    let mut net = Net::new(p);
    let honest = net.relay.start(0);
    let Message::DkgStart { threshold, members } =
        Envelope::from_bytes(&honest[0].bytes).unwrap().message
    else {
        panic!("not a DKG start");
    };
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let mut swapped = members.clone();
    swapped[1].1 = Keypair::generate(&mut rng).public;
    let to = members[0].0;
    for (what, msg) in [
        (
            "a member's key swapped",
            Message::DkgStart {
                threshold,
                members: swapped,
            },
        ),
        (
            "threshold 1",
            Message::DkgStart {
                threshold: 1,
                members: members.clone(),
            },
        ),
    ] {
        let r = net.clients[to as usize].handle(&forge(to, 1, msg));
        assert!(
            matches!(r, Err(ClientError::BadCommittee(_))),
            "{what}: {r:?}"
        );
    }
    net.clients[to as usize]
        .handle(&honest[0].bytes)
        .unwrap()
        .unwrap();
}

/// What the evidence does not stop (`docs/protocol.md`, "What a malicious
/// relay can and cannot do"): the relay chooses the input of the chain. It
/// asks the k honest shufflers to shuffle one victim's submission among
/// ciphertexts of its own, and the key holders decrypt the signed result:
/// the victim's value is learned (not linked by the shuffle, but alone
/// among the relay's known values). Blanket cannot detect this without a
/// broadcast of the accepted submissions; a relay can equally drop every
/// other client as "silent". The test pins the limit so that the docs stay
/// true.
#[test]
fn relay_can_still_isolate_one_submission_n_minus_one() {
    let p = params();
    let (k, t) = (p.chain as usize, p.threshold as usize);
    let mut net = Net::new(p);
    let announce = net.run_until(|r| r.phase() == Phase::Shuffle);
    drop(announce);
    let pk = *net.relay.public_key().unwrap();
    let subs = net.submissions();
    let (&victim, v) = subs.iter().next().unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let mut list: Vec<Ciphertext> = (0..5)
        .map(|m| pk.encrypt(100 + m, &mut rng).unwrap())
        .collect();
    list.push(v[0].ciphertext);
    let shufflers: Vec<u32> = net.relay.roles().shufflers[..k].to_vec();
    let mut round = net.relay.round() + 1;
    let mut digests = vec![evidence::list_digest(&list)];
    let mut links = Vec::new();
    for (s, &c) in shufflers.iter().enumerate() {
        let msg = Message::ShuffleRequest {
            lane: 0,
            stage: s as u32,
            list: list.clone(),
        };
        let reply = net.clients[c as usize]
            .handle(&forge(c, round, msg))
            .unwrap()
            .unwrap();
        let Message::ShuffleResponse {
            signature,
            list: out,
            ..
        } = Envelope::from_bytes(&reply).unwrap().message
        else {
            panic!("not a shuffle response");
        };
        list = out;
        digests.push(evidence::list_digest(&list));
        links.push(ChainLink {
            shuffler: c,
            key: net.clients[c as usize].public_key(),
            signature,
        });
    }
    round += 1;
    let chain = LaneChain {
        lane: 0,
        len: list.len() as u32,
        c2_digest: evidence::c2_digest(&list),
        digests,
        links,
    };
    let c1: Vec<_> = list.iter().map(|c| c.c1).collect();
    let holders: Vec<u32> = net.relay.roles().committee[..t].to_vec();
    let mut answered = 0;
    for h in holders {
        let msg = Message::DecryptRequest {
            c1: c1.clone(),
            chains: vec![chain.clone()],
        };
        let r = net.clients[h as usize].handle(&forge(h, round, msg));
        answered += usize::from(matches!(r, Ok(Some(_))));
    }
    // Every holder answers: t valid partials, enough to decrypt the list,
    // in which the one value outside 100..105 is the victim's (client
    // `victim`).
    assert_eq!(answered, t, "victim {victim}");
}

/// Issue 25, item 8, through the client: a client restored from an RNG
/// snapshot (same keys, same RNG state) that submits another message does
/// not reuse the encryption randomness (else `c1` repeats and the relay
/// reads `M1 - M2` from the two `c2`s).
#[test]
fn restored_client_rng_does_not_repeat_the_submission_randomness() {
    let p = params();
    let mut net = Net::new(p);
    let announce = net.run_until(|r| r.phase() == Phase::Submit);
    let committee = net.relay.roles().committee.clone();
    let o = announce
        .iter()
        .find(|o| !committee.contains(&o.to))
        .unwrap();
    let keys = net.clients[o.to as usize].keys().clone();
    let dir: std::sync::Arc<[_]> = (0..p.clients)
        .map(|c| net.clients[c as usize].public_key())
        .collect::<Vec<_>>()
        .into();
    let snapshot = ChaCha20Rng::seed_from_u64(4242);
    let submit = |m: u64| {
        let mut c = Client::new(o.to, RUN, keys.clone(), vec![m], snapshot.clone())
            .with_params(&p)
            .with_directory(dir.clone());
        let reply = c.handle(&o.bytes).unwrap().unwrap();
        match Envelope::from_bytes(&reply).unwrap().message {
            Message::Submit { submissions } => submissions[0].ciphertext,
            m => panic!("{m:?}"),
        }
    };
    let (a, b) = (submit(1), submit(2));
    assert_ne!(a.c1, b.c1);
}
