//! `JsprofTestBindings` (webidl/internal/testing.webidl): an engine-internal interface, exposed
//! only with `--pref dom.testing.enabled=true`, through which tests/pages/bindings exercises
//! the generated bindings (constructor, attribute, operations, promise-returning operation,
//! dictionaries, sequences, optional arguments, every numeric conversion) from real script.

use jsprof_script_bindings::generated::{JsprofTestBindingsMethods, JsprofTestEcho};
use jsprof_script_bindings::host::Global;
use jsprof_script_bindings::runtime::{DomObject, Error, Fallible, Promise, Reflector};

#[derive(Debug)]
pub struct JsprofTestBindings {
    reflector: Reflector,
    label: String,
}

impl DomObject for JsprofTestBindings {
    fn reflector(&self) -> &Reflector {
        &self.reflector
    }
}

impl JsprofTestBindingsMethods for JsprofTestBindings {
    fn constructor(_global: &Global, label: Option<String>) -> Fallible<Self> {
        Ok(JsprofTestBindings {
            reflector: Reflector::default(),
            label: label.unwrap_or_else(|| "unlabelled".into()),
        })
    }

    fn label(&self) -> String {
        // Nothing is pending on a test object: let the reflector be collected.
        self.reflector.release();
        self.label.clone()
    }

    #[allow(clippy::panic, reason = "the point of this test-only member")]
    fn crash_for_testing(&self, _global: &Global) -> Fallible<()> {
        panic!("JsprofTestBindings.crashForTesting() was called");
    }

    fn abort_for_testing(&self, _global: &Global) -> Fallible<()> {
        std::process::abort()
    }

    fn gc(&self, _global: &Global) -> Fallible<()> {
        jsprof_spidermonkey::collect_garbage();
        Ok(())
    }

    /// Returns the converted dictionary, converted back to JS.
    fn echo(&self, _global: &Global, value: JsprofTestEcho) -> Fallible<JsprofTestEcho> {
        Ok(value)
    }

    fn words(
        &self,
        _global: &Global,
        input: Vec<String>,
        reverse: Option<bool>,
    ) -> Fallible<Vec<String>> {
        let mut words = input;
        if reverse == Some(true) {
            words.reverse();
        }
        Ok(words)
    }

    /// Resolves with `value` in a later task; rejects (later) with an `InvalidStateError` for
    /// 0 and (now, through the bindings) with a `RangeError` for a negative value.
    fn later(&self, global: &Global, value: i64, promise: Promise<i64>) -> Fallible<()> {
        if value < 0 {
            return Err(Error::Range(format!("later({value}): negative")));
        }
        let window = global.window;
        let settlement = if value == 0 {
            promise.rejected(Error::invalid_state("later(0)"))
        } else {
            promise.resolved(&value)
        };
        global
            .host
            .tasks(window)
            .expect()
            .queue(Box::new(move |js| js.settle(window, settlement)));
        Ok(())
    }
}
