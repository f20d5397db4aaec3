#![no_main]
//! Fuzz target: decode_client_submission must never panic, and whatever it accepts
//! must re-encode to the same bytes (all accepted encodings are canonical);
//! the relay's check of an accepted submission must not panic either.
use blanket_crypto::submission::{verify_submission, ClientSubmission, SubmissionContext};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = ClientSubmission::from_bytes(data) {
        assert_eq!(&s.to_bytes()[..], data);
        let pk = blanket_crypto::SecretKey::from_scalar(
            blanket_crypto::curve25519_dalek::scalar::Scalar::from(7u8),
        )
        .map(|k| k.public_key());
        if let Ok(pk) = pk {
            let ctx = SubmissionContext {
                run: b"fuzz",
                task: b"fuzz",
            };
            let _ = verify_submission(&pk, &ctx, &s);
        }
    }
});
