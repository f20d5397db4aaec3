#![no_main]
//! Fuzz target: decode_ciphertext_list must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(l) = blanket_crypto::elgamal::decode_ciphertexts(data) {
        assert_eq!(blanket_crypto::elgamal::encode_ciphertexts(&l), data);
    }
});
