#![no_main]
//! Fuzz target: decode_ciphertext must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = blanket_crypto::Ciphertext::from_bytes(data) {
        assert_eq!(&c.to_bytes()[..], data);
    }
});
