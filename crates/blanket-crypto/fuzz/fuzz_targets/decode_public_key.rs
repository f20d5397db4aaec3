#![no_main]
//! Fuzz target: decode_public_key must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(k) = blanket_crypto::PublicKey::from_bytes(data) {
        assert_eq!(&k.to_bytes()[..], data);
    }
});
