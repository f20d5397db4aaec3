//! Property-based fuzzing of the wire decoders (proptest, stable Rust): arbitrary bytes never
//! panic and are either refused with a typed reason or decode to something that encodes back
//! to the same bytes; every valid report round-trips; every change of length is refused.
//! The message decoders of the multi-message tasks (vector-sum coordinate messages, IKOS
//! shares) take any u32 without panicking and reject exactly the messages outside the
//! protocol's domain; a user's bulk upload (its reports concatenated) splits back into them.

use blanket_server::aggregate::absorb_batch;
use blanket_server::multi::{decode_coordinate, encode_coordinate};
use blanket_server::task::{calibrate_task, Protocol, TaskConfig, TaskRequest};
use blanket_server::wire::{
    Batch, Report, Sealed, TaskId, BATCH_HEADER_LEN, CIPHERTEXT_LEN, ITEM_LEN, REPORT_LEN,
};
use blanket_server::Rejection;
use proptest::prelude::*;
use std::sync::OnceLock;

fn config(protocol: Protocol) -> TaskConfig {
    calibrate_task(
        TaskId([7; 16]),
        TaskRequest {
            protocol,
            eps: 8.0,
            delta: 1e-3,
            expected_users: 100,
            min_batch: 100,
            deadline_unix: 1 << 40,
            budget_eps: 8.0,
            budget_delta: 1e-3,
        },
    )
    .unwrap()
}

/// A vector-sum task with d = 5, t = 2, k = 3 (20 valid messages).
fn vector_config() -> &'static TaskConfig {
    static C: OnceLock<TaskConfig> = OnceLock::new();
    C.get_or_init(|| {
        config(Protocol::VectorSum {
            d: 5,
            t: Some(2),
            k: Some(3),
        })
    })
}

/// An IKOS-sum task (its q is 2^modulus_bits).
fn ikos_config() -> &'static TaskConfig {
    static C: OnceLock<TaskConfig> = OnceLock::new();
    C.get_or_init(|| {
        config(Protocol::IkosSum {
            sigma: None,
            calibrated: None,
        })
    })
}

fn sealed() -> impl Strategy<Value = Sealed> {
    (
        any::<[u8; 32]>(),
        proptest::collection::vec(any::<u8>(), CIPHERTEXT_LEN),
    )
        .prop_map(|(enc, ct)| Sealed {
            enc,
            ct: ct.try_into().unwrap(),
        })
}

fn report() -> impl Strategy<Value = Report> {
    (any::<[u8; 16]>(), any::<[u8; 16]>(), sealed()).prop_map(|(t, id, sealed)| Report {
        task: TaskId(t),
        id,
        sealed,
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_f022),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        match Report::decode(&bytes) {
            Ok(r) => prop_assert_eq!(&r.encode(), &bytes),
            Err(e) => prop_assert!(e.status().is_client_error(), "{e:?}"),
        }
        match Batch::decode(&bytes) {
            Ok(b) => prop_assert_eq!(&b.encode(), &bytes),
            Err(e) => prop_assert!(e.status().is_client_error(), "{e:?}"),
        }
    }

    #[test]
    fn reports_round_trip_and_any_length_change_is_refused(
        r in report(),
        cut in 0..REPORT_LEN,
        extra in proptest::collection::vec(any::<u8>(), 1..40),
    ) {
        let b = r.encode();
        prop_assert_eq!(Report::decode(&b), Ok(r));
        let short = Report::decode(&b[..cut]).unwrap_err();
        let is_length_or_version = matches!(short, Rejection::WrongLength { .. } | Rejection::UnsupportedVersion { .. });
        prop_assert!(is_length_or_version);
        let mut long = b.clone();
        long.extend_from_slice(&extra);
        let is_length = matches!(Report::decode(&long), Err(Rejection::WrongLength { .. }));
        prop_assert!(is_length);
    }

    #[test]
    fn batches_round_trip_and_mutated_headers_are_refused(
        task in any::<[u8; 16]>(),
        id in any::<[u8; 16]>(),
        items in proptest::collection::vec((any::<[u8; 16]>(), sealed()), 0..20),
        count in any::<u32>(),
    ) {
        let b = Batch { task: TaskId(task), id, sealed: items };
        let bytes = b.encode();
        prop_assert_eq!(bytes.len(), BATCH_HEADER_LEN + b.sealed.len() * ITEM_LEN);
        prop_assert_eq!(Batch::decode(&bytes), Ok(b.clone()));
        let mut lie = bytes.clone();
        lie[33..37].copy_from_slice(&count.to_be_bytes());
        if count as usize != b.sealed.len() {
            prop_assert!(Batch::decode(&lie).is_err());
        }
    }

    #[test]
    fn bulk_bodies_split_into_their_reports(
        rs in proptest::collection::vec(report(), 1..12),
        cut in 1..REPORT_LEN,
    ) {
        let body: Vec<u8> = rs.iter().flat_map(Report::encode).collect();
        let back: Vec<Report> = body
            .chunks_exact(REPORT_LEN)
            .map(|c| Report::decode(c).unwrap())
            .collect();
        prop_assert_eq!(&back, &rs);
        // A truncated body leaves a short last piece, refused by its length.
        let short = &body[..body.len() - cut];
        prop_assert!(!short.len().is_multiple_of(REPORT_LEN));
        let last = short.chunks(REPORT_LEN).last().unwrap();
        prop_assert!(Report::decode(last).is_err());
    }

    #[test]
    fn vector_messages_never_panic_and_out_of_domain_is_rejected(
        msgs in proptest::collection::vec(any::<u32>(), 0..64),
        small in proptest::collection::vec(0u32..24, 0..64),
    ) {
        let c = vector_config();
        let all: Vec<Option<u32>> = msgs.iter().chain(&small).map(|&m| Some(m)).collect();
        let o = absorb_batch(c, &all, &vec![true; all.len()]).unwrap();
        // d = 5 coordinates of k + 1 = 4 levels: exactly the messages below 20 are valid.
        let valid = all.iter().filter(|m| m.unwrap() < 20).count() as u64;
        prop_assert_eq!(o.state.reports(), valid);
        prop_assert_eq!(o.rejected, all.len() as u64 - valid);
        for &m in &small {
            let (j, y) = decode_coordinate(m, 3);
            prop_assert_eq!(encode_coordinate(j, y, 3), m);
        }
    }

    #[test]
    fn ikos_shares_never_panic_and_shares_outside_zq_are_rejected(
        msgs in proptest::collection::vec(any::<u32>(), 0..64),
    ) {
        let c = ikos_config();
        let Protocol::IkosSum { calibrated: Some(p), .. } = c.request.protocol else {
            panic!("{:?}", c.request.protocol)
        };
        let q = 1u64 << p.modulus_bits;
        let all: Vec<Option<u32>> = msgs.iter().map(|&m| Some(m)).collect();
        let o = absorb_batch(c, &all, &vec![true; all.len()]).unwrap();
        let valid = msgs.iter().filter(|&&m| u64::from(m) < q).count() as u64;
        prop_assert_eq!(o.state.reports(), valid);
        prop_assert_eq!(o.rejected, msgs.len() as u64 - valid);
        let e = o.state.estimate(c).unwrap();
        prop_assert!(e["sum"].as_f64().unwrap().is_finite());
    }
}
