//! The per-lane key committee pipeline end to end at the crypto level (no
//! relay, no wire): `docs/protocol.md`, "Per-lane key committees and
//! threshold re-encryption". An h x w grid; every row and every column has
//! its own 2-of-3 committee (one member of each absent after the DKG);
//! clients encrypt under their row's key; each row is shuffled (proof
//! checked) under its key; the row committee re-encrypts position j to
//! column j's key (proofs checked, combined from 2 answers); each column is
//! shuffled under its key and decrypted by its committee. The output
//! multiset equals the input multiset, and every intermediate list is
//! under the lane key that the next step expects.

use blanket_crypto::dkg::{self, Dealer, Dealing, DkgParams, SecretShare};
use blanket_crypto::elgamal::Ciphertext;
use blanket_crypto::reencrypt::{self, ReencryptContext, ReencryptionPartial};
use blanket_crypto::shuffle::{self, Generators};
use blanket_crypto::threshold::{GroupKey, KeyShare, PartialDecryption};
use blanket_crypto::PublicKey;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

const RUN: &[u8] = b"lane-pipeline run";

/// A 2-of-3 committee; the key shares of members 1 and 3 (member 2 is
/// gone after the DKG).
fn committee(name: &str, rng: &mut ChaCha20Rng) -> (GroupKey, Vec<KeyShare>) {
    let p = DkgParams::new(3, 2, name.as_bytes()).unwrap();
    let dealers: Vec<Dealer> = (1..=3).map(|i| Dealer::new(p, i, rng).unwrap()).collect();
    let dealings: Vec<Dealing> = dealers.iter().map(Dealer::dealing).collect();
    let gk = dkg::group_key(&p, &dealings).unwrap();
    let shares = [1u32, 3]
        .iter()
        .map(|&i| {
            let mine: Vec<SecretShare> = dealers.iter().map(|d| d.share_for(i).unwrap()).collect();
            dkg::key_share(&p, i, &dealings, &mine).unwrap()
        })
        .collect();
    (gk, shares)
}

#[test]
fn reencrypt_rows_to_columns_then_columns_decrypt() {
    let mut rng = ChaCha20Rng::seed_from_u64(16);
    let (h, w) = (3usize, 4usize);
    let rows: Vec<_> = (0..h)
        .map(|r| committee(&format!("row {r}"), &mut rng))
        .collect();
    let cols: Vec<_> = (0..w)
        .map(|j| committee(&format!("column {j}"), &mut rng))
        .collect();
    let col_keys: Vec<PublicKey> = cols.iter().map(|(gk, _)| *gk.public_key()).collect();
    let inputs: Vec<u64> = (0..h * w).map(|_| rng.next_u64() >> 20).collect();

    // Submissions: client i sits in row i / w (a public placement).
    let mut grid: Vec<Vec<Ciphertext>> = (0..h)
        .map(|r| {
            (0..w)
                .map(|j| {
                    rows[r]
                        .0
                        .public_key()
                        .encrypt(inputs[r * w + j], &mut rng)
                        .unwrap()
                })
                .collect()
        })
        .collect();

    // Row chains (one honest shuffler per row here), proofs checked.
    let gens_w = Generators::new(w);
    for (r, row) in grid.iter_mut().enumerate() {
        let pk = rows[r].0.public_key();
        let ctx = format!("row {r} stage 0");
        let (out, proof) =
            shuffle::shuffle_and_prove(&gens_w, pk, row, ctx.as_bytes(), &mut rng).unwrap();
        shuffle::verify(&gens_w, pk, row, &out, &proof, ctx.as_bytes()).unwrap();
        *row = out;
    }

    // Re-encryption: position j of every row goes to column j.
    let mut columns: Vec<Vec<Ciphertext>> = vec![Vec::with_capacity(h); w];
    for (r, row) in grid.iter().enumerate() {
        let (gk, shares) = &rows[r];
        let ctx = ReencryptContext {
            run: RUN,
            lane: r as u32,
        };
        let answers: Vec<ReencryptionPartial> = shares
            .iter()
            .map(|s| reencrypt::reencrypt(s, row, &col_keys, &ctx, &mut rng).unwrap())
            .collect();
        let out = reencrypt::combine(gk, row, &col_keys, &answers, &ctx).unwrap();
        for (j, ct) in out.into_iter().enumerate() {
            columns[j].push(ct);
        }
    }

    // Column chains under the column keys, then per-column decryption.
    let gens_h = Generators::new(h);
    let mut output = Vec::new();
    for (j, column) in columns.iter().enumerate() {
        let (gk, shares) = &cols[j];
        let ctx = format!("column {j} stage 0");
        let (out, proof) =
            shuffle::shuffle_and_prove(&gens_h, gk.public_key(), column, ctx.as_bytes(), &mut rng)
                .unwrap();
        shuffle::verify(
            &gens_h,
            gk.public_key(),
            column,
            &out,
            &proof,
            ctx.as_bytes(),
        )
        .unwrap();
        let partials: Vec<PartialDecryption> = shares
            .iter()
            .map(|s| s.partial_decrypt(&out, b"decrypt", &mut rng))
            .collect();
        for m in gk.decrypt_messages(&out, &partials, b"decrypt").unwrap() {
            output.push(m.unwrap());
        }
        // The row keys do not decrypt a column (its messages are under pk_j only).
        let (row_gk, row_shares) = &rows[0];
        let wrong: Vec<PartialDecryption> = row_shares
            .iter()
            .map(|s| s.partial_decrypt(&out, b"decrypt", &mut rng))
            .collect();
        assert!(row_gk
            .decrypt_messages(&out, &wrong, b"decrypt")
            .unwrap()
            .iter()
            .all(|m| m.as_ref().map_or(true, |v| !inputs.contains(v))));
    }
    let mut want = inputs.clone();
    want.sort_unstable();
    output.sort_unstable();
    assert_eq!(output, want);
}
