//! Threshold re-encryption: a key committee turns ciphertexts under its joint
//! key into ciphertexts of the same messages under another public key,
//! without anybody learning the messages (blanket's design for per-lane key
//! committees, `docs/protocol.md`, "Per-lane key committees").
//!
//! Setting. A committee with joint key `pk = x·G` shared `t`-of-`c` by the
//! DKG ([`crate::dkg`]; member `i` holds `x_i`, everybody knows
//! `y_i = x_i·G`). For each ciphertext `(c1_k, c2_k)` under `pk` and its
//! target key `P_k`, member `i` draws a fresh nonzero `rho_{i,k}` and
//! publishes the *re-encryption share*
//!
//! `A_{i,k} = rho_{i,k}·G`, `B_{i,k} = -x_i·c1_k + rho_{i,k}·P_k`.
//!
//! For a set S of `t` members with valid shares and Lagrange coefficients
//! `lambda_i` at 0 ([`crate::threshold::lagrange_at_zero`]; `sum lambda_i x_i
//! = x`), the combination
//!
//! `c1'_k = sum lambda_i A_{i,k}`, `c2'_k = c2_k + sum lambda_i B_{i,k}`
//!
//! equals `(R·G, M_k + R·P_k)` with `R = sum lambda_i rho_{i,k}`: an ElGamal
//! encryption of the same `M_k` under `P_k` (since `c2_k - x·c1_k = M_k`).
//! The idea is the "decrypt under a mask" step of threshold proxy
//! re-encryption; blanket's construction and proof are its own.
//!
//! Proof (per member and list; Fiat-Shamir of a Schnorr-type sigma protocol
//! for a linear relation [Maurer, "Unifying Zero-Knowledge Proofs of
//! Knowledge", AFRICACRYPT 2009; Camenisch and Stadler 1997]): knowledge of
//! `(x_i, rho_{i,1..n})` with
//!
//! `y_i = x_i·G`, and for every k: `A_{i,k} = rho_{i,k}·G`,
//! `B_{i,k} = -x_i·c1_k + rho_{i,k}·P_k`.
//!
//! The prover picks nonces `u, a_1..a_n`, commits `T_y = u·G`,
//! `T_{A,k} = a_k·G`, `T_{B,k} = -u·c1_k + a_k·P_k`, derives the challenge
//! `e`, and answers `s_x = u + e·x_i`, `s_k = a_k + e·rho_{i,k}`. It sends
//! the compact form `(e, s_x, s_1..s_n)`; the verifier recomputes
//! `T_y = s_x·G - e·y_i`, `T_{A,k} = s_k·G - e·A_{i,k}`,
//! `T_{B,k} = -s_x·c1_k + s_k·P_k - e·B_{i,k}` and checks the challenge.
//! Special soundness: two accepting answers to one commitment with
//! `e != e'` give `x_i = (s_x - s_x') / (e - e')` and each `rho_{i,k}`
//! likewise, so every `B_{i,k}` has the stated form. One challenge covers
//! the whole list: the `x_i` part is shared, but each `rho_{i,k}` needs its
//! own response because the target keys `P_k` differ along a row (a random
//! linear combination would leave `sum z_k rho_k P_k`, not one unknown), so
//! a row of `n` ciphertexts costs `96 n + 64` bytes of shares and proof.
//!
//! The transcript (domain [`REENCRYPT_DOMAIN`]) binds the run, the lane,
//! the member index, `y_i`, the list length, every `c1_k`, every target key
//! `P_k`, every `A_{i,k}` and `B_{i,k}`, then the commitments; a partial
//! made for another run, lane, member, ciphertext or target key does not
//! verify.
//!
//! Privacy (argued in `docs/protocol.md`): `(A_{i,k}, B_{i,k})` is an
//! ElGamal encryption of `-x_i·c1_k` under `P_k` with randomness
//! `rho_{i,k}`, so whoever does not hold the secret key of `P_k` learns
//! nothing from it (DDH); the combination is a fresh encryption of `M_k`
//! under `P_k` as long as one honest member is in S (its `rho` makes `R`
//! uniform).
//!
//! Wire format (version 1): `u8 version | u32 member | u32 n |
//! n × (A || B) | e | s_x | n × s_k`, `9 + 96 n + 64` bytes. The decoder
//! rejects non-canonical points and scalars, identity `A` or `B`, counts
//! above [`MAX_LIST_LEN`] and lengths that do not match the count.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, MultiscalarMul, VartimeMultiscalarMul};
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use zeroize::Zeroize;

use crate::elgamal::{Ciphertext, PublicKey, MAX_LIST_LEN};
use crate::threshold::{lagrange_at_zero, GroupKey, KeyShare, ThresholdError};
use crate::transcript::{compress_all, compress_doubles, half, ProofTranscript};
use crate::wire::{DecodeError, Reader, POINT_BYTES, SCALAR_BYTES};

/// Domain separator of the re-encryption proof.
pub const REENCRYPT_DOMAIN: &[u8] = b"blanket/reencrypt/v1";

/// Wire version of [`ReencryptionPartial`].
pub const REENCRYPTION_VERSION: u8 = 1;

/// Bytes of one re-encryption share `(A, B)`.
pub const SHARE_BYTES: usize = 2 * POINT_BYTES;

const WHAT: &str = "re-encryption partial";

/// What a re-encryption partial is bound to besides its statement: the run
/// and the lane (e.g. the row whose output it re-encrypts).
#[derive(Clone, Copy, Debug)]
pub struct ReencryptContext<'a> {
    /// The run identifier (any bytes; hashed into the transcript).
    pub run: &'a [u8],
    /// The lane whose list is re-encrypted.
    pub lane: u32,
}

/// Errors of threshold re-encryption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReencryptError {
    /// The list of target keys does not match the list of ciphertexts.
    #[error("{got} target keys for {expected} ciphertexts")]
    TargetCount { got: usize, expected: usize },
    /// A ciphertext with `c1` the identity (a trivial encryption: its `c2`
    /// is the message, and a share would reveal nothing but not hide either).
    #[error("ciphertext {index} has c1 = identity")]
    IdentityC1 { index: usize },
    /// The member's shares do not match the list length.
    #[error("re-encryption partial of member {member} has {got} shares, list has {expected}")]
    LengthMismatch {
        member: u32,
        got: usize,
        expected: usize,
    },
    /// A share with `A` or `B` the identity (an `A = 0` share would publish
    /// `-x_i·c1` in the clear).
    #[error("re-encryption partial of member {member}: share {index} has an identity point")]
    IdentityShare { member: u32, index: usize },
    /// The proof does not verify.
    #[error("invalid re-encryption partial from member {member}")]
    InvalidProof { member: u32 },
    /// A member index not in the committee.
    #[error("unknown committee member {member}")]
    UnknownMember { member: u32 },
    /// Two partials from the same member.
    #[error("duplicate re-encryption partial from member {member}")]
    DuplicateMember { member: u32 },
    /// Fewer than t partials.
    #[error("need {need} re-encryption partials, have {have}")]
    NotEnoughPartials { have: usize, need: usize },
    /// The combination gave `c1' = 0` (only if the combined randomness is
    /// zero: never with an honest member in the set, except with
    /// probability 1/l).
    #[error("combined ciphertext {index} has c1 = identity")]
    IdentityResult { index: usize },
    /// Lagrange interpolation refused the member indices.
    #[error(transparent)]
    Threshold(#[from] ThresholdError),
}

/// One re-encryption share `(A, B) = (rho·G, -x_i·c1 + rho·P)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReencryptionShare {
    pub a: RistrettoPoint,
    pub b: RistrettoPoint,
}

/// The proof in compact form: challenge `e`, responses `s_x` and one `s_k`
/// per ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReencryptProof {
    pub e: Scalar,
    pub s_x: Scalar,
    pub s_rho: Vec<Scalar>,
}

/// A member's re-encryption shares of a list, with the proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReencryptionPartial {
    pub member: u32,
    pub shares: Vec<ReencryptionShare>,
    pub proof: ReencryptProof,
}

fn check_inputs(cts: &[Ciphertext], targets: &[PublicKey]) -> Result<(), ReencryptError> {
    if targets.len() != cts.len() {
        return Err(ReencryptError::TargetCount {
            got: targets.len(),
            expected: cts.len(),
        });
    }
    if let Some(index) = cts.iter().position(|c| c.c1.is_identity()) {
        return Err(ReencryptError::IdentityC1 { index });
    }
    Ok(())
}

/// The transcript up to (and including) the shares, whose encodings the
/// caller gives (`a`, `b`: `A_{i,k}`, `B_{i,k}` compressed).
fn statement(
    ctx: &ReencryptContext<'_>,
    member: u32,
    y: &RistrettoPoint,
    cts: &[Ciphertext],
    targets: &[PublicKey],
    a: &[CompressedRistretto],
    b: &[CompressedRistretto],
) -> ProofTranscript {
    let mut t = ProofTranscript::new(REENCRYPT_DOMAIN);
    t.append_bytes(b"run", ctx.run);
    t.append_u64(b"lane", ctx.lane as u64);
    t.append_u64(b"member", member as u64);
    t.append_point(b"y", &y.compress());
    t.append_u64(b"n", cts.len() as u64);
    let c1: Vec<RistrettoPoint> = cts.iter().map(|c| c.c1).collect();
    t.append_points(b"c1", &compress_all(&c1));
    let keys: Vec<_> = targets.iter().map(|p| *p.compressed()).collect();
    t.append_points(b"targets", &keys);
    t.append_points(b"A", a);
    t.append_points(b"B", b);
    t
}

/// Append the commitments given by their halves (`Ty / 2`, `T_{A,k} / 2`,
/// `T_{B,k} / 2`): prover and verifier compute only the halves and encode
/// the doubles in one batch ([`compress_doubles`]); the bytes are those of
/// `Ty`, `T_A`, `T_B`.
fn append_commitments(
    t: &mut ProofTranscript,
    ty_half: &RistrettoPoint,
    ta_half: &[RistrettoPoint],
    tb_half: &[RistrettoPoint],
) {
    let ty = compress_doubles(std::slice::from_ref(ty_half));
    t.append_points(b"Ty", &ty);
    t.append_points(b"TA", &compress_doubles(ta_half));
    t.append_points(b"TB", &compress_doubles(tb_half));
}

fn nonzero_scalar<R: RngCore + CryptoRng>(rng: &mut R) -> Scalar {
    loop {
        let s = Scalar::random(rng);
        if s != Scalar::ZERO {
            return s;
        }
    }
}

/// Member `share` re-encrypts `cts` (under its committee's key) to
/// `targets[k]` for ciphertext k, and proves it.
pub fn reencrypt<R: RngCore + CryptoRng>(
    share: &KeyShare,
    cts: &[Ciphertext],
    targets: &[PublicKey],
    ctx: &ReencryptContext<'_>,
    rng: &mut R,
) -> Result<ReencryptionPartial, ReencryptError> {
    check_inputs(cts, targets)?;
    let x = share.secret();
    let member = share.index();
    let y = share.verification_key();
    let mut rho: Vec<Scalar> = (0..cts.len()).map(|_| nonzero_scalar(rng)).collect();
    // Halves of the shares (scalars times 1/2): the shares are their
    // doubles, and their encodings come in one batch (`compress_doubles`).
    let h = half();
    let mut xh = x * h;
    let halves: Vec<(RistrettoPoint, RistrettoPoint)> = cts
        .par_iter()
        .zip(targets.par_iter())
        .zip(rho.par_iter())
        .map(|((c, p), r)| {
            let mut rh = r * h;
            let ab = (
                &rh * RISTRETTO_BASEPOINT_TABLE,
                RistrettoPoint::multiscalar_mul([rh, -xh], [*p.point(), c.c1]),
            );
            rh.zeroize();
            ab
        })
        .collect();
    xh.zeroize();
    let (a_half, b_half): (Vec<RistrettoPoint>, Vec<RistrettoPoint>) = halves.into_iter().unzip();
    let shares: Vec<ReencryptionShare> = a_half
        .iter()
        .zip(&b_half)
        .map(|(a, b)| ReencryptionShare { a: a + a, b: b + b })
        .collect();
    let mut t = statement(
        ctx,
        member,
        &y,
        cts,
        targets,
        &compress_doubles(&a_half),
        &compress_doubles(&b_half),
    );
    // Hedged nonces: bound to the transcript, the witness and fresh randomness.
    let mut witness = Vec::with_capacity(SCALAR_BYTES * (1 + rho.len()));
    witness.extend_from_slice(x.as_bytes());
    rho.iter()
        .for_each(|r| witness.extend_from_slice(r.as_bytes()));
    let mut nonce_rng = t.witness_rng(&witness, rng);
    witness.zeroize();
    let mut u = Scalar::random(&mut nonce_rng);
    let mut a: Vec<Scalar> = (0..cts.len())
        .map(|_| Scalar::random(&mut nonce_rng))
        .collect();
    // The commitments are only hashed: their halves suffice.
    let mut uh = u * h;
    let ty_half = &uh * RISTRETTO_BASEPOINT_TABLE;
    let (ta_half, tb_half): (Vec<RistrettoPoint>, Vec<RistrettoPoint>) = cts
        .par_iter()
        .zip(targets.par_iter())
        .zip(a.par_iter())
        .map(|((c, p), ak)| {
            let mut akh = ak * h;
            let tab = (
                &akh * RISTRETTO_BASEPOINT_TABLE,
                RistrettoPoint::multiscalar_mul([akh, -uh], [*p.point(), c.c1]),
            );
            akh.zeroize();
            tab
        })
        .unzip();
    uh.zeroize();
    append_commitments(&mut t, &ty_half, &ta_half, &tb_half);
    let e = t.challenge_scalar(b"e");
    let s_x = u + e * x;
    let s_rho: Vec<Scalar> = a.iter().zip(&rho).map(|(ak, r)| ak + e * r).collect();
    u.zeroize();
    a.iter_mut().for_each(Zeroize::zeroize);
    rho.iter_mut().for_each(Zeroize::zeroize);
    Ok(ReencryptionPartial {
        member,
        shares,
        proof: ReencryptProof { e, s_x, s_rho },
    })
}

/// Check one member's partial against the source committee `source`.
pub fn verify_partial(
    source: &GroupKey,
    cts: &[Ciphertext],
    targets: &[PublicKey],
    partial: &ReencryptionPartial,
    ctx: &ReencryptContext<'_>,
) -> Result<(), ReencryptError> {
    check_inputs(cts, targets)?;
    let member = partial.member;
    let y = source
        .verification_key(member)
        .ok_or(ReencryptError::UnknownMember { member })?;
    let n = cts.len();
    if partial.shares.len() != n || partial.proof.s_rho.len() != n {
        return Err(ReencryptError::LengthMismatch {
            member,
            got: partial.shares.len().min(partial.proof.s_rho.len()),
            expected: n,
        });
    }
    if let Some(index) = partial
        .shares
        .iter()
        .position(|s| s.a.is_identity() || s.b.is_identity())
    {
        return Err(ReencryptError::IdentityShare { member, index });
    }
    let a: Vec<RistrettoPoint> = partial.shares.iter().map(|s| s.a).collect();
    let b: Vec<RistrettoPoint> = partial.shares.iter().map(|s| s.b).collect();
    let mut t = statement(
        ctx,
        member,
        &y,
        cts,
        targets,
        &compress_all(&a),
        &compress_all(&b),
    );
    let ReencryptProof { e, s_x, s_rho } = &partial.proof;
    // The commitments are recomputed as halves (every scalar times 1/2)
    // and encoded in batches ([`append_commitments`]); the `G` terms use
    // dalek's precomputed basepoint table.
    let h = half();
    let (eh, sxh) = (-(e * h), -(s_x * h));
    let ty_half = RistrettoPoint::vartime_double_scalar_mul_basepoint(&eh, &y, &(s_x * h));
    let (ta_half, tb_half): (Vec<RistrettoPoint>, Vec<RistrettoPoint>) = cts
        .par_iter()
        .zip(targets.par_iter())
        .zip(partial.shares.par_iter())
        .zip(s_rho.par_iter())
        .map(|(((c, p), sh), sk)| {
            let skh = sk * h;
            (
                RistrettoPoint::vartime_double_scalar_mul_basepoint(&eh, &sh.a, &skh),
                RistrettoPoint::vartime_multiscalar_mul([skh, sxh, eh], [*p.point(), c.c1, sh.b]),
            )
        })
        .unzip();
    append_commitments(&mut t, &ty_half, &ta_half, &tb_half);
    if t.challenge_scalar(b"e") == *e {
        Ok(())
    } else {
        Err(ReencryptError::InvalidProof { member })
    }
}

/// Split partials into the valid ones and the rejected ones (with why).
pub fn filter_valid<'a>(
    source: &GroupKey,
    cts: &[Ciphertext],
    targets: &[PublicKey],
    partials: &'a [ReencryptionPartial],
    ctx: &ReencryptContext<'_>,
) -> (Vec<&'a ReencryptionPartial>, Vec<ReencryptError>) {
    let mut ok: Vec<&ReencryptionPartial> = Vec::new();
    let mut bad = Vec::new();
    for p in partials {
        if ok.iter().any(|q| q.member == p.member) {
            bad.push(ReencryptError::DuplicateMember { member: p.member });
            continue;
        }
        match verify_partial(source, cts, targets, p, ctx) {
            Ok(()) => ok.push(p),
            Err(e) => bad.push(e),
        }
    }
    (ok, bad)
}

/// Combine partials into the re-encrypted list: ciphertext k under
/// `targets[k]`. Every partial given is verified (an invalid one is an
/// error naming the member; use [`filter_valid`] first to continue without
/// it); the first `t` are used.
pub fn combine(
    source: &GroupKey,
    cts: &[Ciphertext],
    targets: &[PublicKey],
    partials: &[ReencryptionPartial],
    ctx: &ReencryptContext<'_>,
) -> Result<Vec<Ciphertext>, ReencryptError> {
    let mut seen: Vec<u32> = Vec::with_capacity(partials.len());
    for p in partials {
        if seen.contains(&p.member) {
            return Err(ReencryptError::DuplicateMember { member: p.member });
        }
        seen.push(p.member);
        verify_partial(source, cts, targets, p, ctx)?;
    }
    let used: Vec<&ReencryptionPartial> = partials.iter().collect();
    combine_verified(source, cts, &used)
}

/// [`combine`] of partials the caller has already checked with
/// [`verify_partial`] against the same `source`, `cts`, targets and
/// context (the relay verifies each answer once, when it arrives, to name
/// its sender): no proof is re-checked here; duplicates and a short list
/// are still refused. Partials that were not verified give a wrong
/// ciphertext, never an error: use [`combine`] for them.
pub fn combine_verified(
    source: &GroupKey,
    cts: &[Ciphertext],
    partials: &[&ReencryptionPartial],
) -> Result<Vec<Ciphertext>, ReencryptError> {
    let mut seen: Vec<u32> = Vec::with_capacity(partials.len());
    for p in partials {
        if seen.contains(&p.member) {
            return Err(ReencryptError::DuplicateMember { member: p.member });
        }
        seen.push(p.member);
        if p.shares.len() != cts.len() {
            return Err(ReencryptError::LengthMismatch {
                member: p.member,
                got: p.shares.len(),
                expected: cts.len(),
            });
        }
    }
    let t = source.threshold() as usize;
    if partials.len() < t {
        return Err(ReencryptError::NotEnoughPartials {
            have: partials.len(),
            need: t,
        });
    }
    let used = &partials[..t];
    let lambda = lagrange_at_zero(&used.iter().map(|p| p.member).collect::<Vec<_>>())?;
    cts.par_iter()
        .enumerate()
        .map(|(k, c)| {
            let a: Vec<RistrettoPoint> = used.iter().map(|p| p.shares[k].a).collect();
            let b: Vec<RistrettoPoint> = used.iter().map(|p| p.shares[k].b).collect();
            let c1 = RistrettoPoint::vartime_multiscalar_mul(&lambda, &a);
            if c1.is_identity() {
                return Err(ReencryptError::IdentityResult { index: k });
            }
            Ok(Ciphertext {
                c1,
                c2: c.c2 + RistrettoPoint::vartime_multiscalar_mul(&lambda, &b),
            })
        })
        .collect()
}

impl ReencryptionPartial {
    /// Encoded length for a list of `n` ciphertexts: `9 + 96 n + 64`.
    pub const fn encoded_len(n: usize) -> usize {
        9 + (SHARE_BYTES + SCALAR_BYTES) * n + 2 * SCALAR_BYTES
    }

    /// `u8 version | u32 member | u32 n | n × (A || B) | e | s_x | n × s_k`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.shares.len();
        let mut out = Vec::with_capacity(Self::encoded_len(n));
        out.push(REENCRYPTION_VERSION);
        out.extend_from_slice(&self.member.to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
        let pts: Vec<RistrettoPoint> = self.shares.iter().flat_map(|s| [s.a, s.b]).collect();
        for c in compress_all(&pts) {
            out.extend_from_slice(c.as_bytes());
        }
        out.extend_from_slice(self.proof.e.as_bytes());
        out.extend_from_slice(self.proof.s_x.as_bytes());
        for s in &self.proof.s_rho {
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    /// Decode; rejects an unknown version, oversize counts, a length that
    /// does not match the count, non-canonical points and scalars and
    /// identity points (point `2k` is `A_k`, `2k + 1` is `B_k`; scalar 0 is
    /// `e`, 1 is `s_x`, `2 + k` is `s_k`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let version = r.u8()?;
        if version != REENCRYPTION_VERSION {
            return Err(DecodeError::UnknownVersion {
                what: WHAT,
                tag: version,
            });
        }
        let member = r.u32()?;
        let n = r.u32()? as usize;
        if n > MAX_LIST_LEN {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: n as u64,
                max: MAX_LIST_LEN as u64,
            });
        }
        let expected = Self::encoded_len(n);
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected,
                got: bytes.len(),
            });
        }
        let pts = r.take(SHARE_BYTES * n)?;
        let pts = pts
            .par_chunks(POINT_BYTES)
            .enumerate()
            .map(|(i, b)| {
                let (p, _) = crate::wire::decode_point(b, WHAT, i)?;
                if p.is_identity() {
                    return Err(DecodeError::IdentityPoint {
                        what: WHAT,
                        index: i,
                    });
                }
                Ok(p)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shares = pts
            .chunks_exact(2)
            .map(|ab| ReencryptionShare { a: ab[0], b: ab[1] })
            .collect();
        let e = r.scalar(0)?;
        let s_x = r.scalar(1)?;
        let s_rho = (0..n)
            .map(|k| r.scalar(2 + k))
            .collect::<Result<Vec<_>, _>>()?;
        r.finish()?;
        Ok(ReencryptionPartial {
            member,
            shares,
            proof: ReencryptProof { e, s_x, s_rho },
        })
    }
}

#[cfg(test)]
mod tests;
