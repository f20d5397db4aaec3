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
//! `k_{s->r} = HKDF-SHA256(salt = "blanket/channel/v2", ikm = enc(K),
//!  info = "blanket/channel/v2/key" || id_s || X_s || id_r || X_r)`.
//!
//! Version 2 (issue 9, item 5) takes nonces and replay protection away from
//! the caller:
//! - the sequence number `seq` of each direction is a counter inside the
//!   [`Channel`] (0, 1, 2, ...), never chosen by the caller;
//! - the AEAD is XChaCha20-Poly1305 [draft-irtf-cfrg-xchacha; RFC 8439 for
//!   ChaCha20-Poly1305] with the 24-byte nonce `prefix (16 bytes) || seq
//!   (8 bytes LE)`; the prefix travels with each message and is hedged
//!   (issue 25, item 8): `prefix = HKDF-Expand(PRK, "blanket/channel/v2/
//!   nonce" || round || seq || plaintext)[..16]` with
//!   `PRK = HKDF-Extract(salt = 32 bytes of the caller's RNG drawn at
//!   establishment, ikm = the sender's secret key || the shared secret)`
//!   (the derandomized-but-randomized nonces of hedged signatures, e.g.
//!   RFC 6979 section 3.6 "additional data", and of SIV modes, RFC 5297).
//!   A process that restarts and re-establishes the channel (its counter
//!   back at 0) gets fresh nonces from a fresh RNG; one restored from an
//!   RNG snapshot gets the same PRK, so two different plaintexts still get
//!   different nonces (a repeat needs equal 128-bit PRF outputs), and only
//!   a repeated plaintext in the same round and position repeats its
//!   ciphertext (which shows only that equality);
//! - the receiver keeps a sliding window of the last [`REPLAY_WINDOW`]
//!   sequence numbers it accepted (the anti-replay window of IPsec ESP,
//!   RFC 4303 section 3.4.3): a repeated or too old `seq` is refused, and
//!   the window moves only after the tag verified, so forgeries cannot
//!   advance it. The relay may reorder messages within the window.
//!
//! Associated data `"blanket/channel/v2" || id_s || id_r || round || seq`,
//! so the relay can neither read nor alter a message, nor re-address it to
//! another receiver, attribute it to another sender, move it to another
//! round, or deliver it twice.
//!
//! Properties and limits: authentication rests on the directory (a relay
//! that substitutes directory keys can impersonate; the paper assumes the
//! server is semi-honest); there is no forward secrecy (static keys); replay
//! protection lasts as long as the receiving [`Channel`] (a receiver that
//! restarts and re-establishes the channel must also carry over its window,
//! or start a new protocol round whose messages it tracks).

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use curve25519_dalek::traits::IsIdentity;
use hkdf::Hkdf;
use rand_core::{CryptoRng, RngCore};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::elgamal::{Keypair, PublicKey};
use crate::wire::{DecodeError, Reader};

const SALT: &[u8] = b"blanket/channel/v2";
const KEY_INFO: &[u8] = b"blanket/channel/v2/key";
const AD_LABEL: &[u8] = b"blanket/channel/v2";
const HEDGE_INFO: &[u8] = b"blanket/channel/v2/hedge";
const NONCE_INFO: &[u8] = b"blanket/channel/v2/nonce";

/// Version tag of the [`SealedMessage`] encoding (version 1 was untagged,
/// with caller-chosen `u32` sequence numbers).
pub const CHANNEL_VERSION: u8 = 2;
/// Number of most recent sequence numbers the receiver remembers.
pub const REPLAY_WINDOW: u64 = 64;
/// Length of the hedged per-message nonce prefix.
pub const NONCE_PREFIX_BYTES: usize = 16;
/// Length of a [`SealedMessage`] header.
pub const HEADER_BYTES: usize = 1 + 4 + 4 + 8 + 8 + NONCE_PREFIX_BYTES + 4;

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
    /// The peer's key is the identity (the shared secret would be public).
    #[error("the public key of client {0} is the identity")]
    IdentityPeerKey(u32),
    /// A message with this sequence number was already opened, or it is
    /// older than the replay window.
    #[error("replayed or too old message from {sender} (seq {seq})")]
    Replay { sender: u32, seq: u64 },
    /// The sending counter is exhausted (after 2^64 messages).
    #[error("sequence numbers of this channel are exhausted")]
    SequenceExhausted,
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
    AuthenticationFailed { sender: u32, round: u64, seq: u64 },
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
    /// The sender's counter for this direction.
    pub seq: u64,
    /// The sender's hedged nonce prefix (module docs).
    pub nonce_prefix: [u8; NONCE_PREFIX_BYTES],
    /// XChaCha20-Poly1305 output (plaintext length + 16).
    pub ciphertext: Vec<u8>,
}

/// The receiver's anti-replay state (RFC 4303 section 3.4.3): the highest
/// accepted sequence number and a bitmap of the [`REPLAY_WINDOW`] below it.
#[derive(Clone, Copy, Debug, Default)]
struct ReplayWindow {
    /// The highest accepted sequence number, if any.
    highest: Option<u64>,
    /// Bit `k` set: `highest - k` was accepted.
    seen: u64,
}

impl ReplayWindow {
    fn check(&self, seq: u64) -> bool {
        match self.highest {
            None => true,
            Some(h) if seq > h => true,
            Some(h) => {
                let age = h - seq;
                age < REPLAY_WINDOW && self.seen & (1u64 << age) == 0
            }
        }
    }

    /// Record `seq` (after `check` passed and the tag verified).
    fn accept(&mut self, seq: u64) {
        match self.highest {
            Some(h) if seq <= h => self.seen |= 1u64 << (h - seq),
            Some(h) => {
                let shift = seq - h;
                self.seen = if shift >= REPLAY_WINDOW {
                    1
                } else {
                    (self.seen << shift) | 1
                };
                self.highest = Some(seq);
            }
            None => {
                self.seen = 1;
                self.highest = Some(seq);
            }
        }
    }
}

/// A pairwise channel from one client's point of view.
pub struct Channel {
    me: u32,
    peer: u32,
    send: XChaCha20Poly1305,
    recv: XChaCha20Poly1305,
    /// The PRK nonce prefixes are derived from (module docs).
    nonce_key: Zeroizing<[u8; 32]>,
    next_seq: Option<u64>,
    window: ReplayWindow,
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

fn nonce(prefix: &[u8; NONCE_PREFIX_BYTES], seq: u64) -> [u8; 24] {
    let mut n = [0u8; 24];
    n[..NONCE_PREFIX_BYTES].copy_from_slice(prefix);
    n[NONCE_PREFIX_BYTES..].copy_from_slice(&seq.to_le_bytes());
    n
}

fn associated_data(sender: u32, receiver: u32, round: u64, seq: u64) -> Vec<u8> {
    let mut ad = Vec::with_capacity(AD_LABEL.len() + 24);
    ad.extend_from_slice(AD_LABEL);
    ad.extend_from_slice(&sender.to_le_bytes());
    ad.extend_from_slice(&receiver.to_le_bytes());
    ad.extend_from_slice(&round.to_le_bytes());
    ad.extend_from_slice(&seq.to_le_bytes());
    ad
}

impl Channel {
    /// Client `me` (with its registered keypair) opens the channel to client
    /// `peer` whose registered public key is `peer_key` (an identity key is
    /// refused). `rng` draws the 32 random bytes that, with the secret key
    /// and the shared secret, key this instance's nonce prefixes.
    pub fn establish<R: RngCore + CryptoRng>(
        me: u32,
        my_keys: &Keypair,
        peer: u32,
        peer_key: &PublicKey,
        rng: &mut R,
    ) -> Result<Self, ChannelError> {
        if me == peer {
            return Err(ChannelError::SelfChannel(me));
        }
        if peer_key.point().is_identity() {
            return Err(ChannelError::IdentityPeerKey(peer));
        }
        let mut entropy = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(entropy.as_mut());
        let shared = Zeroizing::new((my_keys.secret.0 * peer_key.point()).compress().to_bytes());
        let ks = direction_key(&shared, me, &my_keys.public, peer, peer_key);
        let kr = direction_key(&shared, peer, peer_key, me, &my_keys.public);
        let mut ikm = Zeroizing::new([0u8; 64]);
        ikm[..32].copy_from_slice(my_keys.secret.0.as_bytes());
        ikm[32..].copy_from_slice(shared.as_ref());
        let hk = Hkdf::<Sha256>::new(Some(entropy.as_ref()), ikm.as_ref());
        let mut info = Vec::with_capacity(HEDGE_INFO.len() + 8);
        info.extend_from_slice(HEDGE_INFO);
        info.extend_from_slice(&me.to_le_bytes());
        info.extend_from_slice(&peer.to_le_bytes());
        let mut nonce_key = Zeroizing::new([0u8; 32]);
        hk.expand(&info, nonce_key.as_mut())
            .expect("32-byte HKDF output is always valid");
        Ok(Channel {
            me,
            peer,
            send: XChaCha20Poly1305::new(Key::from_slice(ks.as_ref())),
            recv: XChaCha20Poly1305::new(Key::from_slice(kr.as_ref())),
            nonce_key,
            next_seq: Some(0),
            window: ReplayWindow::default(),
        })
    }

    /// The hedged nonce prefix of the message `plaintext` at `round` and
    /// `seq` (module docs).
    fn prefix(&self, round: u64, seq: u64, plaintext: &[u8]) -> [u8; NONCE_PREFIX_BYTES] {
        let hk = Hkdf::<Sha256>::from_prk(self.nonce_key.as_ref())
            .expect("a 32-byte PRK is valid for HKDF-SHA256");
        let len = plaintext.len() as u64;
        let parts: [&[u8]; 5] = [
            NONCE_INFO,
            &round.to_le_bytes(),
            &seq.to_le_bytes(),
            &len.to_le_bytes(),
            plaintext,
        ];
        let mut prefix = [0u8; NONCE_PREFIX_BYTES];
        hk.expand_multi_info(&parts, &mut prefix)
            .expect("16-byte HKDF output is always valid");
        prefix
    }

    /// Seal a message for the peer in protocol round `round`. The sequence
    /// number is the channel's own counter; the nonce prefix is hedged.
    pub fn seal(&mut self, round: u64, plaintext: &[u8]) -> Result<SealedMessage, ChannelError> {
        if plaintext.len() > MAX_MESSAGE_BYTES - TAG_BYTES {
            return Err(ChannelError::TooLong(plaintext.len()));
        }
        let seq = self.next_seq.ok_or(ChannelError::SequenceExhausted)?;
        let ad = associated_data(self.me, self.peer, round, seq);
        let prefix = self.prefix(round, seq, plaintext);
        let ciphertext = self
            .send
            .encrypt(
                XNonce::from_slice(&nonce(&prefix, seq)),
                Payload {
                    msg: plaintext,
                    aad: &ad,
                },
            )
            .map_err(|_| ChannelError::TooLong(plaintext.len()))?;
        self.next_seq = seq.checked_add(1);
        Ok(SealedMessage {
            sender: self.me,
            receiver: self.peer,
            round,
            seq,
            nonce_prefix: prefix,
            ciphertext,
        })
    }

    /// Open a message from the peer; each sequence number opens at most once.
    pub fn open(&mut self, msg: &SealedMessage) -> Result<Vec<u8>, ChannelError> {
        if msg.sender != self.peer || msg.receiver != self.me {
            return Err(ChannelError::WrongParties {
                sender: msg.sender,
                receiver: msg.receiver,
                me: self.me,
                peer: self.peer,
            });
        }
        if !self.window.check(msg.seq) {
            return Err(ChannelError::Replay {
                sender: msg.sender,
                seq: msg.seq,
            });
        }
        let ad = associated_data(msg.sender, msg.receiver, msg.round, msg.seq);
        let plaintext = self
            .recv
            .decrypt(
                XNonce::from_slice(&nonce(&msg.nonce_prefix, msg.seq)),
                Payload {
                    msg: &msg.ciphertext,
                    aad: &ad,
                },
            )
            .map_err(|_| ChannelError::AuthenticationFailed {
                sender: msg.sender,
                round: msg.round,
                seq: msg.seq,
            })?;
        self.window.accept(msg.seq);
        Ok(plaintext)
    }
}

const WHAT: &str = "sealed message";

impl SealedMessage {
    /// `u8 version (2) | u32 sender | u32 receiver | u64 round | u64 seq |
    /// 16-byte nonce prefix | u32 len | ciphertext`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + self.ciphertext.len());
        out.push(CHANNEL_VERSION);
        out.extend_from_slice(&self.sender.to_le_bytes());
        out.extend_from_slice(&self.receiver.to_le_bytes());
        out.extend_from_slice(&self.round.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.nonce_prefix);
        out.extend_from_slice(&(self.ciphertext.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.ciphertext);
        out
    }

    /// Decode; rejects an unknown version, truncation, trailing bytes, a
    /// ciphertext shorter than a tag or longer than [`MAX_MESSAGE_BYTES`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, WHAT);
        let tag = r.u8()?;
        if tag != CHANNEL_VERSION {
            return Err(DecodeError::UnknownVersion { what: WHAT, tag });
        }
        let sender = r.u32()?;
        let receiver = r.u32()?;
        let round = r.u64()?;
        let seq = r.u64()?;
        let mut nonce_prefix = [0u8; NONCE_PREFIX_BYTES];
        nonce_prefix.copy_from_slice(r.take(NONCE_PREFIX_BYTES)?);
        let len = r.u32()? as usize;
        if !(TAG_BYTES..=MAX_MESSAGE_BYTES).contains(&len) {
            return Err(DecodeError::CountOutOfRange {
                what: WHAT,
                count: len as u64,
                max: MAX_MESSAGE_BYTES as u64,
            });
        }
        let expected = HEADER_BYTES + len;
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
            nonce_prefix,
            ciphertext,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn pair() -> (Channel, Channel, Keypair, Keypair, ChaCha20Rng) {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let a = Keypair::generate(&mut rng);
        let b = Keypair::generate(&mut rng);
        let c = Keypair::generate(&mut rng);
        // Keys go through the directory (wire decode).
        let a_pub = PublicKey::from_bytes(&a.public.to_bytes()).unwrap();
        let b_pub = PublicKey::from_bytes(&b.public.to_bytes()).unwrap();
        let ab = Channel::establish(1, &a, 2, &b_pub, &mut rng).unwrap();
        let ba = Channel::establish(2, &b, 1, &a_pub, &mut rng).unwrap();
        (ab, ba, b, c, rng)
    }

    #[test]
    fn roundtrip_both_directions() {
        let (mut ab, mut ba, _, _, _) = pair();
        let m = ab.seal(7, b"share for you").unwrap();
        assert_eq!(m.seq, 0);
        let relayed = SealedMessage::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(ba.open(&relayed).unwrap(), b"share for you");
        let r = ba.seal(7, b"ack").unwrap();
        assert_eq!(ab.open(&r).unwrap(), b"ack");
        // Same round and seq in both directions gives different ciphertexts
        // (direction keys differ).
        let m2 = ba.seal(7, b"share for you").unwrap();
        assert_ne!(m.ciphertext, m2.ciphertext);
        // Reflection: A's own message relabelled as coming from B.
        let mut reflected = ab.seal(1, b"x").unwrap();
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

    /// Issue 25, item 8: a sender restored from an RNG snapshot (the same
    /// RNG state when it re-establishes its channel) must not reuse a
    /// nonce for a different message, else the XOR of the two plaintexts
    /// leaks (stream cipher keystream reuse).
    #[test]
    fn restored_rng_does_not_repeat_nonces_for_different_messages() {
        let mut rng = ChaCha20Rng::seed_from_u64(41);
        let a = Keypair::generate(&mut rng);
        let b = Keypair::generate(&mut rng);
        let snapshot = ChaCha20Rng::seed_from_u64(42);
        let mut first = Channel::establish(1, &a, 2, &b.public, &mut snapshot.clone()).unwrap();
        let mut again = Channel::establish(1, &a, 2, &b.public, &mut snapshot.clone()).unwrap();
        let m1 = first.seal(3, b"share for member 2: 1111").unwrap();
        let m2 = again.seal(3, b"share for member 2: 2222").unwrap();
        assert_eq!((m1.seq, m2.seq), (0, 0));
        assert_ne!(m1.nonce_prefix, m2.nonce_prefix);
        // Both open at the receiver (each once; the window is per instance).
        let mut rb = Channel::establish(2, &b, 1, &a.public, &mut rng).unwrap();
        assert_eq!(rb.open(&m1).unwrap(), b"share for member 2: 1111");
        let mut rb2 = Channel::establish(2, &b, 1, &a.public, &mut rng).unwrap();
        assert_eq!(rb2.open(&m2).unwrap(), b"share for member 2: 2222");
        // The same message in the same position repeats (only equality
        // shows); a fresh RNG gives a fresh nonce even for it.
        let mut third = Channel::establish(1, &a, 2, &b.public, &mut snapshot.clone()).unwrap();
        assert_eq!(third.seal(3, b"share for member 2: 1111").unwrap(), m1);
        let mut fresh = Channel::establish(1, &a, 2, &b.public, &mut rng).unwrap();
        let m4 = fresh.seal(3, b"share for member 2: 1111").unwrap();
        assert_ne!(m4.nonce_prefix, m1.nonce_prefix);
        // Within one channel, the round and the counter change the prefix.
        let m5 = first.seal(3, b"share for member 2: 1111").unwrap();
        assert_ne!(m5.nonce_prefix, m1.nonce_prefix);
    }

    #[test]
    fn relay_tampering_rejected() {
        let (mut ab, mut ba, b, c, mut rng) = pair();
        let m = ab.seal(3, b"secret").unwrap();
        let tampered = |f: &dyn Fn(&mut SealedMessage)| {
            let mut t = m.clone();
            f(&mut t);
            t
        };
        for t in [
            tampered(&|t| t.ciphertext[0] ^= 1),
            tampered(&|t| t.round = 4),
            tampered(&|t| t.seq = 6),
            tampered(&|t| t.nonce_prefix[0] ^= 1),
        ] {
            assert!(matches!(
                ba.open(&t),
                Err(ChannelError::AuthenticationFailed { .. })
            ));
        }
        assert!(matches!(
            ba.open(&tampered(&|t| t.receiver = 3)),
            Err(ChannelError::WrongParties { .. })
        ));
        // Failed forgeries did not move the window: the real message opens.
        assert_eq!(ba.open(&m).unwrap(), b"secret");
        // A third registered client cannot pass a message off as client 1's.
        let mut cb = Channel::establish(3, &c, 2, &b.public, &mut rng).unwrap();
        cb.seal(3, b"first").unwrap();
        let mut forged = cb.seal(3, b"fake").unwrap();
        assert_eq!(forged.seq, 1);
        forged.sender = 1;
        assert!(matches!(
            ba.open(&forged),
            Err(ChannelError::AuthenticationFailed { .. })
        ));
        // Its own channel to client 2 works.
        let mut bc = Channel::establish(2, &b, 3, &c.public, &mut rng).unwrap();
        assert_eq!(bc.open(&cb.seal(3, b"hi").unwrap()).unwrap(), b"hi");
    }

    #[test]
    fn counters_and_replay_window() {
        let (mut ab, mut ba, _, _, _) = pair();
        let msgs: Vec<SealedMessage> = (0..100u64)
            .map(|i| ab.seal(1, &i.to_le_bytes()).unwrap())
            .collect();
        assert!(msgs.iter().enumerate().all(|(i, m)| m.seq == i as u64));
        // Out of order within the window is fine; each opens once.
        assert!(ba.open(&msgs[5]).is_ok());
        assert!(ba.open(&msgs[3]).is_ok());
        assert_eq!(
            ba.open(&msgs[5]),
            Err(ChannelError::Replay { sender: 1, seq: 5 })
        );
        assert!(ba.open(&msgs[99]).is_ok());
        // 3 is now older than the window; 40 is in it and unseen.
        assert_eq!(
            ba.open(&msgs[3]),
            Err(ChannelError::Replay { sender: 1, seq: 3 })
        );
        assert_eq!(
            ba.open(&msgs[20]),
            Err(ChannelError::Replay { sender: 1, seq: 20 })
        );
        assert!(ba.open(&msgs[40]).is_ok());
        assert!(ba.open(&msgs[40]).is_err());
        let mut w = ReplayWindow::default();
        for s in [0u64, 1, 200, 137, 138] {
            assert!(w.check(s));
            w.accept(s);
            assert!(!w.check(s));
        }
        assert!(!w.check(136));
        assert!(!w.check(36));
        let mut top = ReplayWindow::default();
        top.accept(u64::MAX);
        assert!(!top.check(u64::MAX));
    }

    #[test]
    fn errors_and_decoder() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let a = Keypair::generate(&mut rng);
        assert_eq!(
            Channel::establish(1, &a, 1, &a.public, &mut rng).err(),
            Some(ChannelError::SelfChannel(1))
        );
        let (mut ab, _, _, _, _) = pair();
        let b = ab.seal(1, b"hello").unwrap().to_bytes();
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
        short_len[HEADER_BYTES - 4..HEADER_BYTES].copy_from_slice(&3u32.to_le_bytes());
        assert!(matches!(
            SealedMessage::from_bytes(&short_len),
            Err(DecodeError::CountOutOfRange { .. })
        ));
        let mut v1 = b.clone();
        v1[0] = 1;
        assert!(matches!(
            SealedMessage::from_bytes(&v1),
            Err(DecodeError::UnknownVersion { tag: 1, .. })
        ));
        assert!(matches!(
            PublicKey::from_bytes(&[0u8; 32]),
            Err(DecodeError::IdentityPoint { .. })
        ));
    }
}
