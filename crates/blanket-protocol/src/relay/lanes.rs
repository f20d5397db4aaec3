//! The relay's shuffle phase as lanes: one lane over the whole list
//! (amortized), or one lane per row and then one per column of the
//! alternating grid (spec `05-secure-shuffle.md`, "The 2-round alternating
//! shuffle protocol"; the grid of `blanket::shuffle::alternating`).
//!
//! Each lane runs its own chain from its own public list (list `j` serves
//! row `j` and later column `j`); all lanes of a round move in parallel, one
//! protocol round per chain stage. A silent or cheating shuffler is replaced
//! by the next on its lane's list in the next round.

use std::collections::BTreeMap;

use blanket_crypto::shuffle::{self, ShuffleSetup};
use blanket_crypto::Ciphertext;

use super::{Offence, Outgoing, Phase, Relay, RelayError, Step};
use crate::context;
use crate::evidence::{self, ChainLink, LaneChain};
use crate::params::Variant;
use crate::select;
use crate::wire::{Kind, Message, COLUMN_LANE};

use blanket::shuffle::alternating::GridLayout;

pub(super) struct Lane {
    /// The id bound into the proof context.
    id: u32,
    /// Which public shuffler list serves it.
    list: usize,
    /// Positions of `Relay::list` the lane shuffles.
    positions: Vec<usize>,
    /// Next candidate on the list.
    next: usize,
    /// Accepted shuffles.
    stage: u32,
    /// The shuffler asked in the current round.
    current: Option<u32>,
    /// Digests of the lane's list before the first accepted shuffle and
    /// after each (`evidence::LaneChain`).
    digests: Vec<[u8; 32]>,
    /// The accepted shuffles, as their shufflers signed them.
    links: Vec<ChainLink>,
}

impl Lane {
    fn new(id: u32, list: usize, positions: Vec<usize>) -> Self {
        Lane {
            id,
            list,
            positions,
            next: 0,
            stage: 0,
            current: None,
            digests: Vec::new(),
            links: Vec::new(),
        }
    }
}

impl Relay {
    /// Set up the first round of lanes over the accepted list.
    pub(super) fn start_lanes(&mut self) -> Result<(), RelayError> {
        let n = self.list.len();
        let setup = |len: usize| {
            ShuffleSetup::new(self.params.proof, len)
                .map_err(|source| RelayError::ShuffleSetup { len, source })
        };
        match self.params.variant {
            Variant::Amortized => {
                self.setup = Some(setup(n)?);
                self.lanes = vec![Lane::new(0, 0, (0..n).collect())];
            }
            Variant::Alternating => {
                // Public placement: message i to row-major cell pi(i) (with
                // per-lane key committees the list is already in its cells,
                // placed over the client slots).
                let grid = GridLayout::new(n);
                if self.lane.is_none() {
                    let pi = select::placement(&self.run, &self.seed, n);
                    let mut cells = vec![Ciphertext::identity(); n];
                    for (i, &c) in pi.iter().enumerate() {
                        cells[c] = self.list[i];
                    }
                    self.list = cells;
                }
                let w = grid.width();
                self.lanes = (0..grid.height())
                    .map(|r| {
                        let start = r * w;
                        Lane::new(r as u32, r, (start..start + grid.row_len(r)).collect())
                    })
                    .collect();
                self.setup = Some(setup(w.max(grid.height()))?);
                self.grid = Some(grid);
            }
        }
        Ok(())
    }

    /// Ask the next shuffler of every unfinished lane; when all lanes are
    /// done, start the column round (alternating) or the decryption.
    pub(super) fn request_shuffle(&mut self, now: u64) -> Result<Step, RelayError> {
        let k = self.params.chain;
        let mut out: Vec<Outgoing> = Vec::new();
        // Envelopes of the next round carry its number; restored below if
        // no lane needs a shuffler.
        self.round += 1;
        for li in 0..self.lanes.len() {
            if self.lanes[li].stage >= k {
                continue;
            }
            let list = self.roles.list(self.lanes[li].list).to_vec();
            let chosen = loop {
                let lane = &mut self.lanes[li];
                let Some(&c) = list.get(lane.next) else {
                    return Err(RelayError::ChainExhausted {
                        lane: lane.id,
                        stage: lane.stage,
                        chain: k,
                        list: list.len(),
                    });
                };
                lane.next += 1;
                if !self.gone.contains(&c) {
                    break c;
                }
            };
            let lane = &mut self.lanes[li];
            lane.current = Some(chosen);
            let input: Vec<Ciphertext> = lane.positions.iter().map(|&p| self.list[p]).collect();
            let (id, stage) = (lane.id, lane.stage);
            out.push(self.envelope(
                chosen,
                Message::ShuffleRequest {
                    lane: id,
                    stage,
                    list: input,
                },
            ));
        }
        if !out.is_empty() {
            return Ok(self.next_round(now, out, Kind::ShuffleResponse));
        }
        self.round -= 1;
        if let (Some(grid), false) = (self.grid, self.columns_started) {
            if self.lane.as_ref().is_some_and(|l| !l.reencrypted()) {
                return self.request_reencrypt(now);
            }
            self.columns_started = true;
            let n = self.list.len();
            let w = grid.width();
            self.lanes = (0..w)
                .map(|c| Lane::new(COLUMN_LANE | c as u32, c, (c..n).step_by(w).collect()))
                .collect();
            return self.request_shuffle(now);
        }
        if self.lane.is_some() {
            return self.request_lane_partials(now);
        }
        // The chains that end in the final list, in its order (the columns
        // of the alternating layout are read one after the other).
        self.final_chains = self
            .lanes
            .iter()
            .filter_map(|l| self.lane_chain(l.id))
            .collect();
        if let Some(grid) = self.grid {
            // The final matrix read in column-major order (what the analyzer sees).
            let n = self.list.len();
            let w = grid.width();
            let order: Vec<Ciphertext> = (0..w)
                .flat_map(|c| (c..n).step_by(w))
                .map(|p| self.list[p])
                .collect();
            self.list = order;
        }
        self.phase = Phase::Decrypt;
        self.request_partials(now)
    }

    /// The signed chain of lane `id` (of the current lanes) ending in the
    /// lane's current list.
    pub(super) fn lane_chain(&self, id: u32) -> Option<LaneChain> {
        let lane = self.lanes.iter().find(|l| l.id == id)?;
        let cts: Vec<Ciphertext> = lane.positions.iter().map(|&p| self.list[p]).collect();
        Some(LaneChain {
            lane: id,
            len: cts.len() as u32,
            c2_digest: evidence::c2_digest(&cts),
            digests: lane.digests.clone(),
            links: lane.links.clone(),
        })
    }

    pub(super) fn after_shuffle(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        for (from, (_, msg)) in inbox {
            let Message::ShuffleResponse {
                lane,
                stage,
                signature,
                list,
                proof,
            } = msg
            else {
                continue;
            };
            let Some(li) = self.lanes.iter().position(|l| l.current == Some(from)) else {
                continue;
            };
            let (id, want) = (self.lanes[li].id, self.lanes[li].stage);
            if lane != id || stage != want {
                let why =
                    format!("answered lane {lane} stage {stage}, asked lane {id} stage {want}");
                self.name(from, Offence::InvalidShuffle(why));
                continue;
            }
            let input: Vec<Ciphertext> = self.lanes[li]
                .positions
                .iter()
                .map(|&p| self.list[p])
                .collect();
            let expected = self.params.proof;
            if proof.system() != expected {
                let got = proof.system();
                self.name(from, Offence::WrongProofSystem { expected, got });
                continue;
            }
            let pk = self.lane_pk(id).ok_or(RelayError::Ended)?;
            let setup = self.setup.as_ref().ok_or(RelayError::Ended)?;
            let ctx = context::shuffle(&self.run, expected, id, stage, from);
            if let Err(e) = shuffle::verify_with(setup, &pk, &input, &list, &proof, &ctx) {
                self.name(from, Offence::InvalidShuffle(e.to_string()));
                continue;
            }
            // The shuffler's signature on its input and output, forwarded
            // to the key holders (`evidence::LaneChain`).
            let before = match self.lanes[li].digests.last() {
                Some(d) => *d,
                None => evidence::list_digest(&input),
            };
            let after = evidence::list_digest(&list);
            let key = self.directory[from as usize];
            if evidence::verify_shuffle(
                &self.run, id, stage, from, &before, &after, &signature, &key,
            )
            .is_err()
            {
                let why = "the shuffler's signature does not verify".to_string();
                self.name(from, Offence::InvalidShuffle(why));
                continue;
            }
            let lane = &mut self.lanes[li];
            for (&p, c) in lane.positions.iter().zip(list) {
                self.list[p] = c;
            }
            if lane.digests.is_empty() {
                lane.digests.push(before);
            }
            lane.digests.push(after);
            lane.links.push(ChainLink {
                shuffler: from,
                key,
                signature,
            });
            lane.stage += 1;
            self.chain.push(from);
        }
        for l in &mut self.lanes {
            l.current = None;
        }
        self.request_shuffle(now)
    }
}
