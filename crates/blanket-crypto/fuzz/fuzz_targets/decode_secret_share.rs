#![no_main]
//! Fuzz target: decode_secret_share must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = blanket_crypto::dkg::SecretShare::from_bytes(data) {
        assert_eq!(&s.to_bytes()[..], data);
    }
});
