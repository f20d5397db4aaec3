//! Measurement of the shuffle proof's cost, of a client's submission and of
//! the DKG, shared by the criterion bench and `blanket bench crypto`.
//!
//! For a list of `n` fresh ciphertexts (fixed seed) it times, per ciphertext:
//! - *prove*: what a shuffler computes, `shuffle_and_prove` (re-randomize,
//!   permute, prove), from ciphertexts in memory to a proof in memory;
//! - *verify*: what the server computes, `ShuffleProof::from_bytes` (decoding
//!   and validating the 3N + 5 points and 2N + 4 scalars) plus `verify`;
//!
//! on a 1-thread rayon pool and on the global pool (all threads). Generator
//! derivation (`Generators::new`, a one-time setup per list length) is timed
//! separately and excluded from both. Each figure is the minimum over `reps`
//! runs.
//!
//! [`measure_client`]: one client's `encrypt_with_proof` (constant-time
//! message encoding, ElGamal encryption, Schnorr proof of knowledge of the
//! randomness) and the relay's `verify_submission`, in microseconds.
//!
//! [`measure_dkg`]: one committee member's whole DKG computation, one
//! thread: deal (polynomial, commitments, proof of knowledge of `a_0`, `c`
//! shares), then check everything received and derive the keys
//! (`group_key`, which verifies every dealer's proof, and `key_share`, which
//! verifies them again with the member's shares).
//!
//! [`measure_reencrypt`]: threshold re-encryption of a row of `n`
//! ciphertexts to `n` different target keys (`crate::reencrypt`), one
//! thread: one member's answer with its proof, the relay's check of one
//! answer, and the relay's combination of `t` answers (their checks
//! included).

use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::dkg::{self, Dealer, DkgError, DkgParams, SecretShare};
use crate::elgamal::{Ciphertext, Keypair};
use crate::encoding::{self, MessageError};
use crate::reencrypt::{self, ReencryptContext, ReencryptError};
use crate::shuffle::bayer_groth::{self as bg, BgProof, CommitmentKey};
pub use crate::shuffle::ProofSystem;
use crate::shuffle::{self, Generators, ShuffleError, ShuffleProof, ShuffleSetup};
use crate::submission::{self, SubmissionContext, SubmissionError};

/// Why a measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Shuffle(#[from] ShuffleError),
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("cannot build a 1-thread pool: {0}")]
    ThreadPool(#[from] rayon::ThreadPoolBuildError),
    #[error(transparent)]
    Dkg(#[from] DkgError),
    #[error(transparent)]
    Submission(#[from] SubmissionError),
    #[error(transparent)]
    Reencrypt(#[from] ReencryptError),
}

/// A client's submission cost.
#[derive(Clone, Debug)]
pub struct ClientBench {
    /// `encrypt_with_proof`, microseconds.
    pub encrypt_with_proof_us: f64,
    /// Of which the constant-time message encoding, microseconds.
    pub encode_us: f64,
    /// The relay's `verify_submission`, microseconds.
    pub verify_submission_us: f64,
}

/// Measure a client's submission (`count` submissions per figure, best of
/// `reps`), on the calling thread.
pub fn measure_client(count: usize, reps: usize) -> Result<ClientBench, BenchError> {
    let count = count.max(1);
    let mut rng = ChaCha20Rng::seed_from_u64(0x0000_636c_6965_6e74);
    let kp = Keypair::generate(&mut rng);
    let ctx = SubmissionContext {
        run: b"bench",
        task: b"bench",
    };
    let us_per = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / count as f64;
    let (mut enc, mut encode, mut ver) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        for m in 0..count as u64 {
            std::hint::black_box(encoding::encode_u64(m)?);
        }
        encode = encode.min(us_per(t));
        let t = Instant::now();
        let subs = (0..count as u64)
            .map(|m| submission::encrypt_with_proof(&kp.public, m, m as u32, &ctx, &mut rng))
            .collect::<Result<Vec<_>, _>>()?;
        enc = enc.min(us_per(t));
        let t = Instant::now();
        for s in &subs {
            submission::verify_submission(&kp.public, &ctx, s)?;
        }
        ver = ver.min(us_per(t));
    }
    Ok(ClientBench {
        encrypt_with_proof_us: enc,
        encode_us: encode,
        verify_submission_us: ver,
    })
}

/// One committee member's DKG cost.
#[derive(Clone, Debug)]
pub struct DkgBench {
    pub members: u32,
    pub threshold: u32,
    /// Deal: polynomial, commitments, proof of knowledge, `c` shares (ms).
    pub deal_ms: f64,
    /// Check all dealings and shares, derive group key and key share (ms).
    pub verify_ms: f64,
    /// `deal_ms + verify_ms`.
    pub ms_per_member: f64,
}

/// Measure one member's DKG computation for a `threshold`-of-`members`
/// committee (best of `reps`), on the calling thread.
pub fn measure_dkg(members: u32, threshold: u32, reps: usize) -> Result<DkgBench, BenchError> {
    let params = DkgParams::new(members, threshold, b"bench")?;
    let mut rng = ChaCha20Rng::seed_from_u64(0x0064_6b67);
    let (mut deal, mut verify) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reps.max(1) {
        // Every other member's dealing (not timed).
        let dealers: Vec<Dealer> = (2..=members)
            .map(|i| Dealer::new(params, i, &mut rng))
            .collect::<Result<_, _>>()?;
        let t = Instant::now();
        let me = Dealer::new(params, 1, &mut rng)?;
        let mine_out: Vec<SecretShare> = (1..=members)
            .map(|i| me.share_for(i))
            .collect::<Result<_, _>>()?;
        std::hint::black_box((me.dealing().to_bytes(), mine_out.len()));
        deal = deal.min(t.elapsed().as_secs_f64() * 1e3);
        let mut dealings = vec![me.dealing()];
        dealings.extend(dealers.iter().map(Dealer::dealing));
        let mut received = vec![me.share_for(1)?];
        for d in &dealers {
            received.push(d.share_for(1)?);
        }
        let t = Instant::now();
        let gk = dkg::group_key(&params, &dealings)?;
        let ks = dkg::key_share(&params, 1, &dealings, &received)?;
        std::hint::black_box((gk, ks));
        verify = verify.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(DkgBench {
        members,
        threshold,
        deal_ms: deal,
        verify_ms: verify,
        ms_per_member: deal + verify,
    })
}

/// Threshold re-encryption cost for one row (milliseconds, one thread).
#[derive(Clone, Debug)]
pub struct ReencryptBench {
    pub n: usize,
    pub members: u32,
    pub threshold: u32,
    /// One member: shares and proof.
    pub prove_ms: f64,
    /// The relay: one member's answer.
    pub verify_ms: f64,
    /// The relay: check `t` answers and combine them.
    pub combine_ms: f64,
}

/// Measure the re-encryption of `n` ciphertexts by a `members`-member,
/// threshold-`threshold` committee (best of `reps`, on a 1-thread pool).
pub fn measure_reencrypt(
    members: u32,
    threshold: u32,
    n: usize,
    reps: usize,
) -> Result<ReencryptBench, BenchError> {
    let params = DkgParams::new(members, threshold, b"bench reencrypt")?;
    let mut rng = ChaCha20Rng::seed_from_u64(0x0072_6565_6e63);
    let dealers: Vec<Dealer> = (1..=members)
        .map(|i| Dealer::new(params, i, &mut rng))
        .collect::<Result<_, _>>()?;
    let dealings: Vec<_> = dealers.iter().map(Dealer::dealing).collect();
    let gk = dkg::group_key(&params, &dealings)?;
    let shares = (1..=threshold)
        .map(|i| {
            let mine = dealers
                .iter()
                .map(|d| d.share_for(i))
                .collect::<Result<Vec<_>, _>>()?;
            dkg::key_share(&params, i, &dealings, &mine)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cts = (0..n as u64)
        .map(|m| gk.public_key().encrypt(m, &mut rng))
        .collect::<Result<Vec<_>, _>>()?;
    let targets: Vec<_> = (0..n).map(|_| Keypair::generate(&mut rng).public).collect();
    let ctx = ReencryptContext {
        run: b"bench",
        lane: 0,
    };
    let single = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let (mut prove, mut verify, mut combine) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..reps.max(1) {
        single.install(|| -> Result<(), BenchError> {
            let t = Instant::now();
            let first = reencrypt::reencrypt(&shares[0], &cts, &targets, &ctx, &mut rng)?;
            prove = prove.min(ms(t));
            let mut partials = vec![first];
            for s in &shares[1..] {
                partials.push(reencrypt::reencrypt(s, &cts, &targets, &ctx, &mut rng)?);
            }
            let t = Instant::now();
            reencrypt::verify_partial(&gk, &cts, &targets, &partials[0], &ctx)?;
            verify = verify.min(ms(t));
            let t = Instant::now();
            std::hint::black_box(reencrypt::combine(&gk, &cts, &targets, &partials, &ctx)?);
            combine = combine.min(ms(t));
            Ok(())
        })?;
    }
    Ok(ReencryptBench {
        n,
        members,
        threshold,
        prove_ms: prove,
        verify_ms: verify,
        combine_ms: combine,
    })
}

/// Figures for one list size.
#[derive(Clone, Debug)]
pub struct ShuffleBench {
    /// Number of ciphertexts.
    pub n: usize,
    /// Threads of the "all threads" pool.
    pub threads: usize,
    /// Shuffle + prove, ms per ciphertext, one thread.
    pub prove_ms_single: f64,
    /// Decode + verify, ms per ciphertext, one thread.
    pub verify_ms_single: f64,
    /// Shuffle + prove, ms per ciphertext, all threads.
    pub prove_ms_all: f64,
    /// Decode + verify, ms per ciphertext, all threads.
    pub verify_ms_all: f64,
    /// Of the single-thread prove time: re-randomize and permute only.
    pub shuffle_only_ms_single: f64,
    /// Of the single-thread verify time: proof decoding only.
    pub decode_ms_single: f64,
    /// Generator derivation, ms per ciphertext, all threads (one-time setup).
    pub generators_ms_all: f64,
    /// Encoded proof size in bytes.
    pub proof_bytes: usize,
}

fn ms_per(start: Instant, n: usize) -> f64 {
    start.elapsed().as_secs_f64() * 1e3 / n as f64
}

struct Once {
    prove: f64,
    shuffle_only: f64,
    verify: f64,
    decode: f64,
    bytes: usize,
}

fn run_once(
    setup: &ShuffleSetup,
    kp: &Keypair,
    input: &[Ciphertext],
    rng: &mut ChaCha20Rng,
) -> Result<Once, ShuffleError> {
    let n = input.len();
    let t = Instant::now();
    let _ = shuffle::shuffle(&kp.public, input, &mut rng.clone());
    let shuffle_only = ms_per(t, n);
    match setup {
        ShuffleSetup::TereliusWikstrom(gens) => {
            let t = Instant::now();
            let (output, proof) =
                shuffle::shuffle_and_prove(gens, &kp.public, input, b"bench", rng)?;
            let prove = ms_per(t, n);
            let bytes = proof.to_bytes();
            let t = Instant::now();
            let decoded = ShuffleProof::from_bytes(&bytes)?;
            let decode = ms_per(t, n);
            shuffle::verify(gens, &kp.public, input, &output, &decoded, b"bench")?;
            let verify = ms_per(t, n);
            Ok(Once {
                prove,
                shuffle_only,
                verify,
                decode,
                bytes: bytes.len(),
            })
        }
        ShuffleSetup::BayerGroth(ck) => {
            let t = Instant::now();
            let (output, proof) = bg::shuffle_and_prove(ck, &kp.public, input, b"bench", rng)?;
            let prove = ms_per(t, n);
            let bytes = proof.to_bytes();
            let t = Instant::now();
            let decoded = BgProof::from_bytes(&bytes)?;
            let decode = ms_per(t, n);
            bg::verify(ck, &kp.public, input, &output, &decoded, b"bench")?;
            let verify = ms_per(t, n);
            Ok(Once {
                prove,
                shuffle_only,
                verify,
                decode,
                bytes: bytes.len(),
            })
        }
    }
}

/// Measure one list size (`reps` >= 1 repetitions per mode), Terelius-Wikstrom.
pub fn measure_shuffle(n: usize, reps: usize) -> Result<ShuffleBench, BenchError> {
    measure_shuffle_kind(ProofSystem::TereliusWikstrom, n, reps)
}

/// Measure one list size with the given proof (`reps` >= 1 repetitions per
/// mode).
pub fn measure_shuffle_kind(
    kind: ProofSystem,
    n: usize,
    reps: usize,
) -> Result<ShuffleBench, BenchError> {
    let reps = reps.max(1);
    let mut rng = ChaCha20Rng::seed_from_u64(0x0062_6c61_6e6b_6574);
    let kp = Keypair::generate(&mut rng);
    let t = Instant::now();
    let setup = match kind {
        ProofSystem::TereliusWikstrom => {
            ShuffleSetup::TereliusWikstrom(Box::new(Generators::new(n)))
        }
        ProofSystem::BayerGroth => ShuffleSetup::BayerGroth(CommitmentKey::for_len(n)?),
    };
    let generators_ms_all = ms_per(t, n);
    // Public benchmark messages: the variable-time encoder is fine here.
    let input: Vec<Ciphertext> = (0..n as u64)
        .map(|m| {
            Ok(kp
                .public
                .encrypt_point(&encoding::encode_u64_vartime(m)?, &mut rng))
        })
        .collect::<Result<_, MessageError>>()?;

    let single = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let best = |f: &mut dyn FnMut() -> Result<Once, ShuffleError>| -> Result<Once, BenchError> {
        let mut best: Option<Once> = None;
        for _ in 0..reps {
            let o = f()?;
            best = Some(match best {
                None => o,
                Some(b) => Once {
                    prove: b.prove.min(o.prove),
                    shuffle_only: b.shuffle_only.min(o.shuffle_only),
                    verify: b.verify.min(o.verify),
                    decode: b.decode.min(o.decode),
                    bytes: o.bytes,
                },
            });
        }
        best.ok_or(BenchError::Shuffle(ShuffleError::Empty))
    };
    let s = best(&mut || single.install(|| run_once(&setup, &kp, &input, &mut rng.clone())))?;
    let a = best(&mut || run_once(&setup, &kp, &input, &mut rng.clone()))?;
    Ok(ShuffleBench {
        n,
        threads: rayon::current_num_threads(),
        prove_ms_single: s.prove,
        verify_ms_single: s.verify,
        prove_ms_all: a.prove,
        verify_ms_all: a.verify,
        shuffle_only_ms_single: s.shuffle_only,
        decode_ms_single: s.decode,
        generators_ms_all,
        proof_bytes: s.bytes,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn measure_client_and_dkg() {
        let c = super::measure_client(2, 1).unwrap();
        // Shape only: timings are compared by `blanket bench`, never by a unit test.
        for t in [c.encode_us, c.encrypt_with_proof_us, c.verify_submission_us] {
            assert!(t.is_finite() && t > 0.0, "{t}");
        }
        let d = super::measure_dkg(4, 2, 1).unwrap();
        assert!(d.ms_per_member > 0.0 && d.members == 4);
        let r = super::measure_reencrypt(4, 2, 3, 1).unwrap();
        assert!(r.prove_ms > 0.0 && r.verify_ms > 0.0 && r.combine_ms > 0.0);
    }

    /// The figures quoted in `docs/protocol.md` (per-lane key committees):
    /// `cargo test -p blanket-crypto --lib bench::tests::reencrypt_row_figures
    /// -- --ignored --nocapture`. Prints only; timings are never asserted.
    #[test]
    #[ignore = "measurement, prints timings"]
    fn reencrypt_row_figures() {
        let r = super::measure_reencrypt(35, 20, 100, 5).unwrap();
        println!("{r:?}");
    }

    #[test]
    fn measure_small() {
        let b = super::measure_shuffle(8, 2).unwrap();
        assert_eq!(b.n, 8);
        assert_eq!(b.proof_bytes, 160 * 8 + 292);
        assert!(b.prove_ms_single > 0.0 && b.verify_ms_all > 0.0);
        assert!(b.threads >= 1);
        let g = super::measure_shuffle_kind(super::ProofSystem::BayerGroth, 8, 1).unwrap();
        assert_eq!(
            Some(g.proof_bytes),
            crate::shuffle::bayer_groth::BgProof::encoded_len(8)
        );
        assert!(g.prove_ms_single > 0.0 && g.verify_ms_single > 0.0);
    }
}
