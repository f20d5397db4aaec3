//! Criterion benchmarks of the verifiable shuffle (Terelius-Wikstrom and
//! Bayer-Groth proofs) and threshold decryption
//! (`cargo bench -p blanket-crypto`). The headline figures at n = 10,000 come
//! from `blanket bench crypto`.

use blanket_crypto::dkg::{self, Dealer, DkgParams};
use blanket_crypto::elgamal::{Ciphertext, Keypair};
use blanket_crypto::shuffle::bayer_groth::{self, BgProof, CommitmentKey};
use blanket_crypto::shuffle::{self, Generators, ShuffleProof};
use blanket_crypto::submission::{encrypt_with_proof, verify_submission, SubmissionContext};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fn lists(n: usize) -> (ChaCha20Rng, Keypair, Generators, Vec<Ciphertext>) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let kp = Keypair::generate(&mut rng);
    let cts = (0..n as u64)
        .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
        .collect();
    (rng, kp, Generators::new(n), cts)
}

fn bench_shuffle(c: &mut Criterion) {
    let mut g = c.benchmark_group("shuffle");
    g.sample_size(10);
    for n in [100usize, 1000] {
        let (mut rng, kp, gens, input) = lists(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("shuffle_and_prove", n), &n, |b, _| {
            b.iter(|| {
                shuffle::shuffle_and_prove(&gens, &kp.public, &input, b"bench", &mut rng).unwrap()
            })
        });
        let (output, proof) =
            shuffle::shuffle_and_prove(&gens, &kp.public, &input, b"bench", &mut rng).unwrap();
        let bytes = proof.to_bytes();
        g.bench_with_input(BenchmarkId::new("decode_and_verify", n), &n, |b, _| {
            b.iter(|| {
                let p = ShuffleProof::from_bytes(&bytes).unwrap();
                shuffle::verify(&gens, &kp.public, &input, &output, &p, b"bench").unwrap()
            })
        });
        let ck = CommitmentKey::for_len(n).unwrap();
        g.bench_with_input(BenchmarkId::new("bg_shuffle_and_prove", n), &n, |b, _| {
            b.iter(|| {
                bayer_groth::shuffle_and_prove(&ck, &kp.public, &input, b"bench", &mut rng).unwrap()
            })
        });
        let (output, proof) =
            bayer_groth::shuffle_and_prove(&ck, &kp.public, &input, b"bench", &mut rng).unwrap();
        let bytes = proof.to_bytes();
        g.bench_with_input(BenchmarkId::new("bg_decode_and_verify", n), &n, |b, _| {
            b.iter(|| {
                let p = BgProof::from_bytes(&bytes).unwrap();
                bayer_groth::verify(&ck, &kp.public, &input, &output, &p, b"bench").unwrap()
            })
        });
    }
    g.finish();
}

fn bench_threshold(c: &mut Criterion) {
    let mut g = c.benchmark_group("threshold");
    g.sample_size(10);
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let params = DkgParams::new(5, 3, b"bench").unwrap();
    let dealers: Vec<Dealer> = (1..=5)
        .map(|i| Dealer::new(params, i, &mut rng).unwrap())
        .collect();
    let dealings: Vec<_> = dealers.iter().map(Dealer::dealing).collect();
    let gk = dkg::group_key(&params, &dealings).unwrap();
    let shares: Vec<_> = (1..=3u32)
        .map(|i| {
            let mine: Vec<_> = dealers.iter().map(|d| d.share_for(i).unwrap()).collect();
            dkg::key_share(&params, i, &dealings, &mine).unwrap()
        })
        .collect();
    let n = 1000;
    let cts: Vec<Ciphertext> = (0..n as u64)
        .map(|m| gk.public_key().encrypt(m, &mut rng).unwrap())
        .collect();
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("partial_decrypt_1000", |b| {
        b.iter(|| shares[0].partial_decrypt(&cts, b"b", &mut rng))
    });
    let partials: Vec<_> = shares
        .iter()
        .map(|s| s.partial_decrypt(&cts, b"b", &mut rng))
        .collect();
    g.bench_function("combine_3_of_5_1000", |b| {
        b.iter(|| gk.decrypt_messages(&cts, &partials, b"b").unwrap())
    });
    g.finish();
}

fn bench_client(c: &mut Criterion) {
    let mut g = c.benchmark_group("client");
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let kp = Keypair::generate(&mut rng);
    let ctx = SubmissionContext {
        run: b"bench",
        task: b"t",
    };
    g.bench_function("encrypt_with_proof", |b| {
        b.iter(|| encrypt_with_proof(&kp.public, 12_345, 1, &ctx, &mut rng).unwrap())
    });
    let s = encrypt_with_proof(&kp.public, 12_345, 1, &ctx, &mut rng).unwrap();
    g.bench_function("verify_submission", |b| {
        b.iter(|| verify_submission(&kp.public, &ctx, &s).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_shuffle, bench_threshold, bench_client);
criterion_main!(benches);
