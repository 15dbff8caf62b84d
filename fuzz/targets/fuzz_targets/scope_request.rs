#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| jsprof_fuzz_properties::scope_request(data));
