//! The relay's part of per-lane key committees (`docs/protocol.md`,
//! "Per-lane key committees and threshold re-encryption"): the placement
//! over client message slots, the key announcement with per-row keys, the
//! submissions checked under their rows' keys, public dummies in the cells
//! of absent or refused slots, the re-encryption round after the row
//! chains (each answer verified, cheaters named, any `t` valid answers
//! combined) and one threshold decryption per column.
//!
//! Row `r` is served by row committee `r mod K_r`, column `j` by column
//! committee `K_r + (j mod K_c)` (committees as in
//! [`crate::lane_keys::LaneCommittees`] and [`crate::select::roles`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use blanket::shuffle::alternating::GridLayout;
use blanket_crypto::elgamal::G;
use blanket_crypto::encoding;
use blanket_crypto::reencrypt::{self, ReencryptContext, ReencryptionPartial};
use blanket_crypto::submission::{verify_submission, ClientSubmission, SubmissionContext};
use blanket_crypto::threshold::{GroupKey, PartialDecryption};
use blanket_crypto::{Ciphertext, PublicKey};
use curve25519_dalek::ristretto::RistrettoPoint;
use rayon::prelude::*;
use sha2::Sha512;

use super::{Offence, Outgoing, Phase, Relay, RelayError, RunOutput, Step};
use crate::context;
use crate::evidence::LaneChain;
use crate::params::ProtocolParams;
use crate::select;
use crate::wire::{Kind, Message, RunId, COLUMN_LANE};

const DUMMY_DOMAIN: &[u8] = b"blanket/protocol/v1/dummy";

/// The public dummy plaintext D: a hash-to-point of a domain string. Its
/// encoding has nonzero bytes 11..32 except with probability about
/// 2^-168, so it lies outside the message space (checked in the tests).
pub fn dummy_point() -> RistrettoPoint {
    RistrettoPoint::hash_from_bytes::<Sha512>(DUMMY_DOMAIN)
}

/// The public dummy of a cell of row key `pk`: `(G, D + pk)`, an
/// encryption of D with randomness 1 (anyone can check it).
pub fn dummy(pk: &PublicKey) -> Ciphertext {
    Ciphertext {
        c1: G,
        c2: dummy_point() + pk.point(),
    }
}

/// Answers collected from one committee in a re-encryption or decryption
/// round.
struct Collect<T> {
    asked: BTreeSet<u32>,
    /// Member index to its per-lane answers, in the order of its lanes.
    valid: BTreeMap<u32, Vec<T>>,
}

impl<T> Default for Collect<T> {
    fn default() -> Self {
        Collect {
            asked: BTreeSet::new(),
            valid: BTreeMap::new(),
        }
    }
}

pub(super) struct LaneState {
    kr: usize,
    kc: usize,
    grid: GridLayout,
    /// Slot `i m + s` (message `s` of client `i`) to its row-major cell.
    slots: Vec<usize>,
    row_keys: Vec<PublicKey>,
    col_keys: Vec<PublicKey>,
    dummies: usize,
    reencrypted: bool,
    reenc: Vec<Collect<ReencryptionPartial>>,
    dec: Vec<Collect<PartialDecryption>>,
}

impl LaneState {
    pub(super) fn new(params: &ProtocolParams, run: &RunId, seed: &[u8; 32]) -> Self {
        let (kr, kc) = params.lane_committees.unwrap_or((1, 1));
        let n = params.clients as usize * params.messages_per_client as usize;
        LaneState {
            kr: kr as usize,
            kc: kc as usize,
            grid: GridLayout::new(n),
            slots: select::placement(run, seed, n),
            row_keys: Vec::new(),
            col_keys: Vec::new(),
            dummies: 0,
            reencrypted: false,
            reenc: (0..kr).map(|_| Collect::default()).collect(),
            dec: (0..kc).map(|_| Collect::default()).collect(),
        }
    }

    /// Whether the re-encryption round is over.
    pub(super) fn reencrypted(&self) -> bool {
        self.reencrypted
    }

    /// Cells inserted as dummies.
    pub(super) fn dummies(&self) -> usize {
        self.dummies
    }

    /// The committee (index into the relay's keygens) serving `lane`.
    fn committee_of(&self, lane: u32) -> usize {
        if lane & COLUMN_LANE != 0 {
            self.kr + (lane & !COLUMN_LANE) as usize % self.kc
        } else {
            lane as usize % self.kr
        }
    }

    /// The lanes committee `q` serves, in order.
    fn served(&self, q: usize) -> Vec<u32> {
        if q < self.kr {
            (0..self.grid.height())
                .filter(|r| r % self.kr == q)
                .map(|r| r as u32)
                .collect()
        } else {
            (0..self.grid.width())
                .filter(|j| j % self.kc == q - self.kr)
                .map(|j| COLUMN_LANE | j as u32)
                .collect()
        }
    }

    /// The key of `lane` (once announced).
    pub(super) fn key(&self, lane: u32) -> Option<PublicKey> {
        if lane & COLUMN_LANE != 0 {
            self.col_keys.get((lane & !COLUMN_LANE) as usize).copied()
        } else {
            self.row_keys.get(lane as usize).copied()
        }
    }

    /// Positions (row-major cells) of `lane`.
    fn positions(&self, lane: u32) -> Vec<usize> {
        let w = self.grid.width();
        if lane & COLUMN_LANE != 0 {
            let j = (lane & !COLUMN_LANE) as usize;
            (j..self.grid.len()).step_by(w).collect()
        } else {
            let r = lane as usize;
            (r * w..r * w + self.grid.row_len(r)).collect()
        }
    }

    /// The re-encryption targets of row `lane`: position `k` goes to
    /// column `k`.
    fn targets(&self, lane: u32) -> Vec<PublicKey> {
        let len = self.grid.row_len(lane as usize);
        self.col_keys[..len].to_vec()
    }
}

/// A member's answer checked: sender, committee, its partials or why not.
type Verdict<T> = (u32, usize, Result<Vec<T>, String>);

/// Which committee round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Round {
    Reencrypt,
    Decrypt,
}

impl Relay {
    /// With per-lane key committees: the cells filled with public dummies
    /// (slots of absent or refused clients); 0 otherwise.
    pub fn dummies(&self) -> usize {
        self.lane.as_ref().map_or(0, LaneState::dummies)
    }

    fn lanes(&self) -> Result<&LaneState, RelayError> {
        self.lane.as_ref().ok_or(RelayError::Ended)
    }

    /// The key a shuffle of `lane` is checked under.
    pub(super) fn lane_pk(&self, lane: u32) -> Option<PublicKey> {
        match &self.lane {
            Some(l) => l.key(lane),
            None => self.public_key().copied(),
        }
    }

    /// The key announcement with per-row keys (after the DKGs).
    pub(super) fn announce_lane_keys(&mut self, now: u64) -> Result<Step, RelayError> {
        let mut keys = Vec::with_capacity(self.keygens.len());
        for kg in &self.keygens {
            keys.push(*kg.group.as_ref().ok_or(RelayError::Ended)?.public_key());
        }
        let quals: Vec<Vec<u32>> = self.keygens.iter().map(|kg| kg.qualified()).collect();
        let evidence: Vec<Vec<crate::evidence::Attestation>> = (0..self.keygens.len())
            .map(|q| self.key_evidence(q))
            .collect();
        let ls = self.lane.as_mut().ok_or(RelayError::Ended)?;
        let (h, w) = (ls.grid.height(), ls.grid.width());
        ls.row_keys = (0..h).map(|r| keys[r % ls.kr]).collect();
        ls.col_keys = (0..w).map(|j| keys[ls.kr + j % ls.kc]).collect();
        let ls = self.lanes()?;
        let m = self.params.messages_per_client as usize;
        let list_len = self.roles.list_len.max(1);
        let on_list: HashMap<u32, usize> = self
            .roles
            .shufflers
            .iter()
            .enumerate()
            .map(|(p, &c)| (c, p / list_len))
            .collect();
        let mut out = Vec::with_capacity(self.params.clients as usize);
        for client in 0..self.params.clients {
            if self.gone.contains(&client) {
                continue;
            }
            let base = client as usize * m;
            let slot_keys: Vec<PublicKey> = (0..m)
                .map(|s| ls.row_keys[ls.slots[base + s] / w])
                .collect();
            let slot_evidence: Vec<Vec<crate::evidence::Attestation>> = (0..m)
                .map(|s| evidence[ls.committee_of((ls.slots[base + s] / w) as u32)].clone())
                .collect();
            let mut lane_keys: Vec<(u32, PublicKey)> = Vec::new();
            if let Some(&j) = on_list.get(&client) {
                if j < h {
                    lane_keys.push((j as u32, ls.row_keys[j]));
                }
                if j < w {
                    lane_keys.push((COLUMN_LANE | j as u32, ls.col_keys[j]));
                }
            }
            let (qualified, revealed, served) = match self.member_of.get(&client) {
                Some(&(q, _)) => {
                    let (qualified, revealed) = self.holder_keys(client, &quals[q]);
                    if qualified.is_empty() {
                        (qualified, revealed, Vec::new())
                    } else {
                        let served = ls.served(q);
                        for &l in &served {
                            lane_keys.extend(ls.key(l).map(|k| (l, k)));
                        }
                        if q < ls.kr {
                            lane_keys
                                .extend((0..w).map(|j| (COLUMN_LANE | j as u32, ls.col_keys[j])));
                        }
                        (qualified, revealed, served)
                    }
                }
                None => (Vec::new(), Vec::new(), Vec::new()),
            };
            out.push(self.envelope(
                client,
                Message::LaneKeyAnnounce {
                    messages: self.params.messages_per_client,
                    slot_keys,
                    lane_keys,
                    served,
                    qualified,
                    revealed,
                    evidence: slot_evidence,
                },
            ));
        }
        Ok(self.next_round(now, out, Kind::Submit))
    }

    /// The submissions, each checked under its slot's row key; accepted
    /// ones placed in their cells, every other cell a public dummy.
    pub(super) fn after_lane_submit(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        let m = self.params.messages_per_client as usize;
        let run = self.run;
        let ls = self.lanes()?;
        let w = ls.grid.width();
        let subs: Vec<(u32, Vec<ClientSubmission>)> = inbox
            .into_iter()
            .filter_map(|(from, (_, msg))| match msg {
                Message::Submit { submissions } => Some((from, submissions)),
                _ => None,
            })
            .collect();
        let checked: Vec<(u32, Result<Vec<ClientSubmission>, String>)> = subs
            .into_par_iter()
            .map(|(from, s)| {
                if s.len() != m {
                    return (from, Err(format!("{} submissions, expected {m}", s.len())));
                }
                for (j, sub) in s.iter().enumerate() {
                    if sub.client != from {
                        return (from, Err(format!("claims client {}", sub.client)));
                    }
                    let task = context::task(j as u32);
                    let ctx = SubmissionContext {
                        run: &run,
                        task: &task,
                    };
                    let pk = ls.row_keys[ls.slots[from as usize * m + j] / w];
                    if let Err(e) = verify_submission(&pk, &ctx, sub) {
                        return (from, Err(e.to_string()));
                    }
                }
                (from, Ok(s))
            })
            .collect();
        let mut cells: Vec<Option<Ciphertext>> = vec![None; ls.grid.len()];
        let mut seen: HashMap<[u8; 32], u32> = HashMap::new();
        let mut refused: Vec<(u32, String)> = Vec::new();
        let mut accepted = Vec::new();
        for (from, r) in checked {
            let subs = match r {
                Ok(s) => s,
                Err(why) => {
                    refused.push((from, why));
                    continue;
                }
            };
            let keys: Vec<[u8; 32]> = subs
                .iter()
                .map(|s| s.ciphertext.c1.compress().to_bytes())
                .collect();
            let own: BTreeSet<&[u8; 32]> = keys.iter().collect();
            if own.len() != keys.len() {
                refused.push((from, "repeated c1".into()));
                continue;
            }
            if let Some(first) = keys.iter().find_map(|k| seen.get(k)) {
                refused.push((from, format!("repeats the c1 of client {first}")));
                continue;
            }
            for k in keys {
                seen.insert(k, from);
            }
            for (s, sub) in subs.iter().enumerate() {
                cells[ls.slots[from as usize * m + s]] = Some(sub.ciphertext);
            }
            accepted.push(from);
        }
        if accepted.is_empty() {
            return Err(RelayError::NoSubmissions);
        }
        let mut dummies = 0;
        let list: Vec<Ciphertext> = cells
            .into_iter()
            .enumerate()
            .map(|(cell, c)| {
                c.unwrap_or_else(|| {
                    dummies += 1;
                    dummy(&ls.row_keys[cell / w])
                })
            })
            .collect();
        for (from, why) in refused {
            self.name(from, Offence::InvalidSubmission(why));
        }
        self.accepted = accepted;
        self.list = list;
        if let Some(ls) = self.lane.as_mut() {
            ls.dummies = dummies;
        }
        self.phase = Phase::Shuffle;
        self.start_lanes()?;
        self.request_shuffle(now)
    }

    fn lane_c1(&self, ls: &LaneState, lane: u32) -> Vec<RistrettoPoint> {
        ls.positions(lane)
            .iter()
            .map(|&p| self.list[p].c1)
            .collect()
    }

    fn lane_cts(&self, ls: &LaneState, lane: u32) -> Vec<Ciphertext> {
        ls.positions(lane).iter().map(|&p| self.list[p]).collect()
    }

    /// Ask every committee of `round` that has fewer than `t` valid answers
    /// for the missing ones (fresh holders, never asked, not gone).
    fn ask_committees(&mut self, now: u64, round: Round) -> Result<Step, RelayError> {
        let t = self.params.threshold as usize;
        self.round += 1;
        let ls = self.lanes()?;
        let range = match round {
            Round::Reencrypt => 0..ls.kr,
            Round::Decrypt => ls.kr..ls.kr + ls.kc,
        };
        let mut out: Vec<Outgoing> = Vec::new();
        let mut asked: Vec<(usize, Vec<u32>)> = Vec::new();
        for q in range {
            let (have, already) = match round {
                Round::Reencrypt => (ls.reenc[q].valid.len(), &ls.reenc[q].asked),
                Round::Decrypt => (ls.dec[q - ls.kr].valid.len(), &ls.dec[q - ls.kr].asked),
            };
            let need = t.saturating_sub(have);
            if need == 0 {
                continue;
            }
            let kg = &self.keygens[q];
            let next: Vec<u32> = kg
                .holders
                .iter()
                .copied()
                .filter(|i| {
                    !already.contains(i) && !self.gone.contains(&kg.members[*i as usize - 1])
                })
                .take(need)
                .collect();
            if next.is_empty() {
                return Err(RelayError::CommitteeShort {
                    committee: q,
                    what: match round {
                        Round::Reencrypt => "re-encryption answers",
                        Round::Decrypt => "partial decryptions",
                    },
                    valid: have,
                    threshold: self.params.threshold,
                });
            }
            let lanes: Vec<(u32, Vec<RistrettoPoint>)> = ls
                .served(q)
                .into_iter()
                .map(|l| (l, self.lane_c1(ls, l)))
                .collect();
            let chains: Vec<LaneChain> = lanes
                .iter()
                .map(|(l, _)| self.lane_chain(*l).ok_or(RelayError::Ended))
                .collect::<Result<_, _>>()?;
            for &i in &next {
                let client = kg.members[i as usize - 1];
                let msg = match round {
                    Round::Reencrypt => Message::ReencryptRequest {
                        lanes: lanes.clone(),
                        chains: chains.clone(),
                    },
                    Round::Decrypt => Message::LaneDecryptRequest {
                        lanes: lanes.clone(),
                        chains: chains.clone(),
                    },
                };
                out.push(self.envelope(client, msg));
            }
            asked.push((q, next));
        }
        let ls = self.lane.as_mut().ok_or(RelayError::Ended)?;
        for (q, next) in asked {
            match round {
                Round::Reencrypt => ls.reenc[q].asked.extend(next),
                Round::Decrypt => ls.dec[q - ls.kr].asked.extend(next),
            }
        }
        let reply = match round {
            Round::Reencrypt => Kind::ReencryptResponse,
            Round::Decrypt => Kind::LaneDecryptResponse,
        };
        Ok(self.next_round(now, out, reply))
    }

    /// Start the re-encryption round (after the row chains).
    pub(super) fn request_reencrypt(&mut self, now: u64) -> Result<Step, RelayError> {
        self.phase = Phase::Reencrypt;
        self.ask_committees(now, Round::Reencrypt)
    }

    /// Start the per-column decryption (after the column chains).
    pub(super) fn request_lane_partials(&mut self, now: u64) -> Result<Step, RelayError> {
        self.phase = Phase::Decrypt;
        self.ask_committees(now, Round::Decrypt)
    }

    /// The sender's committee and index if its answer covers exactly the
    /// lanes its committee serves, in order, as its own member index.
    fn check_lanes(&self, from: u32, lanes: &[u32], members: &[u32]) -> Result<usize, String> {
        let ls = self.lane.as_ref().ok_or("no lane state")?;
        let &(q, idx) = self.member_of.get(&from).ok_or("not a committee member")?;
        let served = ls.served(q);
        if lanes != served.as_slice() {
            return Err(format!("answered lanes {lanes:?}, asked {served:?}"));
        }
        if let Some(m) = members.iter().find(|&&m| m != idx) {
            return Err(format!("partial for member {m}, sender is member {idx}"));
        }
        Ok(q)
    }

    /// Check every member's answer (its lanes, in order, each partial
    /// under its committee's group key with `verify`). Answers are checked
    /// in parallel (one per member of every committee asked, each hundreds
    /// of small multiscalar multiplications); the verdicts come back in
    /// client order, so cheaters are named in the same order as before.
    fn check_answers<T: Send + Sync>(
        &self,
        answers: Vec<(u32, Vec<(u32, T)>)>,
        member: impl Fn(&T) -> u32 + Sync,
        verify: impl Fn(&GroupKey, u32, &T) -> Result<(), String> + Sync,
    ) -> Result<Vec<Verdict<T>>, RelayError> {
        answers
            .into_par_iter()
            .map(|(from, partials)| {
                let lanes: Vec<u32> = partials.iter().map(|(l, _)| *l).collect();
                let members: Vec<u32> = partials.iter().map(|(_, p)| member(p)).collect();
                let q = match self.check_lanes(from, &lanes, &members) {
                    Ok(q) => q,
                    Err(why) => return Ok((from, 0, Err(why))),
                };
                let gk = self.keygens[q].group.as_ref().ok_or(RelayError::Ended)?;
                let checked: Result<(), String> = partials.par_iter().try_for_each(|(lane, p)| {
                    verify(gk, *lane, p).map_err(|e| format!("lane {lane}: {e}"))
                });
                let r = checked.map(|()| partials.into_iter().map(|(_, p)| p).collect());
                Ok((from, q, r))
            })
            .collect()
    }

    pub(super) fn after_reencrypt(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        let ls = self.lanes()?;
        let run = self.run;
        let answers: Vec<(u32, Vec<(u32, ReencryptionPartial)>)> = inbox
            .into_iter()
            .filter_map(|(from, (_, msg))| match msg {
                Message::ReencryptResponse { partials } => Some((from, partials)),
                _ => None,
            })
            .collect();
        let verdicts = self.check_answers(
            answers,
            |p| p.member,
            |gk, lane, p| {
                let ctx = ReencryptContext { run: &run, lane };
                let cts = self.lane_cts(ls, lane);
                reencrypt::verify_partial(gk, &cts, &ls.targets(lane), p, &ctx)
                    .map_err(|e| e.to_string())
            },
        )?;
        for (from, q, r) in verdicts {
            match r {
                Ok(ps) => {
                    let idx = self.member_index(from).unwrap_or(0);
                    if let Some(ls) = self.lane.as_mut() {
                        ls.reenc[q].valid.insert(idx, ps);
                    }
                }
                Err(why) => self.name(from, Offence::WrongReencryption(why)),
            }
        }
        let t = self.params.threshold as usize;
        let ls = self.lanes()?;
        if ls.reenc.iter().any(|c| c.valid.len() < t) {
            return self.ask_committees(now, Round::Reencrypt);
        }
        // Combine each row from the first t valid answers of its committee.
        let rows: Vec<u32> = (0..ls.grid.height() as u32).collect();
        let combined: Vec<(u32, Vec<Ciphertext>)> = rows
            .par_iter()
            .map(|&r| {
                let q = ls.committee_of(r);
                let pos = ls.served(q).iter().position(|&l| l == r).unwrap_or(0);
                let used: Vec<&ReencryptionPartial> = ls.reenc[q]
                    .valid
                    .values()
                    .take(t)
                    .filter_map(|v| v.get(pos))
                    .collect();
                let gk = self.keygens[q].group.as_ref().ok_or(RelayError::Ended)?;
                let cts = self.lane_cts(ls, r);
                Ok((r, reencrypt::combine_verified(gk, &cts, &used)?))
            })
            .collect::<Result<_, RelayError>>()?;
        for (r, cts) in combined {
            let pos = self.lanes()?.positions(r);
            for (p, c) in pos.into_iter().zip(cts) {
                self.list[p] = c;
            }
        }
        if let Some(ls) = self.lane.as_mut() {
            ls.reencrypted = true;
        }
        self.phase = Phase::Shuffle;
        self.request_shuffle(now)
    }

    pub(super) fn after_lane_decrypt(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        let ls = self.lanes()?;
        let run = self.run;
        let answers: Vec<(u32, Vec<(u32, PartialDecryption)>)> = inbox
            .into_iter()
            .filter_map(|(from, (_, msg))| match msg {
                Message::LaneDecryptResponse { partials } => Some((from, partials)),
                _ => None,
            })
            .collect();
        let verdicts = self.check_answers(
            answers,
            |p| p.member,
            |gk, lane, p| {
                let cts = self.lane_cts(ls, lane);
                gk.verify_partial(&cts, p, &context::decrypt_lane(&run, lane))
                    .map_err(|e| e.to_string())
            },
        )?;
        for (from, q, r) in verdicts {
            match r {
                Ok(ps) => {
                    let idx = self.member_index(from).unwrap_or(0);
                    if let Some(ls) = self.lane.as_mut() {
                        let kr = ls.kr;
                        ls.dec[q - kr].valid.insert(idx, ps);
                    }
                }
                Err(why) => self.name(from, Offence::WrongPartial(why)),
            }
        }
        let t = self.params.threshold as usize;
        let ls = self.lanes()?;
        if ls.dec.iter().any(|c| c.valid.len() < t) {
            return self.ask_committees(now, Round::Decrypt);
        }
        // Decrypt each column; read the grid column by column.
        let columns: Vec<u32> = (0..ls.grid.width() as u32)
            .map(|j| COLUMN_LANE | j)
            .collect();
        let points: Vec<Vec<RistrettoPoint>> = columns
            .par_iter()
            .map(|&l| {
                let q = ls.committee_of(l);
                let pos = ls.served(q).iter().position(|&x| x == l).unwrap_or(0);
                let used: Vec<PartialDecryption> = ls.dec[q - ls.kr]
                    .valid
                    .values()
                    .take(t)
                    .filter_map(|v| v.get(pos).cloned())
                    .collect();
                let gk = self.keygens[q].group.as_ref().ok_or(RelayError::Ended)?;
                let cts = self.lane_cts(ls, l);
                Ok(gk.combine(&cts, &used, &context::decrypt_lane(&run, l))?)
            })
            .collect::<Result<_, RelayError>>()?;
        let d = dummy_point();
        let inserted = ls.dummies;
        let mut removed = 0usize;
        let mut kept: Vec<RistrettoPoint> = Vec::with_capacity(ls.grid.len());
        for p in points.into_iter().flatten() {
            if p == d && removed < inserted {
                removed += 1;
            } else {
                kept.push(p);
            }
        }
        if removed != inserted {
            return Err(RelayError::DummyCount {
                found: removed,
                inserted,
            });
        }
        let decoded: Vec<Result<u64, _>> = kept.par_iter().map(encoding::decode_u64).collect();
        let undecodable = decoded.iter().filter(|r| r.is_err()).count();
        let messages = decoded.into_iter().filter_map(Result::ok).collect();
        let mut decryptors: Vec<u32> = Vec::new();
        for (k, c) in ls.dec.iter().enumerate() {
            let kg = &self.keygens[ls.kr + k];
            decryptors.extend(c.valid.keys().take(t).map(|i| kg.members[*i as usize - 1]));
        }
        self.phase = Phase::Done;
        Ok(Step::Done(RunOutput {
            messages,
            undecodable,
            accepted_clients: self.accepted.clone(),
            shufflers: self.chain.clone(),
            decryptors,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dummy_is_outside_the_message_space() {
        assert!(encoding::decode_u64(&dummy_point()).is_err());
    }
}
