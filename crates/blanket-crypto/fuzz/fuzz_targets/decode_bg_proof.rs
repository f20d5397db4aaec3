#![no_main]
//! Fuzz target: the Bayer-Groth proof decoder must never panic, and whatever
//! it accepts must re-encode to the same bytes (all accepted encodings are
//! canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = blanket_crypto::shuffle::bayer_groth::BgProof::from_bytes(data) {
        assert_eq!(p.to_bytes(), data);
    }
});
