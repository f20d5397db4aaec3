#![no_main]
//! Fuzz target: decode_dealing must never panic, and whatever it accepts must
//! re-encode to the same bytes (all accepted encodings are canonical).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = blanket_crypto::dkg::Dealing::from_bytes(data) {
        assert_eq!(d.to_bytes(), data);
        // Checking the proof of an accepted dealing must not panic.
        if let Ok(params) = blanket_crypto::dkg::DkgParams::new(
            d.dealer.max(1),
            d.commitments().len() as u32,
            b"fuzz",
        ) {
            let _ = blanket_crypto::dkg::verify_dealing(&params, &d);
        }
    }
});
