use super::*;
use crate::elgamal::{Ciphertext, Keypair};
use crate::shuffle::{shuffle as rerandomize_and_permute, ShuffleWitness};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const CTX: &[u8] = b"test/session-1/round-3";

fn setup(n: usize, seed: u64) -> (ChaCha20Rng, Keypair, CommitmentKey, Vec<u64>, Vec<Ciphertext>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = Keypair::generate(&mut rng);
    let ck = CommitmentKey::for_len(n).unwrap();
    let msgs: Vec<u64> = (0..n as u64).map(|i| i * 1_000_003 + 17).collect();
    let cts = msgs
        .iter()
        .map(|&m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    (rng, kp, ck, msgs, cts)
}

#[test]
fn honest_shuffles_verify() {
    for n in [1usize, 2, 3, 5, 8, 9, 17, 33, 64, 100] {
        let (mut rng, kp, ck, msgs, input) = setup(n, n as u64);
        let (output, proof) = shuffle_and_prove(&ck, &kp.public, &input, CTX, &mut rng).unwrap();
        let mut dec: Vec<u64> = output.iter().map(|c| kp.secret.decrypt(c).unwrap()).collect();
        dec.sort_unstable();
        assert_eq!(dec, msgs);
        verify(&ck, &kp.public, &input, &output, &proof, CTX).unwrap();
        let bytes = proof.to_bytes();
        assert_eq!(Some(bytes.len()), BgProof::encoded_len(n));
        let back = BgProof::from_bytes(&bytes).unwrap();
        assert_eq!(back, proof);
        verify(&ck, &kp.public, &input, &output, &back, CTX).unwrap();
    }
}
