#![no_main]
//! Fuzz target: decode_schnorr_proof must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = blanket_crypto::schnorr::SchnorrProof::from_bytes(data) {
        assert_eq!(&p.to_bytes()[..], data);
    }
});
