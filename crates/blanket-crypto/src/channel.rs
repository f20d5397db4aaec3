//! Authenticated, encrypted channels between registered clients through an
//! untrusted relay.
//!
//! [Paper, setting: the server relays every message and enables key
//! exchange so that clients get authenticated, encrypted channels through
//! it. The construction is blanket's: static-static Diffie-Hellman over
//! ristretto255 + HKDF-SHA256 + ChaCha20-Poly1305 (RFC 8439).]
//!
//! Every client registers a long-term channel key (a ristretto255 keypair,
//! distinct from any ElGamal key) with the server, which publishes the
//! directory `id -> public key`. Clients `i` and `j` derive
//! `K = (x_i·X_j)` and, per direction,
//! `k_{s->r} = HKDF-SHA256(salt = "blanket/channel/v1", ikm = enc(K),
//!  info = "blanket/channel/v1/key" || id_s || X_s || id_r || X_r)`.
//! A message for round `round` with sender-chosen sequence number `seq` is
//! sealed with nonce `round (8 bytes LE) || seq (4 bytes LE)` and associated
//! data `"blanket/channel/v1" || id_s || id_r || round || seq`, so the relay
//! can neither read nor alter it, nor re-address it to another receiver,
//! attribute it to another sender, or move it to another round.
//!
//! Properties and limits: authentication rests on the directory (a relay
//! that substitutes directory keys can impersonate; the paper assumes the
//! server is semi-honest); there is no forward secrecy (static keys); the
//! sender must never reuse `(round, seq)` with the same peer, and the
//! receiver must drop a repeated `(round, seq)` (replay), which
//! [`Channel::open`] cannot see on its own.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::elgamal::{Keypair, PublicKey};
use crate::wire::{DecodeError, Reader};

const SALT: &[u8] = b"blanket/channel/v1";
const KEY_INFO: &[u8] = b"blanket/channel/v1/key";
const AD_LABEL: &[u8] = b"blanket/channel/v1";

/// Poly1305 tag length.
pub const TAG_BYTES: usize = 16;
/// Largest accepted ciphertext (64 MiB).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Errors of the channel layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// A client cannot open a channel to itself.
    #[error("sender and receiver are the same client {0}")]
    SelfChannel(u32),
    /// The message is not addressed to this channel.
    #[error("message from {sender} to {receiver} does not belong to channel {me} <- {peer}")]
    WrongParties {
        sender: u32,
        receiver: u32,
        me: u32,
        peer: u32,
    },
    /// The AEAD tag does not verify (forged, altered, re-addressed or
    /// replayed into another round).
    #[error("authentication failed for message from {sender} (round {round}, seq {seq})")]
    AuthenticationFailed { sender: u32, round: u64, seq: u32 },
    /// Message too long.
    #[error("message of {0} bytes exceeds the maximum")]
    TooLong(usize),
}

/// A sealed message as relayed by the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedMessage {
    pub sender: u32,
    pub receiver: u32,
    pub round: u64,
    pub seq: u32,
    /// ChaCha20-Poly1305 output (plaintext length + 16).
    pub ciphertext: Vec<u8>,
}

/// A pairwise channel from one client's point of view.
pub struct Channel {
    me: u32,
    peer: u32,
    send: ChaCha20Poly1305,
    recv: ChaCha20Poly1305,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Channel({} <-> {})", self.me, self.peer)
    }
}

fn direction_key(
    shared: &[u8; 32],
    s: u32,
    xs: &PublicKey,
    r: u32,
    xr: &PublicKey,
) -> Zeroizing<[u8; 32]> {
    let hk = Hkdf::<Sha256>::new(Some(SALT), shared);
    let mut info = Vec::with_capacity(KEY_INFO.len() + 72);
    info.extend_from_slice(KEY_INFO);
    info.extend_from_slice(&s.to_le_bytes());
    info.extend_from_slice(&xs.to_bytes());
    info.extend_from_slice(&r.to_le_bytes());
    info.extend_from_slice(&xr.to_bytes());
    let mut k = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA256's 255 * 32 limit.
    hk.expand(&info, k.as_mut())
        .expect("32-byte HKDF output is always valid");
    k
}

fn nonce(round: u64, seq: u32) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[..8].copy_from_slice(&round.to_le_bytes());
    n[8..].copy_from_slice(&seq.to_le_bytes());
    n
}

fn associated_data(sender: u32, receiver: u32, round: u64, seq: u32) -> Vec<u8> {
    let mut ad = Vec::with_capacity(AD_LABEL.len() + 20);
    ad.extend_from_slice(AD_LABEL);
    ad.extend_from_slice(&sender.to_le_bytes());
    ad.extend_from_slice(&receiver.to_le_bytes());
    ad.extend_from_slice(&round.to_le_bytes());
    ad.extend_from_slice(&seq.to_le_bytes());
    ad
}

impl Channel {
    /// Client `me` (with its registered keypair) opens the channel to client
    /// `peer` whose registered public key is `peer_key` (decoded with
    /// [`PublicKey::from_bytes`], which rejects the identity).
    pub fn establish(
        me: u32,
        my_keys: &Keypair,
        peer: u32,
        peer_key: &PublicKey,
    ) -> Result<Self, ChannelError> {
        if me == peer {
            return Err(ChannelError::SelfChannel(me));
        }
        let shared = Zeroizing::new((my_keys.secret.0 * peer_key.point()).compress().to_bytes());
        let ks = direction_key(&shared, me, &my_keys.public, peer, peer_key);
        let kr = direction_key(&shared, peer, peer_key, me, &my_keys.public);
        Ok(Channel {
            me,
            peer,
            send: ChaCha20Poly1305::new(Key::from_slice(ks.as_ref())),
            recv: ChaCha20Poly1305::new(Key::from_slice(kr.as_ref())),
        })
    }

    /// Seal a message for the peer. `(round, seq)` must be unique per
    /// channel direction.
    pub fn seal(
        &self,
        round: u64,
        seq: u32,
        plaintext: &[u8],
    ) -> Result<SealedMessage, ChannelError> {
        if plaintext.len() > MAX_MESSAGE_BYTES - TAG_BYTES {
            return Err(ChannelError::TooLong(plaintext.len()));
        }
        let ad = associated_data(self.me, self.peer, round, seq);
        let ciphertext = self
            .send
            .encrypt(
                Nonce::from_slice(&nonce(round, seq)),
                Payload {
                    msg: plaintext,
                    aad: &ad,
                },
            )
            .map_err(|_| ChannelError::TooLong(plaintext.len()))?;
        Ok(SealedMessage {
            sender: self.me,
            receiver: self.peer,
            round,
            seq,
            ciphertext,
        })
    }

    /// Open a message from the peer.
    pub fn open(&self, msg: &SealedMessage) -> Result<Vec<u8>, ChannelError> {
        if msg.sender != self.peer || msg.receiver != self.me {
            return Err(ChannelError::WrongParties {
                sender: msg.sender,
                receiver: msg.receiver,
                me: self.me,
                peer: self.peer,
            });
        }
        let ad = associated_data(msg.sender, msg.receiver, msg.round, msg.seq);
        self.recv
            .decrypt(
                Nonce::from_slice(&nonce(msg.round, msg.seq)),
                Payload {
                    msg: &msg.ciphertext,
                    aad: &ad,
                },
            )
            .map_err(|_| ChannelError::AuthenticationFailed {
                sender: msg.sender,
                round: msg.round,
                seq: msg.seq,
            })
    }
}

const WHAT: &str = "sealed message";

impl SealedMessage {
    /// `u32 sender | u32 receiver | u64 round | u32 seq | u32 len | ciphertext`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.ciphertext.len());
        out.extend_from_slice(&self.sender.to_le_bytes());
        out.extend_from_slice(&self.receiver.to_le_bytes());
        out.extend_from_slice(&self.round.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&(self.ciphertext.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.ciphertext);
        out
    }

    /// Decode; rejects truncation, trailing bytes, a ciphertext shorter than
    /// a tag or longer than [`MAX_MESSAGE_BYTES`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let sender = r.u32()?;
        let receiver = r.u32()?;
        let round = r.u64()?;
        let seq = r.u32()?;
        let len = r.u32()? as usize;
        if !(TAG_BYTES..=MAX_MESSAGE_BYTES).contains(&len) {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: len as u64,
                max: MAX_MESSAGE_BYTES as u64,
            });
        }
        let expected = 24 + len;
        if bytes.len() != expected {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected,
                got: bytes.len(),
            });
        }
        let ciphertext = r.take(len)?.to_vec();
        r.finish()?;
        Ok(SealedMessage {
            sender,
            receiver,
            round,
            seq,
            ciphertext,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn pair() -> (Channel, Channel, Keypair, Keypair) {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let a = Keypair::generate(&mut rng);
        let b = Keypair::generate(&mut rng);
        let c = Keypair::generate(&mut rng);
        // Keys go through the directory (wire decode).
        let a_pub = PublicKey::from_bytes(&a.public.to_bytes()).unwrap();
        let b_pub = PublicKey::from_bytes(&b.public.to_bytes()).unwrap();
        let ab = Channel::establish(1, &a, 2, &b_pub).unwrap();
        let ba = Channel::establish(2, &b, 1, &a_pub).unwrap();
        (ab, ba, b, c)
    }

    #[test]
    fn roundtrip_both_directions() {
        let (ab, ba, _, _) = pair();
        let m = ab.seal(7, 0, b"share for you").unwrap();
        let relayed = SealedMessage::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(ba.open(&relayed).unwrap(), b"share for you");
        let r = ba.seal(7, 0, b"ack").unwrap();
        assert_eq!(ab.open(&r).unwrap(), b"ack");
        // Same (round, seq) in both directions gives different ciphertexts
        // (direction keys differ).
        let m2 = ba.seal(7, 0, b"share for you").unwrap();
        assert_ne!(m.ciphertext, m2.ciphertext);
        // Reflection: A's own message relabelled as coming from B.
        let mut reflected = ab.seal(1, 1, b"x").unwrap();
        reflected.sender = 2;
        reflected.receiver = 1;
        assert_eq!(
            ab.open(&reflected),
            Err(ChannelError::AuthenticationFailed {
                sender: 2,
                round: 1,
                seq: 1
            })
        );
    }

    #[test]
    fn relay_tampering_rejected() {
        let (ab, ba, b, c) = pair();
        let m = ab.seal(3, 5, b"secret").unwrap();
        // Altered ciphertext.
        let mut t = m.clone();
        t.ciphertext[0] ^= 1;
        assert!(matches!(
            ba.open(&t),
            Err(ChannelError::AuthenticationFailed { .. })
        ));
        // Moved to another round or sequence number.
        let mut t = m.clone();
        t.round = 4;
        assert!(matches!(
            ba.open(&t),
            Err(ChannelError::AuthenticationFailed { .. })
        ));
        let mut t = m.clone();
        t.seq = 6;
        assert!(matches!(
            ba.open(&t),
            Err(ChannelError::AuthenticationFailed { .. })
        ));
        // Re-addressed.
        let mut t = m.clone();
        t.receiver = 3;
        assert!(matches!(
            ba.open(&t),
            Err(ChannelError::WrongParties { .. })
        ));
        // A third registered client cannot pass a message off as client 1's.
        let cb = Channel::establish(3, &c, 2, &b.public).unwrap();
        let mut forged = cb.seal(3, 5, b"fake").unwrap();
        forged.sender = 1;
        assert!(matches!(
            ba.open(&forged),
            Err(ChannelError::AuthenticationFailed { .. })
        ));
        // Its own channel to client 2 works.
        let bc = Channel::establish(2, &b, 3, &c.public).unwrap();
        assert_eq!(bc.open(&cb.seal(3, 6, b"hi").unwrap()).unwrap(), b"hi");
    }

    #[test]
    fn errors_and_decoder() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let a = Keypair::generate(&mut rng);
        assert_eq!(
            Channel::establish(1, &a, 1, &a.public).err(),
            Some(ChannelError::SelfChannel(1))
        );
        let (ab, _, _, _) = pair();
        let b = ab.seal(1, 2, b"hello").unwrap().to_bytes();
        assert!(matches!(
            SealedMessage::from_bytes(&b[..10]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            SealedMessage::from_bytes(&b[..b.len() - 1]),
            Err(DecodeError::WrongLength { .. })
        ));
        let mut longer = b.clone();
        longer.push(0);
        assert!(matches!(
            SealedMessage::from_bytes(&longer),
            Err(DecodeError::WrongLength { .. })
        ));
        let mut short_len = b.clone();
        short_len[20..24].copy_from_slice(&3u32.to_le_bytes());
        assert!(matches!(
            SealedMessage::from_bytes(&short_len),
            Err(DecodeError::CountOutOfRange { .. })
        ));
        assert!(matches!(
            PublicKey::from_bytes(&[0u8; 32]),
            Err(DecodeError::IdentityPoint { .. })
        ));
    }
}
