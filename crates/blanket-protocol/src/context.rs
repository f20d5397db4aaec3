//! Context strings bound into every proof of a run, so that no proof is
//! valid in another run, stage or role (`docs/protocol.md`, "Bindings").

use blanket_crypto::shuffle::ProofSystem;

use crate::wire::RunId;

const DKG: &[u8] = b"blanket/protocol/v1/dkg";
const TASK: &[u8] = b"blanket/protocol/v1/submit";
const SHUFFLE: &[u8] = b"blanket/protocol/v1/shuffle";
const DECRYPT: &[u8] = b"blanket/protocol/v1/decrypt";

/// The DKG session: run and the committee's client ids in member order.
pub fn dkg(run: &RunId, members: &[u32]) -> Vec<u8> {
    let mut v = DKG.to_vec();
    v.extend_from_slice(run);
    for m in members {
        v.extend_from_slice(&m.to_le_bytes());
    }
    v
}

/// The task of a client's `index`-th message (its proof of knowledge binds
/// run, task, client id, key and `c2`).
pub fn task(index: u32) -> Vec<u8> {
    let mut v = TASK.to_vec();
    v.extend_from_slice(&index.to_le_bytes());
    v
}

/// The shuffle proof of chain `stage` by client `shuffler`, in `lane`
/// (0 for the amortized chain; row or column lanes in the alternating
/// variant), made with the run's proof system `proof` (its name, `tw` or
/// `bg`, is bound too, so a proof is valid only as the system the run
/// fixed).
pub fn shuffle(run: &RunId, proof: ProofSystem, lane: u32, stage: u32, shuffler: u32) -> Vec<u8> {
    let mut v = SHUFFLE.to_vec();
    v.extend_from_slice(run);
    v.extend_from_slice(proof.name().as_bytes());
    v.extend_from_slice(&lane.to_le_bytes());
    v.extend_from_slice(&stage.to_le_bytes());
    v.extend_from_slice(&shuffler.to_le_bytes());
    v
}

/// The partial decryptions of the final list.
pub fn decrypt(run: &RunId) -> Vec<u8> {
    let mut v = DECRYPT.to_vec();
    v.extend_from_slice(run);
    v
}

/// The partial decryptions of one column lane (per-lane key committees).
pub fn decrypt_lane(run: &RunId, lane: u32) -> Vec<u8> {
    let mut v = decrypt(run);
    v.extend_from_slice(b"/lane");
    v.extend_from_slice(&lane.to_le_bytes());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_context_binds_the_proof_system() {
        let run = [7u8; 16];
        let tw = shuffle(&run, ProofSystem::TereliusWikstrom, 0, 1, 2);
        let bg = shuffle(&run, ProofSystem::BayerGroth, 0, 1, 2);
        assert_ne!(tw, bg);
        // Fixed-width fields: the name sits right after the run id.
        assert_eq!(&bg[SHUFFLE.len() + 16..SHUFFLE.len() + 18], b"bg");
        assert_eq!(tw.len(), bg.len());
    }
}
