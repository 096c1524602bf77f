//! libFuzzer driver of the `rows` target (`sparring_fuzz::rows`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparring_fuzz::run("rows", sparring_fuzz::process_scratch(), data);
});
