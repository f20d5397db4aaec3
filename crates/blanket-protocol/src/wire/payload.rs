//! The payload codec of every [`Message`] kind: the bytes after an envelope's header
//! (`docs/protocol.md`, "Wire format"). Split from `wire.rs`, which holds the message types
//! and the envelope.

use super::*;

const SEALED_MIN: usize = blanket_crypto::channel::HEADER_BYTES + 16;

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::DkgStart => "dkg-start",
        Kind::DkgDeal => "dkg-deal",
        Kind::DkgShares => "dkg-shares",
        Kind::DkgComplaints => "dkg-complaints",
        Kind::DkgRevealRequest => "dkg-reveal-request",
        Kind::DkgReveal => "dkg-reveal",
        Kind::KeyAnnounce => "key-announce",
        Kind::Submit => "submit",
        Kind::ShuffleRequest => "shuffle-request",
        Kind::ShuffleResponse => "shuffle-response",
        Kind::DecryptRequest => "decrypt-request",
        Kind::DecryptResponse => "decrypt-response",
        Kind::LaneKeyAnnounce => "lane-key-announce",
        Kind::ReencryptRequest => "reencrypt-request",
        Kind::ReencryptResponse => "reencrypt-response",
        Kind::LaneDecryptRequest => "lane-decrypt-request",
        Kind::LaneDecryptResponse => "lane-decrypt-response",
    }
}

pub(super) fn encode_payload(m: &Message) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    match m {
        Message::DkgStart { threshold, members } => {
            w.u32(*threshold);
            w.count(members.len());
            for (id, pk) in members {
                w.u32(*id);
                w.bytes(&pk.to_bytes());
            }
        }
        Message::DkgDeal {
            dealing,
            attestation,
            shares,
        } => {
            w.prefixed(&dealing.to_bytes());
            w.bytes(&attestation.to_bytes());
            w.count(shares.len());
            for s in shares {
                w.prefixed(&s.to_bytes());
            }
        }
        Message::DkgShares { dealings, shares } => {
            w.count(dealings.len());
            for d in dealings {
                w.prefixed(&d.to_bytes());
            }
            w.count(shares.len());
            for s in shares {
                w.prefixed(&s.to_bytes());
            }
        }
        Message::DkgComplaints { dealers, signature } => {
            w.count(dealers.len());
            dealers.iter().for_each(|d| w.u32(*d));
            w.bytes(&signature.to_bytes());
        }
        Message::DkgRevealRequest { complaints } => {
            w.count(complaints.len());
            for c in complaints {
                w.u32(c.complainer);
                w.count(c.dealers.len());
                c.dealers.iter().for_each(|d| w.u32(*d));
                w.bytes(&c.signature.to_bytes());
            }
        }
        Message::DkgReveal { shares } => {
            w.count(shares.len());
            shares.iter().for_each(|s| w.bytes(s.to_bytes().as_ref()));
        }
        Message::KeyAnnounce {
            public_key,
            messages,
            qualified,
            revealed,
            evidence,
        } => {
            w.bytes(&public_key.to_bytes());
            w.u32(*messages);
            w.count(qualified.len());
            qualified.iter().for_each(|d| w.u32(*d));
            w.count(revealed.len());
            revealed.iter().for_each(|s| w.bytes(s.to_bytes().as_ref()));
            write_attestations(&mut w, evidence);
        }
        Message::Submit { submissions } => {
            w.count(submissions.len());
            submissions.iter().for_each(|s| w.bytes(&s.to_bytes()));
        }
        Message::ShuffleRequest { lane, stage, list } => {
            w.u32(*lane);
            w.u32(*stage);
            w.bytes(&encode_ciphertexts(list));
        }
        Message::ShuffleResponse {
            lane,
            stage,
            signature,
            list,
            proof,
        } => {
            w.u32(*lane);
            w.u32(*stage);
            w.bytes(&signature.to_bytes());
            w.prefixed(&encode_ciphertexts(list));
            w.bytes(&proof.to_bytes());
        }
        Message::DecryptRequest { c1, chains } => {
            w.count(c1.len());
            c1.iter().for_each(|p| w.bytes(p.compress().as_bytes()));
            write_chains(&mut w, chains);
        }
        Message::DecryptResponse { partial } => {
            w.bytes(&partial.to_bytes());
        }
        Message::LaneKeyAnnounce {
            messages,
            slot_keys,
            lane_keys,
            served,
            qualified,
            revealed,
            evidence,
        } => {
            w.u32(*messages);
            w.count(slot_keys.len());
            slot_keys.iter().for_each(|k| w.bytes(&k.to_bytes()));
            w.count(lane_keys.len());
            for (lane, k) in lane_keys {
                w.u32(*lane);
                w.bytes(&k.to_bytes());
            }
            w.count(served.len());
            served.iter().for_each(|l| w.u32(*l));
            w.count(qualified.len());
            qualified.iter().for_each(|d| w.u32(*d));
            w.count(revealed.len());
            revealed.iter().for_each(|s| w.bytes(s.to_bytes().as_ref()));
            w.count(evidence.len());
            evidence.iter().for_each(|e| write_attestations(&mut w, e));
        }
        Message::ReencryptRequest { lanes, chains }
        | Message::LaneDecryptRequest { lanes, chains } => {
            w.count(lanes.len());
            for (lane, c1) in lanes {
                w.u32(*lane);
                w.count(c1.len());
                c1.iter().for_each(|p| w.bytes(p.compress().as_bytes()));
            }
            write_chains(&mut w, chains);
        }
        Message::ReencryptResponse { partials } => {
            w.count(partials.len());
            for (lane, p) in partials {
                w.u32(*lane);
                w.prefixed(&p.to_bytes());
            }
        }
        Message::LaneDecryptResponse { partials } => {
            w.count(partials.len());
            for (lane, p) in partials {
                w.u32(*lane);
                w.prefixed(&p.to_bytes());
            }
        }
    }
    w.0
}

fn decode_lane_c1s(r: &mut Reader<'_>) -> Result<Vec<(u32, Vec<RistrettoPoint>)>, WireError> {
    let n = r.count(MAX_LANES, 8)?;
    let mut lanes = Vec::with_capacity(n);
    for _ in 0..n {
        let lane = r.u32()?;
        let k = r.count(MAX_LIST_LEN, POINT_BYTES)?;
        let mut c1 = Vec::with_capacity(k);
        for i in 0..k {
            let (p, _) = crypto(r.what, decode_point(r.take(POINT_BYTES)?, r.what, i))?;
            c1.push(p);
        }
        lanes.push((lane, c1));
    }
    Ok(lanes)
}

fn signature(r: &mut Reader<'_>) -> Result<SchnorrProof, WireError> {
    crypto(
        r.what,
        SchnorrProof::from_bytes(r.take(SCHNORR_PROOF_BYTES)?),
    )
}

fn write_attestations(w: &mut Writer, evidence: &[Attestation]) {
    w.count(evidence.len());
    for a in evidence {
        w.u32(a.client);
        w.bytes(&a.key.to_bytes());
        w.bytes(a.a0.compress().as_bytes());
        w.bytes(&a.proof.to_bytes());
    }
}

fn write_chains(w: &mut Writer, chains: &[LaneChain]) {
    w.count(chains.len());
    for c in chains {
        w.u32(c.lane);
        w.u32(c.len);
        w.bytes(&c.c2_digest);
        w.count(c.digests.len());
        c.digests.iter().for_each(|d| w.bytes(d));
        w.count(c.links.len());
        for l in &c.links {
            w.u32(l.shuffler);
            w.bytes(&l.key.to_bytes());
            w.bytes(&l.signature.to_bytes());
        }
    }
}

fn read_chains(r: &mut Reader<'_>) -> Result<Vec<LaneChain>, WireError> {
    let n = r.count(MAX_LANES, 48)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let lane = r.u32()?;
        let len = r.u32()?;
        let mut c2_digest = [0u8; 32];
        c2_digest.copy_from_slice(r.take(32)?);
        let k = r.count(MAX_CHAIN + 1, 32)?;
        let mut digests = Vec::with_capacity(k);
        for _ in 0..k {
            let mut d = [0u8; 32];
            d.copy_from_slice(r.take(32)?);
            digests.push(d);
        }
        let k = r.count(MAX_CHAIN, CHAIN_LINK_BYTES)?;
        let mut links = Vec::with_capacity(k);
        for _ in 0..k {
            let shuffler = r.u32()?;
            let key = crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?;
            let signature = signature(r)?;
            links.push(ChainLink {
                shuffler,
                key,
                signature,
            });
        }
        out.push(LaneChain {
            lane,
            len,
            c2_digest,
            digests,
            links,
        });
    }
    Ok(out)
}

fn read_attestations(r: &mut Reader<'_>) -> Result<Vec<Attestation>, WireError> {
    let n = r.count(MAX_COMMITTEE, ATTESTATION_BYTES)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let client = r.u32()?;
        let key = crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?;
        let (a0, _) = crypto(r.what, decode_point(r.take(POINT_BYTES)?, r.what, i))?;
        let proof = signature(r)?;
        out.push(Attestation {
            client,
            key,
            a0,
            proof,
        });
    }
    Ok(out)
}

pub(super) fn decode_payload(kind: Kind, payload: &[u8]) -> Result<Message, WireError> {
    let mut r = Reader::new(payload, kind_name(kind));
    let msg = match kind {
        Kind::DkgStart => {
            let threshold = r.u32()?;
            let n = r.count(MAX_COMMITTEE, 4 + POINT_BYTES)?;
            let mut members = Vec::with_capacity(n);
            for _ in 0..n {
                let id = r.u32()?;
                let pk = crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?;
                members.push((id, pk));
            }
            Message::DkgStart { threshold, members }
        }
        Kind::DkgDeal => {
            let dealing = crypto(r.what, Dealing::from_bytes(r.prefixed()?))?;
            let attestation = signature(&mut r)?;
            let n = r.count(MAX_COMMITTEE, 4 + SEALED_MIN)?;
            let mut shares = Vec::with_capacity(n);
            for _ in 0..n {
                shares.push(crypto(r.what, SealedMessage::from_bytes(r.prefixed()?))?);
            }
            Message::DkgDeal {
                dealing,
                attestation,
                shares,
            }
        }
        Kind::DkgShares => {
            let n = r.count(MAX_COMMITTEE, 4)?;
            let mut dealings = Vec::with_capacity(n);
            for _ in 0..n {
                dealings.push(crypto(r.what, Dealing::from_bytes(r.prefixed()?))?);
            }
            let n = r.count(MAX_COMMITTEE, 4 + SEALED_MIN)?;
            let mut shares = Vec::with_capacity(n);
            for _ in 0..n {
                shares.push(crypto(r.what, SealedMessage::from_bytes(r.prefixed()?))?);
            }
            Message::DkgShares { dealings, shares }
        }
        Kind::DkgComplaints => {
            let n = r.count(MAX_COMMITTEE, 4)?;
            let dealers = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
            let signature = signature(&mut r)?;
            Message::DkgComplaints { dealers, signature }
        }
        Kind::DkgRevealRequest => {
            let n = r.count(MAX_COMMITTEE, 8 + SCHNORR_PROOF_BYTES)?;
            let mut complaints = Vec::with_capacity(n);
            for _ in 0..n {
                let complainer = r.u32()?;
                let k = r.count(MAX_COMMITTEE, 4)?;
                let dealers = (0..k).map(|_| r.u32()).collect::<Result<_, _>>()?;
                let signature = signature(&mut r)?;
                complaints.push(SignedComplaint {
                    complainer,
                    dealers,
                    signature,
                });
            }
            Message::DkgRevealRequest { complaints }
        }
        Kind::DkgReveal => {
            let n = r.count(MAX_COMMITTEE, SECRET_SHARE_BYTES)?;
            let mut shares = Vec::with_capacity(n);
            for _ in 0..n {
                shares.push(crypto(
                    r.what,
                    SecretShare::from_bytes(r.take(SECRET_SHARE_BYTES)?),
                )?);
            }
            Message::DkgReveal { shares }
        }
        Kind::KeyAnnounce => {
            let public_key = crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?;
            let messages = r.u32()?;
            if messages == 0 || messages as usize > MAX_MESSAGES_PER_CLIENT {
                return Err(WireError::CountOutOfRange {
                    what: "key-announce messages",
                    count: messages as usize,
                    max: MAX_MESSAGES_PER_CLIENT,
                });
            }
            let n = r.count(MAX_COMMITTEE, 4)?;
            let qualified = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
            let n = r.count(MAX_COMMITTEE, SECRET_SHARE_BYTES)?;
            let mut revealed = Vec::with_capacity(n);
            for _ in 0..n {
                revealed.push(crypto(
                    r.what,
                    SecretShare::from_bytes(r.take(SECRET_SHARE_BYTES)?),
                )?);
            }
            let evidence = read_attestations(&mut r)?;
            Message::KeyAnnounce {
                public_key,
                messages,
                qualified,
                revealed,
                evidence,
            }
        }
        Kind::Submit => {
            let n = r.count(MAX_MESSAGES_PER_CLIENT, SUBMISSION_BYTES)?;
            let mut submissions = Vec::with_capacity(n);
            for _ in 0..n {
                submissions.push(crypto(
                    r.what,
                    ClientSubmission::from_bytes(r.take(SUBMISSION_BYTES)?),
                )?);
            }
            Message::Submit { submissions }
        }
        Kind::ShuffleRequest => {
            let lane = r.u32()?;
            let stage = r.u32()?;
            let list = crypto(r.what, decode_ciphertexts(r.rest()))?;
            Message::ShuffleRequest { lane, stage, list }
        }
        Kind::ShuffleResponse => {
            let lane = r.u32()?;
            let stage = r.u32()?;
            let signature = signature(&mut r)?;
            let list = crypto(r.what, decode_ciphertexts(r.prefixed()?))?;
            let proof = crypto(r.what, AnyShuffleProof::from_bytes(r.rest()))?;
            let proof_len = match &proof {
                AnyShuffleProof::TereliusWikstrom(p) => p.len(),
                AnyShuffleProof::BayerGroth(p) => p.len(),
            };
            if proof_len != list.len() {
                return Err(WireError::WrongLength {
                    what: "shuffle-response proof",
                    expected: list.len(),
                    got: proof_len,
                });
            }
            Message::ShuffleResponse {
                lane,
                stage,
                signature,
                list,
                proof,
            }
        }
        Kind::DecryptRequest => {
            let n = r.count(MAX_LIST_LEN, POINT_BYTES)?;
            let mut c1 = Vec::with_capacity(n);
            for i in 0..n {
                let (p, _) = crypto(
                    r.what,
                    decode_point(r.take(POINT_BYTES)?, "decrypt-request", i),
                )?;
                c1.push(p);
            }
            let chains = read_chains(&mut r)?;
            Message::DecryptRequest { c1, chains }
        }
        Kind::DecryptResponse => {
            let partial = crypto(r.what, PartialDecryption::from_bytes(r.rest()))?;
            Message::DecryptResponse { partial }
        }
        Kind::LaneKeyAnnounce => {
            let messages = r.u32()?;
            if messages == 0 || messages as usize > MAX_MESSAGES_PER_CLIENT {
                return Err(WireError::CountOutOfRange {
                    what: "lane-key-announce messages",
                    count: messages as usize,
                    max: MAX_MESSAGES_PER_CLIENT,
                });
            }
            let n = r.count(MAX_MESSAGES_PER_CLIENT, POINT_BYTES)?;
            let mut slot_keys = Vec::with_capacity(n);
            for _ in 0..n {
                slot_keys.push(crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?);
            }
            let n = r.count(MAX_LANES, 4 + POINT_BYTES)?;
            let mut lane_keys = Vec::with_capacity(n);
            for _ in 0..n {
                let lane = r.u32()?;
                let k = crypto(r.what, PublicKey::from_bytes(r.take(POINT_BYTES)?))?;
                lane_keys.push((lane, k));
            }
            let n = r.count(MAX_LANES, 4)?;
            let served = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
            let n = r.count(MAX_COMMITTEE, 4)?;
            let qualified = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
            let n = r.count(MAX_COMMITTEE, SECRET_SHARE_BYTES)?;
            let mut revealed = Vec::with_capacity(n);
            for _ in 0..n {
                revealed.push(crypto(
                    r.what,
                    SecretShare::from_bytes(r.take(SECRET_SHARE_BYTES)?),
                )?);
            }
            let n = r.count(MAX_MESSAGES_PER_CLIENT, 4)?;
            let evidence = (0..n)
                .map(|_| read_attestations(&mut r))
                .collect::<Result<_, _>>()?;
            Message::LaneKeyAnnounce {
                messages,
                slot_keys,
                lane_keys,
                served,
                qualified,
                revealed,
                evidence,
            }
        }
        Kind::ReencryptRequest => Message::ReencryptRequest {
            lanes: decode_lane_c1s(&mut r)?,
            chains: read_chains(&mut r)?,
        },
        Kind::LaneDecryptRequest => Message::LaneDecryptRequest {
            lanes: decode_lane_c1s(&mut r)?,
            chains: read_chains(&mut r)?,
        },
        Kind::ReencryptResponse => {
            let n = r.count(MAX_LANES, 8)?;
            let mut partials = Vec::with_capacity(n);
            for _ in 0..n {
                let lane = r.u32()?;
                let p = crypto(r.what, ReencryptionPartial::from_bytes(r.prefixed()?))?;
                partials.push((lane, p));
            }
            Message::ReencryptResponse { partials }
        }
        Kind::LaneDecryptResponse => {
            let n = r.count(MAX_LANES, 8)?;
            let mut partials = Vec::with_capacity(n);
            for _ in 0..n {
                let lane = r.u32()?;
                let p = crypto(r.what, PartialDecryption::from_bytes(r.prefixed()?))?;
                partials.push((lane, p));
            }
            Message::LaneDecryptResponse { partials }
        }
    };
    r.finish()?;
    Ok(msg)
}
