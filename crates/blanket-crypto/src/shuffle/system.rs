//! One interface over the two proofs of shuffle, so that a caller (the
//! protocol crate, `--proof tw|bg`) can choose at run time: the same
//! inputs (setup, key, lists, context), one proof type with a tagged wire
//! format, one error type.

use rand_core::{CryptoRng, RngCore};

use super::bayer_groth::{self, BgProof, CommitmentKey};
use super::{Generators, ShuffleError, ShuffleProof};
use crate::elgamal::{Ciphertext, PublicKey};
use crate::wire::DecodeError;

/// Which proof of shuffle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofSystem {
    /// Terelius-Wikstrom (`shuffle::prove`): `160 N + 292` bytes.
    TereliusWikstrom,
    /// Bayer-Groth (`shuffle::bayer_groth`): `O(sqrt N)` group elements.
    BayerGroth,
}

impl ProofSystem {
    /// The short name used on the command line: `tw` or `bg`.
    pub fn name(self) -> &'static str {
        match self {
            ProofSystem::TereliusWikstrom => "tw",
            ProofSystem::BayerGroth => "bg",
        }
    }

    /// The wire tag of [`AnyShuffleProof`].
    fn tag(self) -> u8 {
        match self {
            ProofSystem::TereliusWikstrom => 1,
            ProofSystem::BayerGroth => 2,
        }
    }
}

impl std::str::FromStr for ProofSystem {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tw" => Ok(ProofSystem::TereliusWikstrom),
            "bg" => Ok(ProofSystem::BayerGroth),
            _ => Err(format!("unknown proof system {s:?} (allowed: tw, bg)")),
        }
    }
}

/// The public setup of a proof system for lists of up to `max_len`
/// ciphertexts: `h, h_1..h_N` (Terelius-Wikstrom) or the commitment key
/// (Bayer-Groth). Keep one per run: deriving it costs about 8 us per
/// generator.
pub enum ShuffleSetup {
    TereliusWikstrom(Box<Generators>),
    BayerGroth(CommitmentKey),
}

impl ShuffleSetup {
    /// The setup of `system` for lists of up to `max_len` ciphertexts.
    pub fn new(system: ProofSystem, max_len: usize) -> Result<Self, ShuffleError> {
        Ok(match system {
            ProofSystem::TereliusWikstrom => {
                ShuffleSetup::TereliusWikstrom(Box::new(Generators::new(max_len)))
            }
            ProofSystem::BayerGroth => {
                bayer_groth::Arrangement::for_len(max_len.max(1))?;
                ShuffleSetup::BayerGroth(CommitmentKey::new(bg_columns_up_to(max_len)))
            }
        })
    }

    /// Which system this setup is for.
    pub fn system(&self) -> ProofSystem {
        match self {
            ShuffleSetup::TereliusWikstrom(_) => ProofSystem::TereliusWikstrom,
            ShuffleSetup::BayerGroth(_) => ProofSystem::BayerGroth,
        }
    }
}

/// The most columns any arrangement of at most `max_len` ciphertexts has.
fn bg_columns_up_to(max_len: usize) -> usize {
    // n = ceil(len / m) with m a power of two that only changes at
    // len = 2 (2m)^2: the maximum is at max_len or just below a change of m.
    let mut best = 2;
    let mut m = 1usize;
    loop {
        let next = 2 * (2 * m) * (2 * m); // first length with 2m rows
        let last = (next - 1).min(max_len);
        if last >= 1 {
            best = best.max(last.div_ceil(m));
        }
        if next > max_len {
            break;
        }
        m *= 2;
    }
    best
}

/// A proof of either system. Wire format: one tag byte (1 Terelius-Wikstrom,
/// 2 Bayer-Groth) followed by that proof's encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyShuffleProof {
    TereliusWikstrom(ShuffleProof),
    BayerGroth(BgProof),
}

impl AnyShuffleProof {
    /// Which system made the proof.
    pub fn system(&self) -> ProofSystem {
        match self {
            AnyShuffleProof::TereliusWikstrom(_) => ProofSystem::TereliusWikstrom,
            AnyShuffleProof::BayerGroth(_) => ProofSystem::BayerGroth,
        }
    }

    /// Tag byte, then the proof.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.system().tag()];
        match self {
            AnyShuffleProof::TereliusWikstrom(p) => out.extend(p.to_bytes()),
            AnyShuffleProof::BayerGroth(p) => out.extend(p.to_bytes()),
        }
        out
    }

    /// Encoded size in bytes.
    pub fn size_bytes(&self) -> usize {
        1 + match self {
            AnyShuffleProof::TereliusWikstrom(p) => p.size_bytes(),
            AnyShuffleProof::BayerGroth(p) => p.size_bytes(),
        }
    }

    /// Decode; an unknown tag is [`DecodeError::UnknownVersion`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "shuffle proof (tagged)";
        let (&tag, rest) = bytes.split_first().ok_or(DecodeError::Truncated {
            what: WHAT,
            need: 1,
            got: 0,
        })?;
        match tag {
            1 => Ok(AnyShuffleProof::TereliusWikstrom(ShuffleProof::from_bytes(
                rest,
            )?)),
            2 => Ok(AnyShuffleProof::BayerGroth(BgProof::from_bytes(rest)?)),
            tag => Err(DecodeError::UnknownVersion { what: WHAT, tag }),
        }
    }
}

/// Shuffle and prove with the system of `setup`.
pub fn shuffle_and_prove_with<R: RngCore + CryptoRng>(
    setup: &ShuffleSetup,
    pk: &PublicKey,
    input: &[Ciphertext],
    context: &[u8],
    rng: &mut R,
) -> Result<(Vec<Ciphertext>, AnyShuffleProof), ShuffleError> {
    Ok(match setup {
        ShuffleSetup::TereliusWikstrom(g) => {
            let (o, p) = super::shuffle_and_prove(g, pk, input, context, rng)?;
            (o, AnyShuffleProof::TereliusWikstrom(p))
        }
        ShuffleSetup::BayerGroth(ck) => {
            let (o, p) = bayer_groth::shuffle_and_prove(ck, pk, input, context, rng)?;
            (o, AnyShuffleProof::BayerGroth(p))
        }
    })
}

/// Verify a proof of either system; a proof of the other system than the
/// setup's is refused ([`ShuffleError::VerificationFailed`]).
pub fn verify_with(
    setup: &ShuffleSetup,
    pk: &PublicKey,
    input: &[Ciphertext],
    output: &[Ciphertext],
    proof: &AnyShuffleProof,
    context: &[u8],
) -> Result<(), ShuffleError> {
    match (setup, proof) {
        (ShuffleSetup::TereliusWikstrom(g), AnyShuffleProof::TereliusWikstrom(p)) => {
            super::verify(g, pk, input, output, p, context)
        }
        (ShuffleSetup::BayerGroth(ck), AnyShuffleProof::BayerGroth(p)) => {
            bayer_groth::verify(ck, pk, input, output, p, context)
        }
        _ => Err(ShuffleError::VerificationFailed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elgamal::Keypair;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn both_systems_roundtrip_and_do_not_mix() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let kp = Keypair::generate(&mut rng);
        let input: Vec<Ciphertext> = (0..7u64)
            .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
            .collect();
        let tw = ShuffleSetup::new("tw".parse().unwrap(), 7).unwrap();
        let bg = ShuffleSetup::new("bg".parse().unwrap(), 7).unwrap();
        assert_eq!(bg.system().name(), "bg");
        let (o1, p1) = shuffle_and_prove_with(&tw, &kp.public, &input, b"c", &mut rng).unwrap();
        let (o2, p2) = shuffle_and_prove_with(&bg, &kp.public, &input, b"c", &mut rng).unwrap();
        for (setup, o, p) in [(&tw, &o1, &p1), (&bg, &o2, &p2)] {
            let back = AnyShuffleProof::from_bytes(&p.to_bytes()).unwrap();
            assert_eq!(&back, p);
            assert_eq!(p.to_bytes().len(), p.size_bytes());
            verify_with(setup, &kp.public, &input, o, &back, b"c").unwrap();
        }
        assert_eq!(
            verify_with(&tw, &kp.public, &input, &o2, &p2, b"c"),
            Err(ShuffleError::VerificationFailed)
        );
        assert!(matches!(
            AnyShuffleProof::from_bytes(&[9, 0, 0]),
            Err(DecodeError::UnknownVersion { tag: 9, .. })
        ));
        assert!("xx".parse::<ProofSystem>().is_err());
    }

    #[test]
    fn bg_setup_covers_every_length_up_to_max() {
        for max in [1usize, 2, 7, 8, 31, 32, 33, 127, 128, 129, 600, 2047, 2048] {
            let need = (1..=max)
                .map(|l| bayer_groth::Arrangement::for_len(l).unwrap().n)
                .max()
                .unwrap();
            assert_eq!(bg_columns_up_to(max), need, "max = {max}");
        }
    }
}
