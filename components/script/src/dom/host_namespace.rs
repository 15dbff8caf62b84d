//! The `JsprofHost` namespace (`webidl/internal/host.webidl`): the prelude's calls into the
//! engine, with WebIDL argument conversions generated like any interface's (a throwing
//! `valueOf` throws on; a boolean is a boolean). Each operation hands its converted
//! arguments to the embedder's [`Host`](crate::host::Host) for the caller's window.

use std::time::Duration;

use jsprof_net::{cors, mime, HeaderList};

use jsprof_script_bindings::generated::{JsprofFetchRequest, JsprofHostMethods};
use jsprof_script_bindings::host::ApiRequest;
use jsprof_script_bindings::runtime::{ByteString, Error, Fallible, Global};

/// Implements [`JsprofHostMethods`]: stateless, all state is the embedder's.
#[derive(Debug)]
pub struct JsprofHost;

/// A window index from a `long long` that may be negative (no window).
fn window_index(x: i64) -> Option<usize> {
    usize::try_from(x).ok()
}

impl JsprofHostMethods for JsprofHost {
    fn print(global: &Global, to_stderr: bool, text: String) -> Fallible<()> {
        global.host.print(global.window, to_stderr, &text);
        Ok(())
    }

    fn now(global: &Global) -> Fallible<f64> {
        Ok(global.host.now(global.window))
    }

    fn time_origin(global: &Global) -> Fallible<f64> {
        Ok(global.host.time_origin(global.window))
    }

    fn set_timer(global: &Global, id: u32, delay: f64, repeat: bool) -> Fallible<()> {
        global.host.set_timer(global.window, id, delay, repeat);
        Ok(())
    }

    fn clear_timer(global: &Global, id: u32) -> Fallible<()> {
        global.host.clear_timer(global.window, id);
        Ok(())
    }

    fn parse_url(
        _global: &Global,
        input: String,
        base: Option<Option<String>>,
        setter: Option<Option<String>>,
        value: Option<Option<String>>,
    ) -> Fallible<String> {
        Ok(crate::url_api::url_parts(
            &input,
            base.flatten().as_deref(),
            setter.flatten().as_deref(),
            value.flatten().as_deref(),
        )
        .unwrap_or_else(|message| serde_json::json!({ "error": message }).to_string()))
    }

    fn form_parse(_global: &Global, input: String) -> Fallible<String> {
        Ok(crate::url_api::form_parse(&input))
    }

    fn form_encode(_global: &Global, input: String) -> Fallible<String> {
        Ok(crate::url_api::form_encode(&input))
    }

    fn fetch_start(global: &Global, id: u32, request: JsprofFetchRequest) -> Fallible<()> {
        global
            .host
            .fetch_start(global.window, id, api_request(request)?);
        Ok(())
    }

    fn header_info(_global: &Global, name: ByteString, value: ByteString) -> Fallible<u32> {
        let (name, value) = (&name.0[..], &value.0[..]);
        let bits = [
            cors::is_header_name(name),
            cors::is_header_value(value),
            cors::is_forbidden_request_header(name, value),
            cors::is_forbidden_response_header_name(name),
            cors::is_no_cors_safelisted_request_header(name, value),
            cors::is_privileged_no_cors_request_header_name(name),
        ];
        Ok(bits
            .iter()
            .enumerate()
            .map(|(i, &b)| u32::from(b) << i)
            .sum())
    }

    fn utf8_encode(_global: &Global, text: String) -> Fallible<ByteString> {
        // The conversion to a Rust string already made lone surrogates U+FFFD.
        Ok(ByteString(text.into_bytes()))
    }

    fn utf8_decode(_global: &Global, bytes: ByteString) -> Fallible<String> {
        // https://encoding.spec.whatwg.org/#utf-8-decode: a BOM is removed first.
        let bytes = bytes.0;
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        Ok(String::from_utf8_lossy(body).into_owned())
    }

    fn charset_to_utf8(_global: &Global, content_type: ByteString) -> Fallible<String> {
        let decoded: String = content_type.0.iter().map(|&b| char::from(b)).collect();
        let Some(mut mime) = mime::parse_mime_type(&decoded) else {
            return Ok(String::new());
        };
        match mime.parameter("charset") {
            Some(c) if !c.eq_ignore_ascii_case("UTF-8") => {
                mime.set_parameter("charset", "UTF-8");
                Ok(mime.serialize())
            }
            _ => Ok(String::new()),
        }
    }

    fn extract_mime_type(_global: &Global, content_type: ByteString) -> Fallible<String> {
        let decoded: String = content_type.0.iter().map(|&b| char::from(b)).collect();
        Ok(mime::extract_mime_type(Some(&decoded))
            .map(|m| m.serialize())
            .unwrap_or_default())
    }

    fn load_frame(global: &Global, index: u32, url: String, sandboxed: bool) -> Fallible<()> {
        global
            .host
            .load_frame(global.window, index, &url, sandboxed);
        Ok(())
    }

    fn discard_frame(global: &Global, index: u32) -> Fallible<()> {
        global.host.discard_frame(global.window, index);
        Ok(())
    }

    fn fetch_sync(global: &Global, request: JsprofFetchRequest) -> Fallible<String> {
        Ok(global.host.fetch_sync(global.window, api_request(request)?))
    }

    fn same_origin(global: &Global, url: String) -> Fallible<bool> {
        Ok(global.host.same_origin(global.window, &url))
    }

    fn frame_tree(global: &Global, window: u32, what: f64) -> Fallible<i64> {
        // A property key that is not an integer names no frame.
        if what.fract() != 0.0 || !what.is_finite() {
            return Ok(-1);
        }
        Ok(global.host.frame_tree(window as usize, what as i64))
    }

    fn window_origin(global: &Global, window: u32) -> Fallible<String> {
        Ok(global.host.window_origin(window as usize))
    }

    fn window_post(
        global: &Global,
        to: i64,
        data: String,
        target_origin: String,
        from: i64,
    ) -> Fallible<()> {
        if let (Some(to), Some(from)) = (window_index(to), window_index(from)) {
            global.host.window_post(from, to, &data, &target_origin);
        }
        Ok(())
    }

    fn load_script(
        global: &Global,
        index: u32,
        url: String,
        module: bool,
        crossorigin: Option<String>,
        text: Option<Option<String>>,
    ) -> Fallible<()> {
        global.host.load_script(
            global.window,
            index,
            &url,
            module,
            crossorigin,
            text.flatten(),
        );
        Ok(())
    }

    fn worker_start(global: &Global, id: u32, url: String, source: Option<String>) -> Fallible<()> {
        global.host.worker_start(global.window, id, &url, source);
        Ok(())
    }

    fn worker_post(global: &Global, id: i64, data: String) -> Fallible<()> {
        global.host.worker_post(global.window, id, &data);
        Ok(())
    }

    fn worker_terminate(global: &Global, id: i64) -> Fallible<()> {
        global.host.worker_terminate(global.window, id);
        Ok(())
    }

    fn worker_error(
        global: &Global,
        message: String,
        filename: String,
        line: u32,
        column: u32,
    ) -> Fallible<()> {
        global
            .host
            .worker_error(global.window, &message, &filename, line, column);
        Ok(())
    }

    fn port_open(global: &Global) -> Fallible<u64> {
        Ok(global.host.port_open(global.window))
    }

    fn port_attach(global: &Global, pid: u64, end: u8) -> Fallible<()> {
        global.host.port_attach(global.window, pid, end);
        Ok(())
    }

    fn port_send(global: &Global, pid: u64, end: u8, data: String) -> Fallible<()> {
        global.host.port_send(global.window, pid, end, &data);
        Ok(())
    }

    fn webdriver_reply(global: &Global, id: u32, error: String, value: String) -> Fallible<()> {
        global
            .host
            .webdriver_reply(global.window, id, &error, &value);
        Ok(())
    }
}

/// The request the prelude described, its header lines parsed (a malformed one is a
/// `TypeError`: the prelude never makes one).
fn api_request(r: JsprofFetchRequest) -> Fallible<ApiRequest> {
    let headers = HeaderList::from_lines(&r.headers.0).map_err(Error::Type)?;
    Ok(ApiRequest {
        // A method is a token (the prelude checked it): ASCII, so this is lossless.
        method: String::from_utf8_lossy(&r.method.0).into_owned(),
        url: r.url,
        headers,
        body: r.body.map(|b| b.0),
        mode: r.mode,
        credentials: r.credentials,
        redirect: r.redirect,
        use_cors_preflight: r.use_cors_preflight,
        timeout: r
            .timeout
            .filter(|&ms| ms > 0)
            .map(|ms| Duration::from_millis(u64::from(ms))),
    })
}
