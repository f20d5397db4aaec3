//! The relay's key-generation rounds: dealings, complaints, reveals, and
//! the key announcement (joint-Feldman with the checks of
//! `blanket_crypto::dkg`; `docs/protocol.md`, "Roles and rounds").

use std::collections::{BTreeMap, BTreeSet};

use blanket_crypto::channel::SealedMessage;
use blanket_crypto::dkg::{self, Complaint, Dealing};

use super::{Offence, Phase, Relay, RelayError, Step};
use crate::wire::{Kind, Message};

impl Relay {
    fn check_deal(&self, from: u32, d: &Dealing, shares: &[SealedMessage]) -> Result<(), String> {
        let idx = self.member_index(from).ok_or("not a member")?;
        if d.dealer != idx {
            return Err(format!(
                "dealing claims member {}, sender is {idx}",
                d.dealer
            ));
        }
        dkg::verify_dealing(&self.dkg, d).map_err(|e| e.to_string())?;
        let mut to: BTreeSet<u32> = BTreeSet::new();
        for s in shares {
            let ok = s.sender == from
                && s.round == self.round as u64
                && s.receiver != from
                && self.member_index(s.receiver).is_some()
                && to.insert(s.receiver);
            if !ok {
                return Err("sealed share with wrong sender, round or receiver".into());
            }
        }
        if to.len() + 1 != self.roles.committee.len() {
            return Err(format!(
                "{} sealed shares for {} other members",
                to.len(),
                self.roles.committee.len() - 1
            ));
        }
        Ok(())
    }

    pub(super) fn after_deal(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        for (from, (_, msg)) in inbox {
            if let Message::DkgDeal { dealing, shares } = msg {
                match self.check_deal(from, &dealing, &shares) {
                    Ok(()) => {
                        self.dealings.insert(dealing.dealer, (dealing, shares));
                    }
                    Err(why) => self.name(from, Offence::InvalidDealing(why)),
                }
            }
        }
        if self.dealings.len() < self.params.threshold as usize {
            return Err(RelayError::TooFewDealings {
                valid: self.dealings.len(),
                threshold: self.params.threshold,
            });
        }
        self.round += 1;
        self.phase = Phase::DkgComplaints;
        let all: Vec<Dealing> = self.dealings.values().map(|(d, _)| d.clone()).collect();
        let mut out = Vec::new();
        for &idx in self.dealings.keys() {
            let client = self.roles.committee[idx as usize - 1];
            let shares: Vec<SealedMessage> = self
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
        Ok(self.next_round(now, out, Kind::DkgComplaints))
    }

    pub(super) fn after_complaints(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        for (from, (_, msg)) in inbox {
            let Some(me) = self.member_index(from) else {
                continue;
            };
            if let Message::DkgComplaints { dealers } = msg {
                self.responders.insert(me);
                for d in dealers.into_iter().collect::<BTreeSet<u32>>() {
                    if d != me && self.dealings.contains_key(&d) {
                        self.complaints.push(Complaint {
                            dealer: d,
                            complainer: me,
                        });
                    }
                }
            }
        }
        if self.complaints.is_empty() {
            return self.announce(now);
        }
        self.round += 1;
        self.phase = Phase::DkgReveal;
        let mut by_dealer: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for c in &self.complaints {
            by_dealer.entry(c.dealer).or_default().push(c.complainer);
        }
        let mut out = Vec::new();
        for (dealer, complainers) in by_dealer {
            let client = self.roles.committee[dealer as usize - 1];
            if self.gone.contains(&client) {
                self.disqualified.insert(dealer);
                continue;
            }
            out.push(self.envelope(client, Message::DkgRevealRequest { complainers }));
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
        let complaints = std::mem::take(&mut self.complaints);
        for c in &complaints {
            if self.disqualified.contains(&c.dealer) {
                continue;
            }
            let client = self.roles.committee[c.dealer as usize - 1];
            let revealed = match inbox.get(&client) {
                Some((_, Message::DkgReveal { shares })) => {
                    shares.iter().find(|s| s.recipient == c.complainer).cloned()
                }
                _ => None,
            };
            let dealing = &self.dealings[&c.dealer].0;
            match dkg::resolve_complaint(&self.dkg, dealing, c, revealed.as_ref()) {
                Ok(()) => self.revealed.extend(revealed),
                Err(_) => {
                    self.disqualified.insert(c.dealer);
                    if inbox.contains_key(&client) && !self.gone.contains(&client) {
                        self.name(client, Offence::Disqualified);
                    }
                }
            }
        }
        self.complaints = complaints;
        self.announce(now)
    }

    /// QUAL, the joint key, and the key announcement to every client.
    fn announce(&mut self, now: u64) -> Result<Step, RelayError> {
        let qual: Vec<Dealing> = self
            .dealings
            .iter()
            .filter(|(i, _)| !self.disqualified.contains(i))
            .map(|(_, (d, _))| d.clone())
            .collect();
        let gk = dkg::group_key(&self.dkg, &qual)?;
        let pk = *gk.public_key();
        self.group = Some(gk);
        let qual_ids: Vec<u32> = qual.iter().map(|d| d.dealer).collect();
        self.holders = self
            .responders
            .iter()
            .copied()
            .filter(|&i| {
                !self.disqualified.contains(&i)
                    && !self.gone.contains(&self.roles.committee[i as usize - 1])
            })
            .collect();
        self.round += 1;
        self.phase = Phase::Submit;
        let mut out = Vec::with_capacity(self.params.clients as usize);
        for client in 0..self.params.clients {
            if self.gone.contains(&client) {
                continue;
            }
            let holder = self
                .member_index(client)
                .filter(|i| self.holders.contains(i));
            let (qualified, revealed) = match holder {
                Some(i) => (
                    qual_ids.clone(),
                    self.revealed
                        .iter()
                        .filter(|s| s.recipient == i)
                        .cloned()
                        .collect(),
                ),
                None => (Vec::new(), Vec::new()),
            };
            out.push(self.envelope(
                client,
                Message::KeyAnnounce {
                    public_key: pk,
                    messages: self.params.messages_per_client,
                    qualified,
                    revealed,
                },
            ));
        }
        Ok(self.next_round(now, out, Kind::Submit))
    }
}
