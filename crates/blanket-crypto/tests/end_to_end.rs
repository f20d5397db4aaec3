//! The building blocks composed as in the amortized shuffler (spec 05):
//! registered channel keys, a DKG whose private shares travel sealed through
//! the relay (one member drops out before dealing, one after), clients
//! encrypt with a proof of knowledge of their randomness and the relay
//! checks the submissions, a chain of shufflers each proving its shuffle
//! (one cheater is caught and replaced), and t of c members decrypt.

use blanket_crypto::channel::{Channel, SealedMessage};
use blanket_crypto::dkg::{self, Dealer, Dealing, DkgParams, SecretShare};
use blanket_crypto::elgamal::{
    decode_ciphertexts, encode_ciphertexts, Ciphertext, Keypair, PublicKey,
};
use blanket_crypto::shuffle::{self, Generators, ShuffleError, ShuffleProof};
use blanket_crypto::submission::{encrypt_with_proof, verify_submissions, SubmissionContext};
use blanket_crypto::threshold::PartialDecryption;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

#[test]
fn amortized_shuffler_end_to_end() {
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    let c = 5u32;
    // 3-of-5 tolerates one malicious member and one dropout.
    let params = DkgParams::for_adversary(c, 2, 0, b"e2e run 1, committee 1..5").unwrap();
    assert_eq!(params.threshold, 3);
    DkgParams::new(c, 3, b"e2e run 1, committee 1..5")
        .unwrap()
        .check_adversary(1, 1)
        .unwrap();
    // Registered channel keys (directory relayed by the server).
    let channel_keys: Vec<Keypair> = (0..=c).map(|_| Keypair::generate(&mut rng)).collect();
    let directory: Vec<[u8; 32]> = channel_keys.iter().map(|k| k.public.to_bytes()).collect();
    let mut chan_rng = ChaCha20Rng::seed_from_u64(7);
    let mut chan = |me: u32, peer: u32| {
        Channel::establish(
            me,
            &channel_keys[me as usize],
            peer,
            &PublicKey::from_bytes(&directory[peer as usize]).unwrap(),
            &mut chan_rng,
        )
        .unwrap()
    };

    // Round 1: members 1, 2, 3, 5 deal (4 has dropped out). Dealings are
    // broadcast in the clear; shares are sealed per recipient.
    let dealers: Vec<Dealer> = [1u32, 2, 3, 5]
        .iter()
        .map(|&i| Dealer::new(params, i, &mut rng).unwrap())
        .collect();
    let board: Vec<Vec<u8>> = dealers.iter().map(|d| d.dealing().to_bytes()).collect();
    let mut relay: Vec<Vec<u8>> = Vec::new();
    for d in &dealers {
        let j = d.dealing().dealer;
        for i in (1..=c).filter(|&i| i != j) {
            let s = d.share_for(i).unwrap();
            relay.push(chan(j, i).seal(1, &s.to_bytes()[..]).unwrap().to_bytes());
        }
    }
    let dealings: Vec<Dealing> = board
        .iter()
        .map(|b| Dealing::from_bytes(b).unwrap())
        .collect();
    let gk = dkg::group_key(&params, &dealings).unwrap();

    // Each present member opens its sealed shares and builds its key share.
    let mut key_shares = Vec::new();
    for me in [1u32, 2, 3, 5] {
        let mut mine: Vec<SecretShare> = relay
            .iter()
            .map(|b| SealedMessage::from_bytes(b).unwrap())
            .filter(|m| m.receiver == me)
            .map(|m| {
                let pt = chan(me, m.sender).open(&m).unwrap();
                let s = SecretShare::from_bytes(&pt).unwrap();
                dkg::verify_share(
                    &params,
                    &dealings[dealings.iter().position(|d| d.dealer == m.sender).unwrap()],
                    &s,
                )
                .unwrap();
                s
            })
            .collect();
        let own = dealers.iter().find(|d| d.dealing().dealer == me).unwrap();
        mine.push(own.share_for(me).unwrap());
        key_shares.push(dkg::key_share(&params, me, &dealings, &mine).unwrap());
    }

    // Clients encrypt with a proof of knowledge of their randomness; the
    // relay checks the submissions before the first shuffle.
    let pk = *gk.public_key();
    let ctx = SubmissionContext {
        run: b"e2e run 1",
        task: b"sum",
    };
    let msgs: Vec<u64> = (0..24u64).map(|i| (i * 2_654_435_761) % 100_000).collect();
    let batch: Vec<(u32, Vec<u8>)> = msgs
        .iter()
        .zip(100u32..)
        .map(|(&m, id)| {
            let s = encrypt_with_proof(&pk, m, id, &ctx, &mut rng).unwrap();
            (id, s.to_bytes().to_vec())
        })
        .collect();
    let (accepted, refused) = verify_submissions(&pk, &ctx, &batch);
    assert!(refused.is_empty());
    let mut list: Vec<Ciphertext> = accepted.ciphertexts();
    let gens = Generators::new(list.len());

    // A chain of 3 shufflers; the second one cheats (swaps in its own
    // ciphertext), is caught and replaced by a backup.
    for (pos, cheat) in [(0u8, false), (1, true), (1, false), (2, false)] {
        let ctx = [b's', pos];
        let (mut out, proof) =
            shuffle::shuffle_and_prove(&gens, &pk, &list, &ctx, &mut rng).unwrap();
        if cheat {
            out[0] = pk.encrypt(42, &mut rng).unwrap();
        }
        // Uploaded as bytes, checked by the server.
        let out = decode_ciphertexts(&encode_ciphertexts(&out)).unwrap();
        let proof = ShuffleProof::from_bytes(&proof.to_bytes()).unwrap();
        match shuffle::verify(&gens, &pk, &list, &out, &proof, &ctx) {
            Ok(()) => {
                assert!(!cheat);
                list = out;
            }
            Err(e) => {
                assert!(cheat);
                assert_eq!(e, ShuffleError::VerificationFailed);
            }
        }
    }

    // Member 2 drops out after the DKG; 1, 3, 5 decrypt.
    let partials: Vec<PartialDecryption> = key_shares
        .iter()
        .filter(|k| k.index() != 2)
        .map(|k| {
            PartialDecryption::from_bytes(&k.partial_decrypt(&list, b"dec", &mut rng).to_bytes())
                .unwrap()
        })
        .collect();
    let mut got: Vec<u64> = gk
        .decrypt_messages(&list, &partials, b"dec")
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    got.sort_unstable();
    let mut want = msgs;
    want.sort_unstable();
    assert_eq!(got, want);
}
