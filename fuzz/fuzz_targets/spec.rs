//! libFuzzer driver of the `spec` target (`sparring_fuzz::spec`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparring_fuzz::run("spec", sparring_fuzz::process_scratch(), data);
});
