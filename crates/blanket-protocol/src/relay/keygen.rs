//! The relay's key-generation rounds: dealings, complaints, reveals, and
//! the key announcement (joint-Feldman with the checks of
//! `blanket_crypto::dkg`; `docs/protocol.md`, "Roles and rounds").

use std::collections::{BTreeMap, BTreeSet};

use blanket_crypto::channel::SealedMessage;
use blanket_crypto::dkg::{self, Complaint, Dealing, DkgParams, SecretShare, VerifiedDealing};
use blanket_crypto::schnorr::SchnorrProof;
use blanket_crypto::threshold::GroupKey;
use rayon::prelude::*;

use super::{Offence, Phase, Relay, RelayError, Step};
use crate::evidence::{self, Attestation, SignedComplaint};
use crate::wire::{Kind, Message};

/// One key committee's DKG at the relay (the single committee, or one of
/// the per-lane committees; all run in the same rounds).
pub(super) struct Keygen {
    /// Client ids; member `i` (1-based) is `members[i - 1]`.
    pub(super) members: Vec<u32>,
    pub(super) dkg: DkgParams,
    /// Dealings verified on arrival, by dealer index, with the sealed
    /// shares to forward (the key announcement reuses the verification).
    pub(super) dealings: BTreeMap<u32, (VerifiedDealing, Vec<SealedMessage>)>,
    /// Each valid dealing's attestation of its constant term, by dealer
    /// index (forwarded with the key announcement).
    pub(super) attestations: BTreeMap<u32, SchnorrProof>,
    pub(super) responders: BTreeSet<u32>,
    pub(super) complaints: Vec<Complaint>,
    /// Each complainer's signed complaint, forwarded to the dealers it
    /// accuses (who reveal only for signed complaints).
    pub(super) signed: BTreeMap<u32, SignedComplaint>,
    pub(super) revealed: Vec<SecretShare>,
    pub(super) disqualified: BTreeSet<u32>,
    pub(super) group: Option<GroupKey>,
    /// Members (indices) that hold a key share: answered the complaints
    /// round, not disqualified, not gone.
    pub(super) holders: Vec<u32>,
}

impl Keygen {
    pub(super) fn new(members: Vec<u32>, dkg: DkgParams) -> Self {
        Keygen {
            members,
            dkg,
            dealings: BTreeMap::new(),
            attestations: BTreeMap::new(),
            responders: BTreeSet::new(),
            complaints: Vec::new(),
            signed: BTreeMap::new(),
            revealed: Vec::new(),
            disqualified: BTreeSet::new(),
            group: None,
            holders: Vec::new(),
        }
    }

    /// Member index (1-based) of `client`.
    pub(super) fn index(&self, client: u32) -> Option<u32> {
        self.members
            .iter()
            .position(|&c| c == client)
            .map(|p| p as u32 + 1)
    }

    /// QUAL's dealer indices.
    pub(super) fn qualified(&self) -> Vec<u32> {
        self.dealings
            .keys()
            .copied()
            .filter(|i| !self.disqualified.contains(i))
            .collect()
    }
}

impl Relay {
    fn check_deal(
        &self,
        q: usize,
        from: u32,
        d: Dealing,
        attestation: &SchnorrProof,
        shares: &[SealedMessage],
    ) -> Result<VerifiedDealing, String> {
        let kg = &self.keygens[q];
        let idx = kg.index(from).ok_or("not a member")?;
        if d.dealer != idx {
            return Err(format!(
                "dealing claims member {}, sender is {idx}",
                d.dealer
            ));
        }
        let d = VerifiedDealing::new(&kg.dkg, d).map_err(|e| e.to_string())?;
        dkg::verify_attestation(
            &evidence::attest_context(&self.run, from),
            &self.directory[from as usize],
            &d.dealing().commitments()[0],
            attestation,
            idx,
        )
        .map_err(|_| "the attestation of the constant term does not verify".to_string())?;
        let mut to: BTreeSet<u32> = BTreeSet::new();
        for s in shares {
            let ok = s.sender == from
                && s.round == self.round as u64
                && s.receiver != from
                && kg.index(s.receiver).is_some()
                && to.insert(s.receiver);
            if !ok {
                return Err("sealed share with wrong sender, round or receiver".into());
            }
        }
        if to.len() + 1 != kg.members.len() {
            return Err(format!(
                "{} sealed shares for {} other members",
                to.len(),
                kg.members.len() - 1
            ));
        }
        Ok(d)
    }

    pub(super) fn after_deal(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        // Every dealing's proof is checked on the rayon pool (one per
        // member of every committee), the verdicts applied in client order.
        type Deal = (u32, usize, Dealing, SchnorrProof, Vec<SealedMessage>);
        let deals: Vec<Deal> = inbox
            .into_iter()
            .filter_map(|(from, (_, msg))| {
                let &(q, _) = self.member_of.get(&from)?;
                match msg {
                    Message::DkgDeal {
                        dealing,
                        attestation,
                        shares,
                    } => Some((from, q, dealing, attestation, shares)),
                    _ => None,
                }
            })
            .collect();
        type Checked = (
            u32,
            usize,
            Result<VerifiedDealing, String>,
            SchnorrProof,
            Vec<SealedMessage>,
        );
        let checked: Vec<Checked> = deals
            .into_par_iter()
            .map(|(from, q, dealing, attestation, shares)| {
                let r = self.check_deal(q, from, dealing, &attestation, &shares);
                (from, q, r, attestation, shares)
            })
            .collect();
        for (from, q, r, attestation, shares) in checked {
            match r {
                Ok(d) => {
                    let kg = &mut self.keygens[q];
                    kg.attestations.insert(d.dealer(), attestation);
                    kg.dealings.insert(d.dealer(), (d, shares));
                }
                Err(why) => self.name(from, Offence::InvalidDealing(why)),
            }
        }
        if let Some(kg) = self
            .keygens
            .iter()
            .find(|kg| kg.dealings.len() < self.params.threshold as usize)
        {
            return Err(RelayError::TooFewDealings {
                valid: kg.dealings.len(),
                threshold: self.params.threshold,
            });
        }
        self.round += 1;
        self.phase = Phase::DkgComplaints;
        let mut out = Vec::new();
        for kg in &self.keygens {
            let all: Vec<Dealing> = kg
                .dealings
                .values()
                .map(|(d, _)| d.dealing().clone())
                .collect();
            for &idx in kg.dealings.keys() {
                let client = kg.members[idx as usize - 1];
                let shares: Vec<SealedMessage> = kg
                    .dealings
                    .values()
                    .flat_map(|(_, s)| s.iter().filter(|m| m.receiver == client).cloned())
                    .collect();
                out.push(self.envelope(
                    client,
                    Message::DkgShares {
                        dealings: all.clone(),
                        shares,
                    },
                ));
            }
        }
        Ok(self.next_round(now, out, Kind::DkgComplaints))
    }

    pub(super) fn after_complaints(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        for (from, (_, msg)) in inbox {
            let Some(&(q, me)) = self.member_of.get(&from) else {
                continue;
            };
            let Message::DkgComplaints { dealers, signature } = msg else {
                continue;
            };
            let kg = &self.keygens[q];
            let key = &self.directory[from as usize];
            if evidence::verify_complaint(kg.dkg.session(), me, &dealers, &signature, key).is_err()
            {
                let why = "complaint signature does not verify".to_string();
                self.name(from, Offence::Malformed(why));
                continue;
            }
            let kg = &mut self.keygens[q];
            kg.responders.insert(me);
            let mut any = false;
            for &d in dealers.iter().collect::<BTreeSet<&u32>>() {
                if d != me && kg.dealings.contains_key(&d) {
                    any = true;
                    kg.complaints.push(Complaint {
                        dealer: d,
                        complainer: me,
                    });
                }
            }
            if any {
                kg.signed.insert(
                    me,
                    SignedComplaint {
                        complainer: me,
                        dealers,
                        signature,
                    },
                );
            }
        }
        if self.keygens.iter().all(|kg| kg.complaints.is_empty()) {
            return self.announce(now);
        }
        self.round += 1;
        self.phase = Phase::DkgReveal;
        let mut out = Vec::new();
        for q in 0..self.keygens.len() {
            let mut by_dealer: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for c in &self.keygens[q].complaints {
                by_dealer.entry(c.dealer).or_default().push(c.complainer);
            }
            for (dealer, complainers) in by_dealer {
                let client = self.keygens[q].members[dealer as usize - 1];
                if self.gone.contains(&client) {
                    self.keygens[q].disqualified.insert(dealer);
                    continue;
                }
                let complaints = complainers
                    .iter()
                    .filter_map(|c| self.keygens[q].signed.get(c).cloned())
                    .collect();
                out.push(self.envelope(client, Message::DkgRevealRequest { complaints }));
            }
        }
        if out.is_empty() {
            return self.announce(now);
        }
        Ok(self.next_round(now, out, Kind::DkgReveal))
    }

    pub(super) fn after_reveal(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        for q in 0..self.keygens.len() {
            let complaints = std::mem::take(&mut self.keygens[q].complaints);
            for c in &complaints {
                let kg = &mut self.keygens[q];
                if kg.disqualified.contains(&c.dealer) {
                    continue;
                }
                let client = kg.members[c.dealer as usize - 1];
                let revealed = match inbox.get(&client) {
                    Some((_, Message::DkgReveal { shares })) => {
                        shares.iter().find(|s| s.recipient == c.complainer).cloned()
                    }
                    _ => None,
                };
                let dealing = kg.dealings[&c.dealer].0.dealing();
                match dkg::resolve_complaint(&kg.dkg, dealing, c, revealed.as_ref()) {
                    Ok(()) => kg.revealed.extend(revealed),
                    Err(_) => {
                        kg.disqualified.insert(c.dealer);
                        if inbox.contains_key(&client) && !self.gone.contains(&client) {
                            self.name(client, Offence::Disqualified);
                        }
                    }
                }
            }
            self.keygens[q].complaints = complaints;
        }
        self.announce(now)
    }

    /// QUAL, the joint key(s), and the key announcement to every client.
    fn announce(&mut self, now: u64) -> Result<Step, RelayError> {
        // Each committee's group key from its dealings verified on
        // arrival, committees on the rayon pool.
        let keys: Vec<Result<_, dkg::DkgError>> = self
            .keygens
            .par_iter()
            .map(|kg| {
                let qual: Vec<&VerifiedDealing> = kg
                    .qualified()
                    .iter()
                    .filter_map(|i| kg.dealings.get(i).map(|(d, _)| d))
                    .collect();
                dkg::group_key_verified(&kg.dkg, &qual)
            })
            .collect();
        for (q, gk) in keys.into_iter().enumerate() {
            let gk = gk?;
            let kg = &self.keygens[q];
            let holders: Vec<u32> = kg
                .responders
                .iter()
                .copied()
                .filter(|&i| {
                    !kg.disqualified.contains(&i)
                        && !self.gone.contains(&kg.members[i as usize - 1])
                })
                .collect();
            let kg = &mut self.keygens[q];
            kg.group = Some(gk);
            kg.holders = holders;
        }
        self.round += 1;
        self.phase = Phase::Submit;
        if self.params.lane_committees.is_some() {
            return self.announce_lane_keys(now);
        }
        let kg = &self.keygens[0];
        let pk = *kg.group.as_ref().ok_or(RelayError::Ended)?.public_key();
        let qual_ids = kg.qualified();
        let evidence = self.key_evidence(0);
        let mut out = Vec::with_capacity(self.params.clients as usize);
        for client in 0..self.params.clients {
            if self.gone.contains(&client) {
                continue;
            }
            let (qualified, revealed) = self.holder_keys(client, &qual_ids);
            out.push(self.envelope(
                client,
                Message::KeyAnnounce {
                    public_key: pk,
                    messages: self.params.messages_per_client,
                    qualified,
                    revealed,
                    evidence: evidence.clone(),
                },
            ));
        }
        Ok(self.next_round(now, out, Kind::Submit))
    }

    /// The attestations of committee `q`'s qualified dealers (the evidence
    /// of its joint key, `evidence::check_key`).
    pub(super) fn key_evidence(&self, q: usize) -> Vec<Attestation> {
        let kg = &self.keygens[q];
        kg.qualified()
            .into_iter()
            .filter_map(|i| {
                let client = kg.members[i as usize - 1];
                Some(Attestation {
                    client,
                    key: self.directory[client as usize],
                    a0: kg.dealings.get(&i)?.0.dealing().commitments()[0],
                    proof: *kg.attestations.get(&i)?,
                })
            })
            .collect()
    }

    /// QUAL and the shares revealed for `client` if it holds a key share of
    /// its committee (`qual_ids` that committee's QUAL), empty otherwise.
    pub(super) fn holder_keys(
        &self,
        client: u32,
        qual_ids: &[u32],
    ) -> (Vec<u32>, Vec<SecretShare>) {
        let Some(&(q, i)) = self.member_of.get(&client) else {
            return (Vec::new(), Vec::new());
        };
        let kg = &self.keygens[q];
        if !kg.holders.contains(&i) {
            return (Vec::new(), Vec::new());
        }
        (
            qual_ids.to_vec(),
            kg.revealed
                .iter()
                .filter(|s| s.recipient == i)
                .cloned()
                .collect(),
        )
    }
}
