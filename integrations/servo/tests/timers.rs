//! Timers that fall due in the same turn, the first one's script collecting garbage: every
//! one of them runs. Servo 0.7.0 moved due timers into an untraced list before running them,
//! so a collection in the first one's script freed the callbacks that only the others held,
//! and calling the next one crashed the script thread (servo/servo#22628); patch
//! `servo-script.13` keeps them rooted. The `gc` marker tests (`JsprofTestBindings.gc()`
//! under testharness.js, whose `step_timeout` wraps each callback in a fresh function) met
//! it first. jsprof's own engine prints the same line.

mod common;

use std::path::Path;

use common::jsprof_servo_with;

#[test]
fn timers_due_together_all_run_after_a_collection_in_the_first() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pages/gc-between-timers.html");
    let page = page.to_str().expect("UTF-8 path");
    let console = jsprof_servo_with(page, None, &["--pref", "dom.testing.enabled=true"]);
    assert_eq!(console, "8 timers ran\n");
}
