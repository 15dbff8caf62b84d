//! A session's timeouts configuration
//! (<https://w3c.github.io/webdriver/#dfn-timeouts-configuration>).

use serde_json::Value;
use webdriver::command::TimeoutsParameters;
use webdriver::error::WebDriverResult;
use webdriver::response::TimeoutsResponse;

/// The timeouts, in ms; `None` is the spec's null: wait indefinitely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Timeouts {
    pub(super) script: Option<u64>,
    pub(super) page_load: Option<u64>,
    pub(super) implicit: Option<u64>,
}

impl Default for Timeouts {
    /// The spec's defaults: 30 s for scripts, 300 s for page loads, no implicit wait.
    fn default() -> Timeouts {
        Timeouts {
            script: Some(30_000),
            page_load: Some(300_000),
            implicit: Some(0),
        }
    }
}

impl Timeouts {
    /// Set Timeouts' update (<https://w3c.github.io/webdriver/#set-timeouts>): the crate has
    /// deserialized and validated `parameters`.
    pub(super) fn update(&mut self, parameters: &TimeoutsParameters) {
        if let Some(script) = parameters.script {
            self.script = script;
        }
        if let Some(page_load) = parameters.page_load {
            self.page_load = page_load;
        }
        if let Some(implicit) = parameters.implicit {
            self.implicit = implicit;
        }
    }

    /// The defaults updated with the `timeouts` capability, if any
    /// (<https://w3c.github.io/webdriver/#dfn-deserialize-as-timeouts-configuration>).
    pub(super) fn from_capability(capability: Option<&Value>) -> WebDriverResult<Timeouts> {
        let mut timeouts = Timeouts::default();
        if let Some(value) = capability {
            timeouts.update(&serde_json::from_value(value.clone())?);
        }
        Ok(timeouts)
    }

    /// <https://w3c.github.io/webdriver/#dfn-serialize-the-timeouts-configuration>
    pub(super) fn response(&self) -> TimeoutsResponse {
        TimeoutsResponse::new(self.script, self.page_load, self.implicit)
    }

    /// The timeouts object, as in the session's capabilities.
    pub(super) fn json(&self) -> Value {
        serde_json::json!({
            "script": self.script,
            "pageLoad": self.page_load,
            "implicit": self.implicit,
        })
    }
}
