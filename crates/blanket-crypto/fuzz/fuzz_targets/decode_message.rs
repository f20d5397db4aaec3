#![no_main]
//! Fuzz target: decode_message must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(arr) = <[u8; 32]>::try_from(data) {
        let c = blanket_crypto::curve25519_dalek::ristretto::CompressedRistretto(arr);
        if let (Some(p), Ok(m)) = (
            c.decompress(),
            blanket_crypto::encoding::decode_compressed(&c),
        ) {
            assert_eq!(blanket_crypto::encoding::decode_u64(&p), Ok(m));
            // Only the canonical encoding of m is accepted.
            assert_eq!(
                blanket_crypto::encoding::encode_u64_vartime(m).map(|q| q.compress()),
                Ok(c)
            );
        }
    }
});
