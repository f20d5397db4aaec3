//! ElGamal encryption over ristretto255.
//!
//! Textbook ElGamal [ElGamal 1985] in the prime-order group ristretto255: with
//! secret key `x` and public key `pk = x·G`, a message element `M` (see
//! [`crate::encoding`]) is encrypted as `(c1, c2) = (r·G, M + r·pk)`;
//! re-randomization adds an encryption of the identity, `(c1 + r'·G, c2 + r'·pk)`;
//! decryption is `M = c2 - x·c1`. In the spec's notation `e = (a, b)` with
//! `a = c2` and `b = c1`.
//!
//! Wire format (blanket): a ciphertext is `c1 || c2`, 64 bytes; a list is a
//! little-endian `u32` count followed by the ciphertexts.

use curve25519_dalek::constants::{RISTRETTO_BASEPOINT_POINT, RISTRETTO_BASEPOINT_TABLE};
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, IsIdentity};
use rand_core::{CryptoRng, RngCore};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::encoding::{self, MessageError};
use crate::wire::{DecodeError, Reader};

/// Length of an encoded ciphertext.
pub const CIPHERTEXT_BYTES: usize = 64;

/// Upper bound on the number of ciphertexts a list decoder accepts (2^24).
pub const MAX_LIST_LEN: usize = 1 << 24;

/// Why a key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The identity is never a public key: with `pk = 0` every ciphertext
    /// carries its message in the clear (`c2 = M`).
    #[error("the identity element is not a valid public key")]
    IdentityKey,
    /// A zero secret key (its public key is the identity).
    #[error("the zero scalar is not a valid secret key")]
    ZeroSecret,
}

/// An ElGamal secret key (a nonzero scalar), zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey(pub(crate) Scalar);

impl SecretKey {
    /// A fresh uniformly random nonzero key.
    pub fn random<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        loop {
            let x = Scalar::random(rng);
            if x != Scalar::ZERO {
                return SecretKey(x);
            }
        }
    }

    /// Wrap a scalar (e.g. a reconstructed or test key); rejects zero.
    pub fn from_scalar(x: Scalar) -> Result<Self, KeyError> {
        if x == Scalar::ZERO {
            return Err(KeyError::ZeroSecret);
        }
        Ok(SecretKey(x))
    }

    /// The matching public key (never the identity: the key is nonzero and
    /// the group has prime order).
    pub fn public_key(&self) -> PublicKey {
        let point = &self.0 * RISTRETTO_BASEPOINT_TABLE;
        PublicKey {
            point,
            compressed: point.compress(),
        }
    }

    /// Recover the message element `c2 - x·c1`.
    pub fn decrypt_point(&self, ct: &Ciphertext) -> RistrettoPoint {
        ct.c2 - self.0 * ct.c1
    }

    /// Decrypt and decode a message.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<u64, MessageError> {
        encoding::decode_u64(&self.decrypt_point(ct))
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// An ElGamal public key, never the identity (every constructor checks).
/// Keeps its 32-byte encoding for transcripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey {
    point: RistrettoPoint,
    compressed: CompressedRistretto,
}

impl PublicKey {
    /// Wrap a point; rejects the identity (issue 9, item 3: with `pk = 0`,
    /// `c2 = M` in the clear).
    pub fn from_point(point: RistrettoPoint) -> Result<Self, KeyError> {
        if point.is_identity() {
            return Err(KeyError::IdentityKey);
        }
        Ok(PublicKey {
            point,
            compressed: point.compress(),
        })
    }

    /// The group element.
    pub fn point(&self) -> &RistrettoPoint {
        &self.point
    }

    /// The 32-byte encoding.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.compressed.to_bytes()
    }

    /// The compressed encoding.
    pub fn compressed(&self) -> &CompressedRistretto {
        &self.compressed
    }

    /// Decode a public key; rejects non-canonical encodings and the identity.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (point, compressed) = crate::wire::decode_point(bytes, "public key", 0)?;
        if point.is_identity() {
            return Err(DecodeError::IdentityPoint {
                what: "public key",
                index: 0,
            });
        }
        Ok(PublicKey { point, compressed })
    }

    /// A fixed-base table for this key (about 30 KiB, takes ~1 ms); makes
    /// `r·pk` as fast as `r·G`. Used by the shuffler.
    pub fn table(&self) -> RistrettoBasepointTable {
        RistrettoBasepointTable::create(&self.point)
    }

    /// Encrypt a message element with the given randomness.
    pub fn encrypt_point_with(&self, m: &RistrettoPoint, r: &Scalar) -> Ciphertext {
        Ciphertext {
            c1: r * RISTRETTO_BASEPOINT_TABLE,
            c2: m + r * self.point,
        }
    }

    /// Encrypt a message element with fresh randomness.
    pub fn encrypt_point<R: RngCore + CryptoRng>(
        &self,
        m: &RistrettoPoint,
        rng: &mut R,
    ) -> Ciphertext {
        let mut r = Scalar::random(rng);
        let ct = self.encrypt_point_with(m, &r);
        r.zeroize();
        ct
    }

    /// Encode and encrypt a `u64` message.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        m: u64,
        rng: &mut R,
    ) -> Result<Ciphertext, MessageError> {
        Ok(self.encrypt_point(&encoding::encode_u64(m)?, rng))
    }

    /// Re-randomize a ciphertext with fresh randomness.
    pub fn rerandomize<R: RngCore + CryptoRng>(&self, ct: &Ciphertext, rng: &mut R) -> Ciphertext {
        let mut r = Scalar::random(rng);
        let out = ct.rerandomize_with(self, &r);
        r.zeroize();
        out
    }
}

/// A keypair.
#[derive(Clone, Debug)]
pub struct Keypair {
    pub secret: SecretKey,
    pub public: PublicKey,
}

impl Keypair {
    /// Generate a fresh keypair.
    pub fn generate<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let secret = SecretKey::random(rng);
        let public = secret.public_key();
        Keypair { secret, public }
    }
}

/// An ElGamal ciphertext `(c1, c2) = (r·G, M + r·pk)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    /// `r·G` (the spec's `b`).
    pub c1: RistrettoPoint,
    /// `M + r·pk` (the spec's `a`).
    pub c2: RistrettoPoint,
}

impl Ciphertext {
    /// The trivial encryption of the identity, `(0, 0)`.
    pub fn identity() -> Self {
        Ciphertext {
            c1: RistrettoPoint::identity(),
            c2: RistrettoPoint::identity(),
        }
    }

    /// Add an encryption of the identity with randomness `r` (variable-base:
    /// for bulk re-randomization use a key table as the shuffler does).
    pub fn rerandomize_with(&self, pk: &PublicKey, r: &Scalar) -> Ciphertext {
        Ciphertext {
            c1: self.c1 + r * RISTRETTO_BASEPOINT_TABLE,
            c2: self.c2 + r * pk.point,
        }
    }

    /// Re-randomize using a precomputed table for `pk`.
    pub fn rerandomize_with_table(
        &self,
        pk_table: &RistrettoBasepointTable,
        r: &Scalar,
    ) -> Ciphertext {
        Ciphertext {
            c1: self.c1 + r * RISTRETTO_BASEPOINT_TABLE,
            c2: self.c2 + r * pk_table,
        }
    }

    /// `c1 || c2`, 64 bytes.
    pub fn to_bytes(&self) -> [u8; CIPHERTEXT_BYTES] {
        let mut out = [0u8; CIPHERTEXT_BYTES];
        out[..32].copy_from_slice(self.c1.compress().as_bytes());
        out[32..].copy_from_slice(self.c2.compress().as_bytes());
        out
    }

    /// Decode 64 bytes; rejects wrong lengths and non-canonical points.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != CIPHERTEXT_BYTES {
            return Err(DecodeError::WrongLength {
                what: "ciphertext",
                expected: CIPHERTEXT_BYTES,
                got: bytes.len(),
            });
        }
        let (c1, _) = crate::wire::decode_point(&bytes[..32], "ciphertext", 0)?;
        let (c2, _) = crate::wire::decode_point(&bytes[32..], "ciphertext", 1)?;
        Ok(Ciphertext { c1, c2 })
    }
}

/// Encode a list: `u32` count (little-endian), then 64 bytes per ciphertext.
pub fn encode_ciphertexts(list: &[Ciphertext]) -> Vec<u8> {
    use rayon::prelude::*;
    let mut out = Vec::with_capacity(4 + CIPHERTEXT_BYTES * list.len());
    out.extend_from_slice(&(list.len() as u32).to_le_bytes());
    let enc: Vec<[u8; CIPHERTEXT_BYTES]> = list.par_iter().map(Ciphertext::to_bytes).collect();
    for e in &enc {
        out.extend_from_slice(e);
    }
    out
}

/// Decode a list written by [`encode_ciphertexts`]. Rejects a count above
/// [`MAX_LIST_LEN`], a length that does not match the count, and any
/// non-canonical point (reporting the index of the first bad point, counting
/// `c1` and `c2` of ciphertext `i` as `2i` and `2i+1`).
pub fn decode_ciphertexts(bytes: &[u8]) -> Result<Vec<Ciphertext>, DecodeError> {
    use rayon::prelude::*;
    const WHAT: &str = "ciphertext list";
    let mut r = Reader::new(bytes, WHAT);
    let n = r.u32()? as usize;
    if n > MAX_LIST_LEN {
        return Err(DecodeError::CountOutOfRange {
            what: WHAT,
            count: n as u64,
            max: MAX_LIST_LEN as u64,
        });
    }
    let expected = 4 + n * CIPHERTEXT_BYTES;
    if bytes.len() != expected {
        return Err(DecodeError::WrongLength {
            what: WHAT,
            expected,
            got: bytes.len(),
        });
    }
    r.remaining()
        .par_chunks(CIPHERTEXT_BYTES)
        .enumerate()
        .map(|(i, ch)| {
            let (c1, _) = crate::wire::decode_point(&ch[..32], WHAT, 2 * i)?;
            let (c2, _) = crate::wire::decode_point(&ch[32..], WHAT, 2 * i + 1)?;
            Ok(Ciphertext { c1, c2 })
        })
        .collect()
}

/// The generator `G` of ristretto255 used throughout.
pub const G: RistrettoPoint = RISTRETTO_BASEPOINT_POINT;

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn encrypt_rerandomize_decrypt() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let kp = Keypair::generate(&mut rng);
        for m in [0u64, 1, 1 << 40, u64::MAX] {
            let ct = kp.public.encrypt(m, &mut rng).unwrap();
            assert_eq!(kp.secret.decrypt(&ct).unwrap(), m);
            let ct2 = kp.public.rerandomize(&ct, &mut rng);
            assert_ne!(ct, ct2);
            assert_eq!(kp.secret.decrypt(&ct2).unwrap(), m);
            let t = kp.public.table();
            let ct3 = ct.rerandomize_with_table(&t, &Scalar::from(5u8));
            assert_eq!(ct3, ct.rerandomize_with(&kp.public, &Scalar::from(5u8)));
        }
        let other = Keypair::generate(&mut rng);
        let ct = kp.public.encrypt(9, &mut rng).unwrap();
        assert_eq!(
            other.secret.decrypt(&ct),
            Err(MessageError::NotInMessageSpace)
        );
    }

    #[test]
    fn ciphertext_wire() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let kp = Keypair::generate(&mut rng);
        let ct = kp.public.encrypt(77, &mut rng).unwrap();
        let b = ct.to_bytes();
        assert_eq!(b.len(), 64);
        assert_eq!(Ciphertext::from_bytes(&b).unwrap(), ct);
        assert!(matches!(
            Ciphertext::from_bytes(&b[..63]),
            Err(DecodeError::WrongLength {
                expected: 64,
                got: 63,
                ..
            })
        ));
        let mut bad = b;
        bad[32] |= 1; // negative field element: non-canonical
        assert!(matches!(
            Ciphertext::from_bytes(&bad),
            Err(DecodeError::NonCanonicalPoint { index: 1, .. })
        ));
    }

    #[test]
    fn list_wire() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let kp = Keypair::generate(&mut rng);
        let list: Vec<Ciphertext> = (0..5)
            .map(|m| kp.public.encrypt(m, &mut rng).unwrap())
            .collect();
        let b = encode_ciphertexts(&list);
        assert_eq!(b.len(), 4 + 5 * 64);
        assert_eq!(decode_ciphertexts(&b).unwrap(), list);
        assert!(matches!(
            decode_ciphertexts(&b[..b.len() - 1]),
            Err(DecodeError::WrongLength { .. })
        ));
        assert!(matches!(
            decode_ciphertexts(&b[..3]),
            Err(DecodeError::Truncated { .. })
        ));
        let mut huge = b.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            decode_ciphertexts(&huge),
            Err(DecodeError::CountOutOfRange { .. })
        ));
        let mut bad = b.clone();
        bad[4 + 64 * 2 + 32] = 0xff;
        bad[4 + 64 * 2 + 63] = 0xff;
        assert!(matches!(
            decode_ciphertexts(&bad),
            Err(DecodeError::NonCanonicalPoint { index: 5, .. })
        ));
        assert!(PublicKey::from_bytes(&[0u8; 32]).is_err());
        assert_eq!(
            PublicKey::from_point(RistrettoPoint::identity()),
            Err(KeyError::IdentityKey)
        );
        assert_eq!(
            SecretKey::from_scalar(Scalar::ZERO).err(),
            Some(KeyError::ZeroSecret)
        );
        assert_eq!(
            PublicKey::from_bytes(&kp.public.to_bytes()).unwrap(),
            kp.public
        );
    }
}
