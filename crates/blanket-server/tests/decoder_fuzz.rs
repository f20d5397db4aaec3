//! Property-based fuzzing of the wire decoders (proptest, stable Rust): arbitrary bytes never
//! panic and are either refused with a typed reason or decode to something that encodes back
//! to the same bytes; every valid report round-trips; every change of length is refused.

use blanket_server::wire::{
    Batch, Report, Sealed, TaskId, BATCH_HEADER_LEN, CIPHERTEXT_LEN, REPORT_LEN, SEALED_LEN,
};
use blanket_server::Rejection;
use proptest::prelude::*;

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
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

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
        items in proptest::collection::vec(sealed(), 0..20),
        count in any::<u32>(),
    ) {
        let b = Batch { task: TaskId(task), id, sealed: items };
        let bytes = b.encode();
        prop_assert_eq!(bytes.len(), BATCH_HEADER_LEN + b.sealed.len() * SEALED_LEN);
        prop_assert_eq!(Batch::decode(&bytes), Ok(b.clone()));
        let mut lie = bytes.clone();
        lie[33..37].copy_from_slice(&count.to_be_bytes());
        if count as usize != b.sealed.len() {
            prop_assert!(Batch::decode(&lie).is_err());
        }
    }
}
