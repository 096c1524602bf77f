//! libFuzzer driver of the `protocol` target (`sparring_fuzz::protocol`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparring_fuzz::run("protocol", sparring_fuzz::process_scratch(), data);
});
