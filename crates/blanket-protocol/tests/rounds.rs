//! Replayed, out-of-round, misrouted and unexpected messages are refused by
//! both state machines, with typed errors.

use blanket_crypto::schnorr::SchnorrProof;
use blanket_crypto::Keypair;
use blanket_protocol::client::{Client, ClientError};
use blanket_protocol::relay::{Relay, RelayError, RelayRefusal, Step};
use blanket_protocol::wire::{Envelope, Message, RELAY_ID};
use blanket_protocol::ProtocolParams;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const RUN: [u8; 16] = [3; 16];

fn setup() -> (Relay, Vec<Client<ChaCha20Rng>>) {
    let params = ProtocolParams::new(20, 0.05, 0.1, 6, 3, 1).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let clients: Vec<Client<ChaCha20Rng>> = (0..20)
        .map(|i| {
            let keys = Keypair::generate(&mut rng);
            let mut r = ChaCha20Rng::seed_from_u64(100);
            r.set_stream(i as u64);
            Client::new(i, RUN, keys, vec![i as u64], r)
        })
        .collect();
    let dir = clients.iter().map(|c| c.public_key()).collect();
    let relay = Relay::new(params, RUN, [9; 32], dir, 1000).unwrap();
    (relay, clients)
}

#[test]
fn relay_refuses_replays_out_of_round_and_strangers() {
    let (mut relay, mut clients) = setup();
    let out = relay.start(0);
    let first = &out[0];
    let member = first.to;
    let reply = clients[member as usize]
        .handle(&first.bytes)
        .unwrap()
        .unwrap();
    relay.receive(member, &reply).unwrap();
    // The same bytes again: a replay.
    assert_eq!(
        relay.receive(member, &reply),
        Err(RelayRefusal::Replay { from: member })
    );
    // Someone else's bytes under another authenticated sender.
    let other = (0..20).find(|c| *c != member).unwrap();
    assert!(matches!(
        relay.receive(other, &reply),
        Err(RelayRefusal::SenderMismatch { .. })
    ));
    // A client not asked this round.
    let stranger = (0..20u32)
        .find(|c| !out.iter().any(|o| o.to == *c))
        .unwrap();
    let mut env = Envelope::from_bytes(&reply).unwrap();
    env.sender = stranger;
    assert_eq!(
        relay.receive(stranger, &env.to_bytes()),
        Err(RelayRefusal::NotExpected { from: stranger })
    );
    // Another run, another round.
    let mut env = Envelope::from_bytes(&reply).unwrap();
    env.run = [4; 16];
    assert_eq!(
        relay.receive(member, &env.to_bytes()),
        Err(RelayRefusal::WrongRun { from: member })
    );
    let mut env = Envelope::from_bytes(&reply).unwrap();
    env.round = 7;
    assert!(matches!(
        relay.receive(member, &env.to_bytes()),
        Err(RelayRefusal::WrongRound {
            got: 7,
            current: 1,
            ..
        })
    ));
    // Too early to close the round; after the deadline it closes.
    assert!(matches!(relay.advance(10), Err(RelayError::NotYet { .. })));
    for o in &out[1..] {
        let r = clients[o.to as usize].handle(&o.bytes).unwrap().unwrap();
        relay.receive(o.to, &r).unwrap();
    }
    assert!(relay.ready());
    let Ok(Step::Send(next)) = relay.advance(10) else {
        panic!("round 2 expected");
    };
    // The round-1 reply is now out of round.
    assert!(matches!(
        relay.receive(member, &reply),
        Err(RelayRefusal::WrongRound {
            got: 1,
            current: 2,
            ..
        })
    ));
    assert!(!next.is_empty());
}

#[test]
fn client_refuses_replays_misrouting_and_client_messages() {
    let (mut relay, mut clients) = setup();
    let out = relay.start(0);
    let o = &out[0];
    let c = &mut clients[o.to as usize];
    c.handle(&o.bytes).unwrap().unwrap();
    // The same request again: stale round.
    assert!(matches!(
        c.handle(&o.bytes),
        Err(ClientError::StaleRound { .. })
    ));
    // A later round with the same kind: already answered.
    let mut env = Envelope::from_bytes(&o.bytes).unwrap();
    env.round = 9;
    assert!(matches!(
        c.handle(&env.to_bytes()),
        Err(ClientError::Unexpected { .. })
    ));
    // Not from the relay, or for someone else, or another run.
    let mut env = Envelope::from_bytes(&o.bytes).unwrap();
    env.round = 10;
    env.sender = 3;
    assert!(matches!(
        c.handle(&env.to_bytes()),
        Err(ClientError::Misrouted { .. })
    ));
    env.sender = RELAY_ID;
    env.recipient = o.to + 1;
    assert!(matches!(
        c.handle(&env.to_bytes()),
        Err(ClientError::Misrouted { .. })
    ));
    env.recipient = o.to;
    env.run = [0; 16];
    assert!(matches!(
        c.handle(&env.to_bytes()),
        Err(ClientError::WrongRun)
    ));
    // A client-to-relay kind sent to a client.
    let env = Envelope {
        run: RUN,
        round: 11,
        sender: RELAY_ID,
        recipient: o.to,
        message: Message::DkgComplaints {
            dealers: vec![],
            signature: SchnorrProof {
                c: Default::default(),
                s: Default::default(),
            },
        },
    };
    assert!(matches!(
        c.handle(&env.to_bytes()),
        Err(ClientError::Unexpected { .. })
    ));
    // Garbage.
    assert!(matches!(c.handle(&[1, 2, 3]), Err(ClientError::Wire(_))));
}

#[test]
fn setup_has_a_real_committee() {
    let (relay, _) = setup();
    assert!(relay.params().committee >= 2, "{:?}", relay.params());
}
