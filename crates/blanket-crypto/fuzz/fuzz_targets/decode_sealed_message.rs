#![no_main]
//! Fuzz target: decode_sealed_message must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = blanket_crypto::channel::SealedMessage::from_bytes(data) {
        assert_eq!(m.to_bytes(), data);
    }
});
