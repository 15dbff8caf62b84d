//! New Session's capabilities: what jsprof offers, and matching a request against it
//! (<https://w3c.github.io/webdriver/#capabilities>).

use serde_json::{json, Map, Value};
use webdriver::capabilities::{
    BrowserCapabilities, Capabilities, CapabilitiesMatching, SpecNewSessionParameters,
};
use webdriver::error::{ErrorStatus, WebDriverError, WebDriverResult};

use super::timeouts::Timeouts;

const BROWSER_NAME: &str = "jsprof";
const BROWSER_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The spec's default user prompt handler; jsprof's pages have no prompts.
const PROMPT_BEHAVIOR: &str = "dismiss and notify";

/// The spec's platform name for this OS (`linux`, `mac`, `windows`…).
fn platform_name() -> &'static str {
    match std::env::consts::OS {
        "macos" => "mac",
        os => os,
    }
}

/// Processes capabilities (<https://w3c.github.io/webdriver/#dfn-processing-capabilities>):
/// the first merged `alwaysMatch` + `firstMatch` entry jsprof matches, `invalid argument` if
/// any entry is invalid, `session not created` if none matches.
pub(super) fn negotiate(request: &SpecNewSessionParameters) -> WebDriverResult<Capabilities> {
    // Validates every entry (and that none shadows `alwaysMatch`) before matching any.
    request.match_browser(&mut Jsprof)?;
    let default = [Capabilities::new()];
    let first_matches = match request.firstMatch.as_slice() {
        [] => &default[..],
        entries => entries,
    };
    for first_match in first_matches {
        if let Some(matched) = match_one(request, first_match)? {
            return Ok(matched);
        }
    }
    Err(WebDriverError::new(
        ErrorStatus::SessionNotCreated,
        format!(
            "no capabilities match jsprof's: browserName {BROWSER_NAME:?}, browserVersion \
             {BROWSER_VERSION:?}, platformName {:?}, acceptInsecureCerts false, \
             pageLoadStrategy \"normal\", no proxy, no webSocketUrl",
            platform_name()
        ),
    ))
}

/// Matches `alwaysMatch` merged with one `firstMatch` entry: the crate's matching, and the
/// page load strategy, which it leaves to the browser.
fn match_one(
    request: &SpecNewSessionParameters,
    first_match: &Capabilities,
) -> WebDriverResult<Option<Capabilities>> {
    let one = SpecNewSessionParameters {
        alwaysMatch: request.alwaysMatch.clone(),
        firstMatch: vec![first_match.clone()],
    };
    let matched = one.match_browser(&mut Jsprof)?;
    Ok(matched.filter(|capabilities| {
        capabilities
            .get("pageLoadStrategy")
            .is_none_or(|strategy| strategy == "normal")
    }))
}

/// The new session's capabilities (<https://w3c.github.io/webdriver/#new-session>), from the
/// matched ones.
pub(super) fn session_capabilities(matched: &Capabilities, timeouts: &Timeouts) -> Value {
    let prompts = matched
        .get("unhandledPromptBehavior")
        .cloned()
        .unwrap_or_else(|| PROMPT_BEHAVIOR.into());
    json!({
        "browserName": BROWSER_NAME,
        "browserVersion": BROWSER_VERSION,
        "platformName": platform_name(),
        "acceptInsecureCerts": false,
        "pageLoadStrategy": "normal",
        "setWindowRect": true,
        "strictFileInteractability": false,
        "timeouts": timeouts.json(),
        "proxy": {},
        "unhandledPromptBehavior": prompts,
        "jsprof:forceSample": true,
    })
}

/// jsprof, as the crate's capability matching asks about it.
struct Jsprof;

impl BrowserCapabilities for Jsprof {
    fn init(&mut self, _: &Capabilities) {}

    fn browser_name(&mut self, _: &Capabilities) -> WebDriverResult<Option<String>> {
        Ok(Some(BROWSER_NAME.to_owned()))
    }

    fn browser_version(&mut self, _: &Capabilities) -> WebDriverResult<Option<String>> {
        Ok(Some(BROWSER_VERSION.to_owned()))
    }

    /// Only the exact version matches.
    fn compare_browser_version(
        &mut self,
        version: &str,
        comparison: &str,
    ) -> WebDriverResult<bool> {
        Ok(version == comparison)
    }

    fn platform_name(&mut self, _: &Capabilities) -> WebDriverResult<Option<String>> {
        Ok(Some(platform_name().to_owned()))
    }

    fn accept_insecure_certs(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn set_window_rect(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(true)
    }

    fn strict_file_interactability(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn web_socket_url(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn webauthn_virtual_authenticators(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn webauthn_extension_uvm(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn webauthn_extension_prf(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn webauthn_extension_large_blob(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    fn webauthn_extension_cred_blob(&mut self, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(false)
    }

    /// Pages are fetched directly: only an empty proxy configuration matches.
    fn accept_proxy(
        &mut self,
        proxy: &Map<String, Value>,
        _: &Capabilities,
    ) -> WebDriverResult<bool> {
        Ok(proxy.is_empty())
    }

    /// Other vendors' extension capabilities are ignored; of jsprof's, `jsprof:options` must
    /// be an empty object and `jsprof:forceSample` a boolean.
    fn validate_custom(&mut self, name: &str, value: &Value) -> WebDriverResult<()> {
        let valid = match name {
            "jsprof:options" => value.as_object().is_some_and(Map::is_empty),
            "jsprof:forceSample" => value.is_boolean(),
            _ => !name.starts_with("jsprof:"),
        };
        if valid {
            Ok(())
        } else {
            Err(WebDriverError::new(
                ErrorStatus::InvalidArgument,
                format!(
                    "{name} is not a jsprof capability, or not with {value}: jsprof has \
                     jsprof:options (an empty object) and jsprof:forceSample (a boolean)"
                ),
            ))
        }
    }

    /// Every valid extension capability matches (Force Sample is always available).
    fn accept_custom(&mut self, _: &str, _: &Value, _: &Capabilities) -> WebDriverResult<bool> {
        Ok(true)
    }
}
