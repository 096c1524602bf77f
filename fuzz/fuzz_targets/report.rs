//! libFuzzer driver of the `report` target (`sparring_fuzz::report`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparring_fuzz::run("report", sparring_fuzz::process_scratch(), data);
});
