#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| jsprof_intake::fuzz::intake_sentry(data));
