//! Malicious behaviours of simulated clients: each takes the honest reply
//! and changes it (the adversary knows everything the client knows).

use blanket_crypto::dkg::SecretShare;
use blanket_crypto::dleq::DleqProof;
use blanket_crypto::elgamal::G;
use blanket_crypto::schnorr::SchnorrProof;
use blanket_crypto::shuffle::AnyShuffleProof;
use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;

use crate::wire::{Envelope, Message};

/// What a malicious client does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Behaviour {
    /// Never answers in its role (indistinguishable from a dropout; listed
    /// as silent).
    Silent,
    /// Answers with random bytes of the honest reply's length.
    Garbage,
    /// Tampers the proof of whatever it sends (dealing's proof of
    /// knowledge, submission proof, shuffle proof, DLEQ proof) or the
    /// revealed share.
    BadProof,
    /// Replaces a ciphertext: a shuffled ciphertext by one of another
    /// plaintext, or its own submission by a mauled one.
    ReplaceCiphertext,
    /// Duplicates a ciphertext in its shuffle output, or submits one
    /// ciphertext twice.
    DuplicateCiphertext,
    /// Sends a wrong partial decryption (as key holder) or a wrong
    /// re-encryption (as row-committee member).
    WrongPartial,
    /// As dealer: corrupts one member's sealed share and, when accused,
    /// reveals a wrong share (disqualified by the complaint).
    BadShare,
    /// Sends two different messages in one round.
    Equivocate,
    /// Re-sends its previous reply (out of round) and its current one twice.
    Replay,
    /// As shuffler: proves its (correct) shuffle with the other proof
    /// system than the run's (Bayer-Groth in a Terelius-Wikstrom run and
    /// vice versa). The driver builds such a client with the other system;
    /// its shuffle responses are the deviation.
    WrongProofSystem,
}

/// The behaviours of `--malicious` mixes ([`Behaviour::WrongProofSystem`]
/// is exercised by its own tests and left out, so that the mixes of earlier
/// runs stay the same).
pub const ALL_BEHAVIOURS: [Behaviour; 9] = [
    Behaviour::Silent,
    Behaviour::Garbage,
    Behaviour::BadProof,
    Behaviour::ReplaceCiphertext,
    Behaviour::DuplicateCiphertext,
    Behaviour::WrongPartial,
    Behaviour::BadShare,
    Behaviour::Equivocate,
    Behaviour::Replay,
];

fn flip_scalar(bytes: &mut [u8], at: usize) {
    if let Some(b) = bytes.get_mut(at) {
        *b ^= 1;
    }
}

fn bad_schnorr(p: &SchnorrProof) -> SchnorrProof {
    let mut b = p.to_bytes();
    flip_scalar(&mut b, 32);
    SchnorrProof::from_bytes(&b).unwrap_or(*p)
}

/// The message with its proof (or revealed share) tampered; `None` if the
/// message has nothing to tamper.
fn tamper_proof(m: &Message) -> Option<Message> {
    let mut m = m.clone();
    match &mut m {
        Message::DkgDeal { dealing, .. } => dealing.proof = bad_schnorr(&dealing.proof),
        Message::Submit { submissions } => {
            let s = submissions.first_mut()?;
            s.proof = bad_schnorr(&s.proof);
        }
        Message::ShuffleResponse { proof, .. } => {
            let mut b = proof.to_bytes();
            let at = b.len().checked_sub(32)?;
            flip_scalar(&mut b, at);
            *proof = AnyShuffleProof::from_bytes(&b).ok()?;
        }
        Message::DecryptResponse { partial } => {
            let mut b = partial.proof.to_bytes();
            flip_scalar(&mut b, 32);
            partial.proof = DleqProof::from_bytes(&b).ok()?;
        }
        Message::LaneDecryptResponse { partials } => {
            let (_, partial) = partials.first_mut()?;
            let mut b = partial.proof.to_bytes();
            flip_scalar(&mut b, 32);
            partial.proof = DleqProof::from_bytes(&b).ok()?;
        }
        Message::ReencryptResponse { partials } => {
            let (_, partial) = partials.first_mut()?;
            partial.proof.s_x += Scalar::ONE;
        }
        Message::DkgReveal { shares } => {
            let s = shares.first_mut()?;
            let mut b = s.to_bytes();
            flip_scalar(b.as_mut(), 8);
            *s = SecretShare::from_bytes(b.as_ref()).ok()?;
        }
        _ => return None,
    }
    Some(m)
}

fn replace_ciphertext(m: &Message) -> Option<Message> {
    let mut m = m.clone();
    match &mut m {
        Message::ShuffleResponse { list, .. } => list.first_mut()?.c2 += G,
        Message::Submit { submissions } => submissions.first_mut()?.ciphertext.c2 += G,
        _ => return None,
    }
    Some(m)
}

fn duplicate_ciphertext(m: &Message) -> Option<Message> {
    let mut m = m.clone();
    match &mut m {
        Message::ShuffleResponse { list, .. } if list.len() >= 2 => list[1] = list[0],
        Message::Submit { submissions } => {
            let first = *submissions.first()?;
            submissions.push(first);
        }
        _ => return None,
    }
    Some(m)
}

fn wrong_partial(m: &Message) -> Option<Message> {
    let mut m = m.clone();
    match &mut m {
        Message::DecryptResponse { partial } => *partial.shares.first_mut()? += G,
        Message::LaneDecryptResponse { partials } => {
            *partials.first_mut()?.1.shares.first_mut()? += G
        }
        // A re-encryption to a wrong ciphertext: B_1 moved by G.
        Message::ReencryptResponse { partials } => {
            partials.first_mut()?.1.shares.first_mut()?.b += G
        }
        _ => return None,
    }
    Some(m)
}

fn bad_share(m: &Message) -> Option<Message> {
    let mut m = m.clone();
    match &mut m {
        Message::DkgDeal { shares, .. } => {
            let s = shares.first_mut()?;
            *s.ciphertext.first_mut()? ^= 1;
        }
        Message::DkgReveal { .. } => return tamper_proof(&m),
        _ => return None,
    }
    Some(m)
}

fn alternative(m: &Message) -> Option<Message> {
    if let Some(t) = tamper_proof(m) {
        return Some(t);
    }
    let mut m = m.clone();
    match &mut m {
        Message::DkgComplaints { dealers, .. } => dealers.push(0),
        _ => return None,
    }
    Some(m)
}

impl Behaviour {
    /// The messages actually sent instead of `honest`, and whether they
    /// deviate from it.
    pub(crate) fn apply(
        self,
        honest: &[u8],
        previous: Option<&[u8]>,
        rng: &mut ChaCha20Rng,
    ) -> (Vec<Vec<u8>>, bool) {
        let keep = (vec![honest.to_vec()], false);
        let Ok(env) = Envelope::from_bytes(honest) else {
            return keep;
        };
        let rewrap = |m: Message| {
            Envelope {
                message: m,
                ..env.clone()
            }
            .to_bytes()
        };
        let changed = match self {
            Behaviour::Silent => return (Vec::new(), true),
            Behaviour::Garbage => {
                let mut g = vec![0u8; honest.len()];
                rng.fill_bytes(&mut g);
                return (vec![g], true);
            }
            Behaviour::Replay => {
                let mut v: Vec<Vec<u8>> = previous.map(|p| p.to_vec()).into_iter().collect();
                v.push(honest.to_vec());
                v.push(honest.to_vec());
                return (v, true);
            }
            Behaviour::WrongProofSystem => {
                let deviates = matches!(env.message, Message::ShuffleResponse { .. });
                return (vec![honest.to_vec()], deviates);
            }
            Behaviour::BadProof => tamper_proof(&env.message),
            Behaviour::ReplaceCiphertext => replace_ciphertext(&env.message),
            Behaviour::DuplicateCiphertext => duplicate_ciphertext(&env.message),
            Behaviour::WrongPartial => wrong_partial(&env.message),
            Behaviour::BadShare => bad_share(&env.message),
            Behaviour::Equivocate => {
                return match alternative(&env.message) {
                    Some(alt) => (vec![honest.to_vec(), rewrap(alt)], true),
                    None => keep,
                };
            }
        };
        match changed {
            Some(m) => (vec![rewrap(m)], true),
            None => keep,
        }
    }
}
