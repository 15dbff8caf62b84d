//! The WebDriver server over HTTP, driving a fake browser.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsprof_webdriver::server::{serve, Server};
use jsprof_webdriver::{
    Browser, Command, Error, ErrorKind, Frame, Locator, Navigation, Responder, ELEMENT_KEY,
};
use serde_json::{json, Value};

/// How a fake browser answers a command: call the responder, keep it, or drop it.
type Answer = Box<dyn Fn(&Command, Responder) + Send + Sync>;

/// A browser that records its commands and answers them with `answer`.
struct Fake {
    commands: Mutex<Vec<Command>>,
    answer: Answer,
}

impl Browser for Fake {
    fn send(&self, command: Command, respond: Responder) {
        self.commands.lock().unwrap().push(command.clone());
        (self.answer)(&command, respond);
    }
}

/// A server on a fake browser, and an HTTP client for it.
struct Driver {
    browser: Arc<Fake>,
    server: Server,
    http: reqwest::blocking::Client,
}

impl Driver {
    /// Every command answered null.
    fn new() -> Driver {
        Driver::answering(|_, respond| respond(Ok(Value::Null)))
    }

    fn answering(answer: impl Fn(&Command, Responder) + Send + Sync + 'static) -> Driver {
        let browser = Arc::new(Fake {
            commands: Mutex::new(Vec::new()),
            answer: Box::new(answer),
        });
        let server = serve(0, browser.clone()).expect("the server starts");
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap();
        Driver {
            browser,
            server,
            http,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server.address())
    }

    fn send(&self, request: reqwest::blocking::RequestBuilder) -> (u16, Value) {
        let response = request.send().expect("the server answers");
        let status = response.status().as_u16();
        (status, response.json().expect("a JSON body"))
    }

    fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(self.url(path)))
    }

    fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(self.http.post(self.url(path)).json(&body))
    }

    fn delete(&self, path: &str) -> (u16, Value) {
        self.send(self.http.delete(self.url(path)))
    }

    /// Starts a session with no capabilities requested: its id.
    fn session(&self) -> String {
        let (status, body) = self.post("/session", json!({"capabilities": {}}));
        assert_eq!(status, 200, "{body}");
        body["value"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// The commands the browser got, and forgets them.
    fn commands(&self) -> Vec<Command> {
        std::mem::take(&mut *self.browser.commands.lock().unwrap())
    }
}

/// Asserts that `(status, body)` is the error `code` with `status`, in the spec's shape.
fn assert_error((status, body): (u16, Value), expected_status: u16, code: &str) {
    assert_eq!(status, expected_status, "{body}");
    let error = body["value"].as_object().expect("an error object");
    assert_eq!(error["error"], code, "{body}");
    assert!(error["message"].is_string(), "{body}");
    assert!(error["stacktrace"].is_string(), "{body}");
}

fn element(id: &str) -> Value {
    json!({ ELEMENT_KEY: id })
}

#[test]
fn new_session_returns_jsprof_capabilities_and_resets() {
    let driver = Driver::new();
    let (status, body) = driver.post(
        "/session",
        json!({"capabilities": {"alwaysMatch": {"browserName": "jsprof"}}}),
    );
    assert_eq!(status, 200, "{body}");
    let value = &body["value"];
    assert!(value["sessionId"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(
        value["capabilities"],
        json!({
            "browserName": "jsprof",
            "browserVersion": env!("CARGO_PKG_VERSION"),
            "platformName": std::env::consts::OS,
            "acceptInsecureCerts": false,
            "pageLoadStrategy": "normal",
            "setWindowRect": true,
            "strictFileInteractability": false,
            "timeouts": {"script": 30000, "pageLoad": 300000, "implicit": 0},
            "proxy": {},
            "unhandledPromptBehavior": "dismiss and notify",
            "jsprof:forceSample": true,
        })
    );
    assert_eq!(driver.commands(), []);
}

#[test]
fn new_session_picks_the_first_matching_first_match() {
    let driver = Driver::new();
    let (status, body) = driver.post(
        "/session",
        json!({"capabilities": {
            "alwaysMatch": {"timeouts": {"script": null, "implicit": 5}, "goog:chromeOptions": {"x": 1}},
            "firstMatch": [
                {"browserName": "firefox"},
                {"pageLoadStrategy": "eager"},
                {"pageLoadStrategy": "normal", "jsprof:options": {}, "unhandledPromptBehavior": "accept"},
            ],
        }}),
    );
    assert_eq!(status, 200, "{body}");
    let capabilities = &body["value"]["capabilities"];
    assert_eq!(
        capabilities["timeouts"],
        json!({"script": null, "pageLoad": 300000, "implicit": 5})
    );
    assert_eq!(capabilities["unhandledPromptBehavior"], "accept");
    assert!(capabilities.get("goog:chromeOptions").is_none());
}

#[test]
fn new_session_rejects_invalid_capabilities() {
    let driver = Driver::new();
    for capabilities in [
        json!({"alwaysMatch": {"noSuchCapability": true}}),
        json!({"firstMatch": [{}, {"noSuchCapability": true}]}),
        json!({"alwaysMatch": {"jsprof:options": {"sampleInterval": 1}}}),
        json!({"alwaysMatch": {"jsprof:unknown": true}}),
        json!({"alwaysMatch": {"timeouts": {"script": -1}}}),
        json!({"alwaysMatch": {"browserName": "jsprof"}, "firstMatch": [{"browserName": "jsprof"}]}),
    ] {
        let response = driver.post("/session", json!({ "capabilities": capabilities }));
        assert_error(response, 400, "invalid argument");
    }
    assert_eq!(driver.commands(), []);
}

#[test]
fn new_session_fails_when_nothing_matches() {
    let driver = Driver::new();
    for always_match in [
        json!({"acceptInsecureCerts": true}),
        json!({"browserName": "firefox"}),
        json!({"browserVersion": "0.0.0-no"}),
        json!({"platformName": "templeos"}),
        json!({"pageLoadStrategy": "none"}),
        json!({"proxy": {"proxyType": "manual", "httpProxy": "proxy:8080"}}),
        json!({"webSocketUrl": true}),
    ] {
        let response = driver.post(
            "/session",
            json!({"capabilities": {"alwaysMatch": always_match}}),
        );
        assert_error(response, 500, "session not created");
    }
    assert_eq!(driver.commands(), []);
}

#[test]
fn one_session_at_a_time() {
    let driver = Driver::new();
    driver.session();
    let response = driver.post("/session", json!({"capabilities": {}}));
    assert_error(response, 500, "session not created");
}

#[test]
fn status_and_delete_session() {
    let driver = Driver::new();
    let (status, body) = driver.get("/status");
    assert_eq!(status, 200);
    assert_eq!(body["value"]["ready"], true);
    assert!(body["value"]["message"].is_string());

    let id = driver.session();
    assert_eq!(driver.get("/status").1["value"]["ready"], false);
    driver.commands();

    assert_eq!(
        driver.delete(&format!("/session/{id}")),
        (200, json!({"value": null}))
    );
    assert_eq!(driver.commands(), [Command::Reset]);
    assert_eq!(driver.get("/status").1["value"]["ready"], true);
    assert_error(
        driver.get(&format!("/session/{id}/title")),
        404,
        "invalid session id",
    );
    driver.session();
}

#[test]
fn unknown_session_id() {
    let driver = Driver::new();
    assert_error(driver.get("/session/nope/title"), 404, "invalid session id");
    assert_error(driver.delete("/session/nope"), 404, "invalid session id");
    driver.session();
    assert_error(driver.get("/session/nope/title"), 404, "invalid session id");
    assert_error(
        driver.post("/session/nope/url", json!({"url": "about:blank"})),
        404,
        "invalid session id",
    );
}

#[test]
fn timeouts() {
    let driver = Driver::new();
    let id = driver.session();
    let path = format!("/session/{id}/timeouts");
    assert_eq!(
        driver.get(&path),
        (
            200,
            json!({"value": {"script": 30000, "pageLoad": 300000, "implicit": 0}})
        )
    );
    assert_eq!(
        driver.post(&path, json!({"script": null, "implicit": 250})),
        (200, json!({"value": null}))
    );
    assert_eq!(
        driver.get(&path).1,
        json!({"value": {"script": null, "pageLoad": 300000, "implicit": 250}})
    );
    assert_error(
        driver.post(&path, json!({"pageLoad": -1})),
        400,
        "invalid argument",
    );
    assert_error(
        driver.post(&path, json!({"implicit": 0.5})),
        400,
        "invalid argument",
    );

    // A new session starts with the defaults again.
    driver.delete(&format!("/session/{id}"));
    let id = driver.session();
    assert_eq!(
        driver.get(&format!("/session/{id}/timeouts")).1["value"]["script"],
        30000
    );
}

#[test]
fn navigation_and_document() {
    let driver = Driver::answering(|command, respond| {
        respond(Ok(match command {
            Command::CurrentUrl => json!("https://example.test/"),
            Command::Title => json!("Example"),
            Command::PageSource => json!("<html></html>"),
            _ => Value::Null,
        }))
    });
    let id = driver.session();
    driver.commands();
    let session = format!("/session/{id}");
    let url = "https://example.test/";
    assert_eq!(
        driver.post(&format!("{session}/url"), json!({ "url": url })),
        (200, json!({"value": null}))
    );
    assert_error(
        driver.post(&format!("{session}/url"), json!({"url": "relative/path"})),
        400,
        "invalid argument",
    );
    driver.post(&format!("{session}/back"), json!({}));
    driver.post(&format!("{session}/forward"), json!({}));
    driver.post(&format!("{session}/refresh"), json!({}));
    assert_eq!(driver.get(&format!("{session}/url")).1["value"], url);
    assert_eq!(
        driver.get(&format!("{session}/title")).1["value"],
        "Example"
    );
    assert_eq!(
        driver.get(&format!("{session}/source")).1["value"],
        "<html></html>"
    );
    assert_eq!(
        driver.commands(),
        [
            Command::Navigate(Navigation::To(url.to_owned())),
            Command::Navigate(Navigation::Back),
            Command::Navigate(Navigation::Forward),
            Command::Navigate(Navigation::Refresh),
            Command::CurrentUrl,
            Command::Title,
            Command::PageSource,
        ]
    );
}

#[test]
fn navigation_times_out_with_the_page_load_timeout() {
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    let driver = Driver::answering(move |command, respond| match command {
        Command::Navigate(_) => keep.lock().unwrap().push(respond),
        _ => respond(Ok(Value::Null)),
    });
    let id = driver.session();
    driver.post(&format!("/session/{id}/timeouts"), json!({"pageLoad": 200}));
    let response = driver.post(
        &format!("/session/{id}/url"),
        json!({"url": "https://example.test/"}),
    );
    assert_error(response, 500, "timeout");
    assert_eq!(held.lock().unwrap().len(), 1);
}

#[test]
fn execute_script() {
    let driver = Driver::answering(|command, respond| {
        respond(Ok(match command {
            Command::Execute { args, .. } => json!({ "args": args }),
            _ => Value::Null,
        }))
    });
    let id = driver.session();
    driver.commands();
    let args = json!([1, "two", element("e1")]);
    let (status, body) = driver.post(
        &format!("/session/{id}/execute/sync"),
        json!({"script": "return arguments;", "args": args}),
    );
    assert_eq!((status, &body), (200, &json!({"value": {"args": args}})));
    driver.post(
        &format!("/session/{id}/execute/async"),
        json!({"script": "arguments[0](1);", "args": []}),
    );
    assert_eq!(
        driver.commands(),
        [
            Command::Execute {
                body: "return arguments;".to_owned(),
                args: args.as_array().unwrap().clone(),
                is_async: false,
            },
            Command::Execute {
                body: "arguments[0](1);".to_owned(),
                args: Vec::new(),
                is_async: true,
            },
        ]
    );
}

#[test]
fn script_errors_are_the_browsers() {
    let driver = Driver::answering(|command, respond| {
        respond(match command {
            Command::Execute { .. } => Err(Error::new(ErrorKind::JavascriptError, "boom")),
            _ => Ok(Value::Null),
        })
    });
    let id = driver.session();
    let (status, body) = driver.post(
        &format!("/session/{id}/execute/sync"),
        json!({"script": "throw 1;", "args": []}),
    );
    assert_eq!(status, 500);
    assert_eq!(
        body,
        json!({"value": {"error": "javascript error", "message": "boom", "stacktrace": ""}})
    );
}

#[test]
fn script_timeout_when_the_browser_does_not_answer() {
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    let driver = Driver::answering(move |command, respond| match command {
        Command::Execute { .. } => keep.lock().unwrap().push(respond),
        Command::Title => respond(Ok(json!("still here"))),
        _ => respond(Ok(Value::Null)),
    });
    let id = driver.session();
    driver.post(&format!("/session/{id}/timeouts"), json!({"script": 200}));
    let response = driver.post(
        &format!("/session/{id}/execute/async"),
        json!({"script": "", "args": []}),
    );
    assert_error(response, 500, "script timeout");

    // A late reply goes nowhere, and the server goes on.
    let respond = held.lock().unwrap().pop().unwrap();
    respond(Ok(json!("late")));
    assert_eq!(
        driver.get(&format!("/session/{id}/title")).1["value"],
        "still here"
    );
}

#[test]
fn a_browser_that_drops_the_command_is_an_unknown_error() {
    let driver = Driver::answering(|command, respond| match command {
        Command::Title => drop(respond),
        _ => respond(Ok(Value::Null)),
    });
    let id = driver.session();
    assert_error(
        driver.get(&format!("/session/{id}/title")),
        500,
        "unknown error",
    );
}

#[test]
fn find_element_waits_implicitly() {
    let replies = Mutex::new(VecDeque::from([
        json!([]),
        json!([]),
        json!([element("e7")]),
    ]));
    let driver = Driver::answering(move |command, respond| {
        respond(Ok(match command {
            Command::FindElements { .. } => replies.lock().unwrap().pop_front().unwrap(),
            _ => Value::Null,
        }))
    });
    let id = driver.session();
    driver.post(
        &format!("/session/{id}/timeouts"),
        json!({"implicit": 60000}),
    );
    driver.commands();
    let (status, body) = driver.post(
        &format!("/session/{id}/element"),
        json!({"using": "css selector", "value": "p.late"}),
    );
    assert_eq!((status, body), (200, json!({"value": element("e7")})));
    let find = Command::FindElements {
        root: None,
        using: Locator::Css,
        value: "p.late".to_owned(),
    };
    assert_eq!(driver.commands(), [find.clone(), find.clone(), find]);
}

#[test]
fn find_elements() {
    let driver = Driver::answering(|command, respond| {
        respond(Ok(match command {
            Command::FindElements { root: Some(_), .. } => json!([element("c1"), element("c2")]),
            Command::FindElements { .. } => json!([]),
            _ => Value::Null,
        }))
    });
    let id = driver.session();
    driver.commands();
    let session = format!("/session/{id}");
    let by_tag = json!({"using": "tag name", "value": "p"});
    assert_error(
        driver.post(&format!("{session}/element"), by_tag.clone()),
        404,
        "no such element",
    );
    assert_eq!(
        driver.post(&format!("{session}/elements"), by_tag.clone()),
        (200, json!({"value": []}))
    );
    assert_eq!(
        driver.post(&format!("{session}/element/e1/elements"), by_tag.clone()),
        (200, json!({"value": [element("c1"), element("c2")]}))
    );
    assert_eq!(
        driver.post(&format!("{session}/element/e1/element"), by_tag),
        (200, json!({"value": element("c1")}))
    );
    let find = |root: Option<&str>| Command::FindElements {
        root: root.map(str::to_owned),
        using: Locator::TagName,
        value: "p".to_owned(),
    };
    assert_eq!(
        driver.commands(),
        [find(None), find(None), find(Some("e1")), find(Some("e1"))]
    );
}

#[test]
fn unsupported_and_invalid_locators() {
    let driver = Driver::new();
    let id = driver.session();
    driver.commands();
    let path = format!("/session/{id}/element");
    let response = driver.post(&path, json!({"using": "xpath", "value": "a"}));
    assert_error(response, 500, "unsupported operation");
    let response = driver.post(&path, json!({"using": "id", "value": "a"}));
    assert_error(response, 400, "invalid argument");
    assert_eq!(driver.commands(), []);
}

#[test]
fn element_commands() {
    let driver = Driver::answering(|command, respond| {
        respond(Ok(match command {
            Command::ElementText(_) => json!("text"),
            Command::ElementAttribute(..) => json!("attribute"),
            Command::ElementProperty(..) => json!(42),
            Command::ElementTagName(_) => json!("div"),
            _ => Value::Null,
        }))
    });
    let id = driver.session();
    driver.commands();
    let element = format!("/session/{id}/element/e1");
    assert_eq!(driver.get(&format!("{element}/text")).1["value"], "text");
    assert_eq!(
        driver.get(&format!("{element}/attribute/class")).1["value"],
        "attribute"
    );
    assert_eq!(
        driver.get(&format!("{element}/property/answer")).1["value"],
        42
    );
    assert_eq!(driver.get(&format!("{element}/name")).1["value"], "div");
    assert_eq!(
        driver.post(&format!("{element}/click"), json!({})),
        (200, json!({"value": null}))
    );
    let e1 = || "e1".to_owned();
    assert_eq!(
        driver.commands(),
        [
            Command::ElementText(e1()),
            Command::ElementAttribute(e1(), "class".to_owned()),
            Command::ElementProperty(e1(), "answer".to_owned()),
            Command::ElementTagName(e1()),
            Command::ElementClick(e1()),
        ]
    );
}

#[test]
fn frames() {
    let driver = Driver::new();
    let id = driver.session();
    driver.commands();
    let frame = format!("/session/{id}/frame");
    for body in [
        json!({"id": null}),
        json!({"id": 2}),
        json!({"id": element("f1")}),
    ] {
        assert_eq!(driver.post(&frame, body), (200, json!({"value": null})));
    }
    driver.post(&format!("{frame}/parent"), json!({}));
    assert_error(
        driver.post(&frame, json!({"id": "nope"})),
        400,
        "invalid argument",
    );
    assert_eq!(
        driver.commands(),
        [
            Command::SwitchToFrame(Frame::Top),
            Command::SwitchToFrame(Frame::Index(2)),
            Command::SwitchToFrame(Frame::Element("f1".to_owned())),
            Command::SwitchToParentFrame,
        ]
    );
}

#[test]
fn window_handles() {
    let driver = Driver::new();
    let id = driver.session();
    let session = format!("/session/{id}");
    let (status, body) = driver.get(&format!("{session}/window"));
    assert_eq!(status, 200);
    let handle = body["value"].as_str().unwrap().to_owned();
    assert_eq!(
        driver.get(&format!("{session}/window/handles")).1,
        json!({"value": [handle]})
    );
    assert_eq!(
        driver.post(&format!("{session}/window"), json!({"handle": handle})),
        (200, json!({"value": null}))
    );
    assert_error(
        driver.post(&format!("{session}/window"), json!({"handle": "other"})),
        404,
        "no such window",
    );
    assert_error(
        driver.delete(&format!("{session}/window")),
        500,
        "unsupported operation",
    );
    assert_error(
        driver.post(&format!("{session}/window/new"), json!({})),
        500,
        "unsupported operation",
    );
}

#[test]
fn window_rect_minimize_and_maximize() {
    let driver = Driver::new();
    let id = driver.session();
    driver.commands();
    let window = format!("/session/{id}/window");
    let initial = json!({"value": {"x": 0, "y": 0, "width": 1280, "height": 720}});
    assert_eq!(
        driver.get(&format!("{window}/rect")),
        (200, initial.clone())
    );
    assert_eq!(
        driver.post(&format!("{window}/minimize"), json!({})),
        (200, initial.clone())
    );
    assert_eq!(
        driver.get(&format!("{window}/rect")),
        (200, initial.clone())
    );
    assert_eq!(
        driver.post(&format!("{window}/maximize"), json!({})),
        (200, initial.clone())
    );
    assert_eq!(
        driver.post(&format!("{window}/fullscreen"), json!({})),
        (200, initial)
    );
    let (status, body) = driver.post(
        &format!("{window}/rect"),
        json!({"x": 10, "y": 20, "width": 800, "height": null}),
    );
    assert_eq!(
        (status, body),
        (
            200,
            json!({"value": {"x": 10, "y": 20, "width": 1280, "height": 720}})
        )
    );
    assert_error(
        driver.post(&format!("{window}/rect"), json!({"width": -1, "height": 5})),
        400,
        "invalid argument",
    );
    assert_eq!(
        driver.commands(),
        [
            Command::SetHidden(true),
            Command::SetHidden(false),
            Command::SetHidden(false),
            Command::SetHidden(false),
        ]
    );
}

#[test]
fn force_sample() {
    let driver = Driver::new();
    let id = driver.session();
    driver.commands();
    assert_eq!(
        driver.post(&format!("/session/{id}/forcesample"), json!({})),
        (200, json!({"value": null}))
    );
    assert_eq!(driver.commands(), [Command::ForceSample]);
    assert_error(
        driver.post("/session/nope/forcesample", json!({})),
        404,
        "invalid session id",
    );
}

#[test]
fn unsupported_commands() {
    let driver = Driver::new();
    let id = driver.session();
    driver.commands();
    let session = format!("/session/{id}");
    let (status, body) = driver.get(&format!("{session}/screenshot"));
    assert_error((status, body.clone()), 500, "unsupported operation");
    assert!(body["value"]["message"]
        .as_str()
        .unwrap()
        .contains("TakeScreenshot"));
    for response in [
        driver.get(&format!("{session}/cookie")),
        driver.get(&format!("{session}/alert/text")),
        driver.post(&format!("{session}/actions"), json!({"actions": []})),
        driver.get(&format!("{session}/element/e1/displayed")),
        driver.post(&format!("{session}/element/e1/clear"), json!({})),
        driver.post(&format!("{session}/print"), json!({})),
    ] {
        assert_error(response, 500, "unsupported operation");
    }
    assert_eq!(driver.commands(), []);
}

#[test]
fn only_local_requests() {
    let driver = Driver::new();
    let port = driver.server.address().port();
    let status = || driver.http.get(driver.url("/status"));
    let localhost = status().header("Host", format!("localhost:{port}"));
    assert_eq!(driver.send(localhost).1["value"]["ready"], true);
    let foreign_host = status().header("Host", format!("example.test:{port}"));
    assert_error(driver.send(foreign_host), 500, "unknown error");
    let from_a_page = status().header("Origin", "https://example.test");
    assert_error(driver.send(from_a_page), 500, "unknown error");
}

/// A body that is not UTF-8 is junk like any other body that does not parse: `invalid
/// argument` (400), with or without a session, and it reaches no browser.
#[test]
fn a_body_that_is_not_utf8_is_an_invalid_argument() {
    let driver = Driver::new();
    let bytes = |path: &str, body: &[u8]| {
        driver
            .http
            .post(driver.url(path))
            .header("Content-Type", "application/json")
            .body(body.to_vec())
    };
    // Latin-1 "é", a lone continuation byte, and a truncated sequence inside valid JSON.
    let junk: [&[u8]; 3] = [
        b"{\"capabilities\": {\"alwaysMatch\": {\"browserName\": \"caf\xe9\"}}}",
        b"\x80",
        b"{\"url\": \"http://example.test/\xe2\x82\"}",
    ];
    for body in junk {
        assert_error(
            driver.send(bytes("/session", body)),
            400,
            "invalid argument",
        );
    }
    let id = driver.session();
    driver.commands();
    for body in junk {
        let response = driver.send(bytes(&format!("/session/{id}/url"), body));
        assert_error(response, 400, "invalid argument");
    }
    // As for a body that is not JSON at all.
    assert_error(
        driver.send(bytes(&format!("/session/{id}/url"), b"{not json")),
        400,
        "invalid argument",
    );
    assert_eq!(driver.commands(), []);
    // The session goes on.
    assert_eq!(driver.get(&format!("/session/{id}/title")).0, 200);
}

/// Paths no command has, and methods a command's path does not take, are the spec's
/// `unknown command` (404) and `unknown method` (405), in JSON; HEAD of a route is an empty
/// 200.
#[test]
fn unknown_commands_and_methods() {
    let driver = Driver::new();
    assert_error(driver.get("/no/such/command"), 404, "unknown command");
    assert_error(
        driver.post("/session/x/no-such-command", json!({})),
        404,
        "unknown command",
    );
    assert_error(driver.delete("/status"), 405, "unknown method");
    assert_error(driver.get("/session"), 405, "unknown method");
    let head = driver.http.head(driver.url("/status")).send().unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(head.text().unwrap(), "");
    // `/session/{id}/element/active` is its own command, not an element called "active".
    let id = driver.session();
    driver.commands();
    assert_error(
        driver.get(&format!("/session/{id}/element/active")),
        500,
        "unsupported operation",
    );
    assert_eq!(driver.commands(), []);
}

/// A stopped server ends the session (the browser is reset) and no longer accepts
/// connections.
#[test]
fn stop_ends_the_session_and_the_listening() {
    let driver = Driver::new();
    driver.session();
    driver.commands();
    let address = driver.server.address();
    driver.server.stop();
    // Waits for the state, with a deadline far beyond what it takes.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(address).is_ok() {
        assert!(std::time::Instant::now() < deadline, "still listening");
        std::thread::sleep(Duration::from_millis(10));
    }
    let reset = loop {
        let seen = driver.commands();
        if !seen.is_empty() {
            break seen;
        }
        assert!(std::time::Instant::now() < deadline, "no Reset");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(reset, [Command::Reset]);
}
