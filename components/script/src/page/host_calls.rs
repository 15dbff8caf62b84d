//! What each native does, over [`PageHost`]: the host interface the prelude calls
//! (`JsprofHostMethods`, generated from `webidl/internal/host.webidl`; its operations'
//! comments are there) and the rest of the [`Host`] trait.

use std::collections::HashSet;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use jsprof_net::{
    cors, mime, Credentials, LoadError, Loader, Mode, Origin, Request, Response, Url,
};
use jsprof_profiler::{Clock, MarkerSet, ProfilerTrace, Session, SessionOptions};
use jsprof_script_bindings::generated::{JsprofFetchRequest, JsprofHostMethods};
use jsprof_script_bindings::host::{ApiRequest, FetchedScript, Host, ScriptSource};
use jsprof_script_bindings::runtime::Arg;
use jsprof_script_bindings::runtime::{ByteString, Fallible, WindowId};
use jsprof_script_bindings::task::TaskSender;
use jsprof_spidermonkey::{ScriptInfo, SourceId};

use crate::document::{ScriptElement, ScriptKind};
use crate::policy::ProfilingPolicy;

use super::host::{PageHost, WorkerHandle, WorkerParent};
use super::scripts::{filtered_response, script_request};
use super::workers::{deliver_port_message, run_worker, NEXT_PORT_PAIR, PORT_PAIRS};
use super::{navigation_start, profiler_group, Message, Stream, Timer};

impl PageHost {
    /// Writes console output (`to_stderr`: errors and warnings go to standard error): the
    /// host interface's `print`, and the page's own messages.
    pub(super) fn print(&self, _window: WindowId, to_stderr: bool, text: &str) {
        let stream = if to_stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        self.options.console.print(stream, text);
    }

    /// The serialised origin of a window's document (a message's `origin`).
    fn origin_of(&self, window: WindowId) -> String {
        self.docs
            .borrow()
            .get(window.index())
            .map_or("null".to_owned(), |d| d.origin.serialize())
    }
}

impl JsprofHostMethods for PageHost {
    fn print(&self, window: WindowId, to_stderr: bool, text: String) -> Fallible<()> {
        PageHost::print(self, window, to_stderr, &text);
        Ok(())
    }

    fn now(&self, window: WindowId) -> Fallible<f64> {
        let doc = self.doc(window);
        Ok(doc
            .resolution()
            .relative_ms(self.clock.now(), doc.time_origin))
    }

    fn time_origin(&self, window: WindowId) -> Fallible<f64> {
        Ok(self.doc(window).origin_unix_ms)
    }

    fn set_timer(&self, window: WindowId, id: u32, delay: f64, repeat: bool) -> Fallible<()> {
        let delay = Duration::from_secs_f64((delay.max(0.0) / 1000.0).min(1e9)).max(self.clamp);
        self.arm(
            Timer {
                window,
                id,
                delay,
                repeat,
            },
            Instant::now() + delay,
        );
        Ok(())
    }

    fn clear_timer(&self, window: WindowId, id: u32) -> Fallible<()> {
        if let Some(key) = self.timer_keys.borrow_mut().remove(&(window, id)) {
            self.timers.borrow_mut().remove(&key);
        }
        Ok(())
    }

    fn fetch_start(&self, window: WindowId, id: u32, request: JsprofFetchRequest) -> Fallible<()> {
        let request = ApiRequest::from_idl(request)?;
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let origin = self.doc(window).origin.clone();
        let scope = jsprof_scope::record::current();
        std::thread::spawn(move || {
            let credentials = request.credentials;
            let (start, url) = (std::time::Instant::now(), request.url.to_string());
            let fetched = api_fetch(&loader, origin, request);
            let frame = window.index() as u32 + 1;
            super::scope_load(scope.as_ref(), frame, start, &url, fetched.as_ref());
            let (meta, body) = api_response(fetched, credentials);
            pending.queue(Box::new(move |js| {
                js.call_hook(
                    window,
                    c"fetchDone",
                    &[
                        Arg::Num(f64::from(id)),
                        Arg::Str(&meta.to_string()),
                        Arg::Bytes(&body),
                    ],
                );
            }));
        });
        Ok(())
    }

    fn fetch_sync(&self, window: WindowId, request: JsprofFetchRequest) -> Fallible<String> {
        let request = ApiRequest::from_idl(request)?;
        let origin = self.doc(window).origin.clone();
        let loader = match request.timeout {
            Some(t) => self.options.loader.with_timeout(t),
            None => self.options.loader.clone(),
        };
        let credentials = request.credentials;
        let (mut meta, body) = api_response(api_fetch(&loader, origin, request), credentials);
        if meta.get("error").is_none() {
            meta["body"] = serde_json::Value::String(body.iter().map(|&b| char::from(b)).collect());
        }
        Ok(meta.to_string())
    }

    fn same_origin(&self, window: WindowId, url: String) -> Fallible<bool> {
        Ok(Url::parse(&url).is_ok_and(|u| self.doc(window).origin.same_origin_url(&u)))
    }

    fn frame_tree(&self, _window: WindowId, target: u32, what: f64) -> Fallible<i64> {
        // A property key that is not an integer names no frame.
        if what.fract() != 0.0 || !what.is_finite() {
            return Ok(-1);
        }
        let (window, what) = (WindowId(target as usize), what as i64);
        let docs = self.docs.borrow();
        let Some(doc) = docs.get(window.index()) else {
            return Ok(-1);
        };
        let index = |w: Option<WindowId>| w.map_or(-1, |w| w.index() as i64);
        Ok(match what {
            -1 => index(doc.parent),
            -2 => {
                let mut top = window;
                while let Some(p) = docs.get(top.index()).and_then(|d| d.parent) {
                    top = p;
                }
                top.index() as i64
            }
            -3 => doc.frames.iter().flatten().count() as i64,
            n if n >= 0 => index(doc.frames.get(n as usize).copied().flatten()),
            _ => -1,
        })
    }

    fn window_origin(&self, _window: WindowId, target: u32) -> Fallible<String> {
        Ok(self.origin_of(WindowId(target as usize)))
    }

    fn window_post(
        &self,
        _window: WindowId,
        to: i64,
        data: String,
        target_origin: String,
        from: i64,
    ) -> Fallible<()> {
        // Negative indexes name no window.
        let (Ok(to), Ok(from)) = (usize::try_from(to), usize::try_from(from)) else {
            return Ok(());
        };
        let (to, from) = (WindowId(to), WindowId(from));
        // window.postMessage (https://html.spec.whatwg.org/#window-post-message-steps),
        // steps 2-4: "*" allows any target; "/" the sender's own origin; any other value
        // (already parsed by the caller) only that origin.
        let allowed = {
            let docs = self.docs.borrow();
            let (Some(sender), Some(target)) = (docs.get(from.index()), docs.get(to.index()))
            else {
                return Ok(());
            };
            match target_origin.as_str() {
                "*" => true,
                "/" => sender.origin.same_origin(&target.origin),
                url => Url::parse(url).is_ok_and(|u| target.origin.same_origin_url(&u)),
            }
        };
        if !allowed {
            return Ok(());
        }
        let origin = self.origin_of(from);
        self.tasks.queue(Box::new(move |js| {
            js.call_hook(
                to,
                c"windowMessage",
                &[
                    Arg::Str(&data),
                    Arg::Num(from.index() as f64),
                    Arg::Str(&origin),
                ],
            );
        }));
        Ok(())
    }

    fn load_script(
        &self,
        window: WindowId,
        index: u32,
        url: String,
        module: bool,
        crossorigin: Option<String>,
        text: Option<Option<String>>,
    ) -> Fallible<()> {
        // With the `text` of an inline module (of the document at `url`) nothing is fetched.
        let inline = text.flatten();
        let kind = if module {
            ScriptKind::Module
        } else {
            ScriptKind::Classic
        };
        let element = ScriptElement {
            index: index as usize,
            kind,
            src: inline.is_none().then(|| url.clone()),
            is_async: true,
            defer: false,
            crossorigin,
            text: String::new(),
            line: 1,
            column: 1,
        };
        self.scripts_loading.set(self.scripts_loading.get() + 1);
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let origin = self.doc(window).origin.clone();
        let tx = self.messages_tx.clone();
        let scope = jsprof_scope::record::current();
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let fetched = inline.is_none();
            let result = jsprof_net::parse_url(&url).and_then(|u| match inline {
                // An inline module: its text, at its document's URL.
                Some(text) => Ok(Response::local(&u, Default::default(), text.into_bytes())),
                None => loader.fetch_request(&script_request(
                    u,
                    &origin,
                    element.kind,
                    element.crossorigin.as_deref(),
                )),
            });
            if fetched {
                let frame = window.index() as u32 + 1;
                super::scope_load(scope.as_ref(), frame, start, &url, result.as_ref());
            }
            let _ = tx.send(Message::Script {
                window,
                element,
                result,
                _pending: pending,
            });
        });
        Ok(())
    }

    fn worker_start(
        &self,
        window: WindowId,
        id: u32,
        url: String,
        source: Option<String>,
    ) -> Fallible<()> {
        let Ok(url) = Url::parse(&url) else {
            return Ok(());
        };
        let creator = self.doc(window).clone();
        let options = self.options.clone();
        let parent = WorkerParent {
            tasks: self.tasks.clone(),
            window,
            id,
            traces: self.traces.clone(),
        };
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(format!("jsprof-worker-{id}"))
            .spawn(move || run_worker(url, source, creator, options, parent, ready_tx));
        let Ok(thread) = thread else {
            self.print(window, true, "jsprof: cannot start a worker thread");
            return Ok(());
        };
        // The worker's loop exists (messages posted now wait in its queue) once it says so.
        match ready_rx.recv() {
            Ok((tasks, closed, interrupter)) => {
                self.workers.borrow_mut().insert(
                    id,
                    WorkerHandle {
                        tasks,
                        closed,
                        interrupter,
                        thread,
                    },
                );
            }
            Err(_) => {
                let _ = thread.join();
            }
        }
        Ok(())
    }

    fn worker_post(&self, _window: WindowId, id: i64, data: String) -> Fallible<()> {
        if id < 0 {
            // From a worker's global to its Worker object in the creator's realm.
            self.to_worker_object(move |js, w, id| {
                js.call_hook(
                    w,
                    c"workerMessage",
                    &[Arg::Num(f64::from(id)), Arg::Str(&data)],
                );
            });
        } else if let Some(worker) = self.workers.borrow().get(&(id as u32)) {
            worker.tasks.queue(Box::new(move |js| {
                js.call_hook(
                    WindowId(0),
                    c"workerMessage",
                    &[Arg::Num(0.0), Arg::Str(&data)],
                );
            }));
        }
        Ok(())
    }

    fn worker_terminate(&self, _window: WindowId, id: i64) -> Fallible<()> {
        if id < 0 {
            self.closed
                .store(true, std::sync::atomic::Ordering::Release);
        } else if let Some(worker) = self.workers.borrow_mut().remove(&(id as u32)) {
            worker.terminate();
        }
        Ok(())
    }

    fn worker_error(
        &self,
        _window: WindowId,
        message: String,
        filename: String,
        line: u32,
        column: u32,
    ) -> Fallible<()> {
        self.to_worker_object(move |js, w, id| {
            js.call_hook(
                w,
                c"workerError",
                &[
                    Arg::Num(f64::from(id)),
                    Arg::Str(&message),
                    Arg::Str(&filename),
                    Arg::Num(f64::from(line)),
                    Arg::Num(f64::from(column)),
                ],
            );
        });
        Ok(())
    }

    fn port_open(&self, window: WindowId) -> Fallible<u64> {
        let pid = NEXT_PORT_PAIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        pairs.entry(pid).or_default().ends[0] = Some((self.tasks.clone(), window));
        Ok(pid)
    }

    fn port_attach(&self, window: WindowId, pid: u64, end: u8) -> Fallible<()> {
        let end = usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let pair = pairs.entry(pid).or_default();
        let holder = (self.tasks.clone(), window);
        for data in std::mem::take(&mut pair.waiting[end]) {
            deliver_port_message(&holder, pid, end as u8, data);
        }
        pair.ends[end] = Some(holder);
        Ok(())
    }

    fn port_send(&self, _window: WindowId, pid: u64, end: u8, data: String) -> Fallible<()> {
        let to = 1 - usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pair) = pairs.get_mut(&pid) else {
            return Ok(());
        };
        match &pair.ends[to] {
            Some(holder) => deliver_port_message(holder, pid, to as u8, data),
            None => pair.waiting[to].push(data),
        }
        Ok(())
    }

    fn webdriver_reply(
        &self,
        _window: WindowId,
        id: u32,
        error: String,
        value: String,
    ) -> Fallible<()> {
        let Some(respond) = self.webdriver.borrow_mut().remove(&id) else {
            return Ok(());
        };
        respond(super::webdriver::reply_of(&error, &value));
        Ok(())
    }

    fn load_frame(
        &self,
        window: WindowId,
        index: u32,
        url: String,
        sandboxed: bool,
    ) -> Fallible<()> {
        self.frames_loading.set(self.frames_loading.get() + 1);
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let tx = self.messages_tx.clone();
        let origin = self.doc(window).origin.clone();
        // The iframe's navigation starts now: its document's time origin.
        let started = navigation_start();
        let scope = jsprof_scope::record::current();
        std::thread::spawn(move || {
            // A navigation by the parent's document: any origin, but no file: URL for a
            // web page.
            let start = std::time::Instant::now();
            let result = jsprof_net::parse_url(&url)
                .and_then(|u| loader.fetch_request(&Request::navigate(u, Some(origin))));
            // Recorded in the parent's frame: the child's is made once it has arrived.
            let frame = window.index() as u32 + 1;
            super::scope_load(scope.as_ref(), frame, start, &url, result.as_ref());
            let _ = tx.send(Message::Frame {
                parent: window,
                index,
                started,
                sandboxed,
                result,
                _pending: pending,
            });
        });
        Ok(())
    }

    fn discard_frame(&self, window: WindowId, index: u32) -> Fallible<()> {
        self.discarded_frames.borrow_mut().insert((window, index));
        let child = self
            .doc(window)
            .frames
            .get(index as usize)
            .copied()
            .flatten();
        let Some(child) = child else {
            return Ok(()); // Still loading: dropped when it arrives.
        };
        // The child and every window below it.
        let mut windows = vec![child];
        let mut i = 0;
        while i < windows.len() {
            let below: Vec<WindowId> = self
                .doc(windows[i])
                .frames
                .iter()
                .flatten()
                .copied()
                .collect();
            windows.extend(below);
            i += 1;
        }
        let gone: HashSet<WindowId> = windows.iter().copied().collect();
        self.discarded.borrow_mut().extend(gone.iter().copied());
        // Their profilers stop (their traces are kept, as at the end of a run), their
        // timers go, and their realms are let go by a task (not while script runs).
        self.stop_profilers(|w| gone.contains(&w));
        let timers: Vec<(WindowId, u32)> = self
            .timer_keys
            .borrow()
            .keys()
            .filter(|(w, _)| gone.contains(w))
            .copied()
            .collect();
        for (w, id) in timers {
            self.clear_timer(w, id)?;
        }
        self.tasks.queue(Box::new(move |js| {
            for w in windows {
                js.discard_window(w);
            }
        }));
        Ok(())
    }

    fn parse_url(
        &self,
        _window: WindowId,
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

    fn form_parse(&self, _window: WindowId, input: String) -> Fallible<String> {
        Ok(crate::url_api::form_parse(&input))
    }

    fn form_encode(&self, _window: WindowId, input: String) -> Fallible<String> {
        Ok(crate::url_api::form_encode(&input))
    }

    fn header_info(&self, _window: WindowId, name: ByteString, value: ByteString) -> Fallible<u32> {
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

    fn utf8_encode(&self, _window: WindowId, text: String) -> Fallible<ByteString> {
        // The conversion to a Rust string already made lone surrogates U+FFFD.
        Ok(ByteString(text.into_bytes()))
    }

    fn utf8_decode(&self, _window: WindowId, bytes: ByteString) -> Fallible<String> {
        // https://encoding.spec.whatwg.org/#utf-8-decode: a BOM is removed first.
        let bytes = bytes.0;
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        Ok(String::from_utf8_lossy(body).into_owned())
    }

    fn extract_mime_type(&self, _window: WindowId, content_type: ByteString) -> Fallible<String> {
        let decoded: String = content_type.0.iter().map(|&b| char::from(b)).collect();
        Ok(mime::extract_mime_type(Some(&decoded))
            .map(|m| m.serialize())
            .unwrap_or_default())
    }

    fn charset_to_utf8(&self, _window: WindowId, content_type: ByteString) -> Fallible<String> {
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
}

impl Host for PageHost {
    fn fetch_script(
        &self,
        window: WindowId,
        url: &str,
        module: bool,
    ) -> Result<FetchedScript, String> {
        // A module (a static or dynamic import) in CORS mode; a worker's importScripts in
        // no-cors mode, whose opaque response gives a script with muted errors.
        let url = jsprof_net::parse_url(url).map_err(|e| e.to_string())?;
        let kind = if module {
            ScriptKind::Module
        } else {
            ScriptKind::Classic
        };
        let request = script_request(url, &self.doc(window).origin, kind, None);
        // On the loop's thread, inside the evaluation that imports it.
        let loading = jsprof_scope::record::begin(window.index() as u32 + 1, || {
            jsprof_scope::Details::Process {
                url: request.url.to_string(),
                status: 0,
                bytes: 0,
            }
        });
        let response = self.options.loader.fetch_request(&request);
        if let Ok(r) = &response {
            loading.update(jsprof_scope::Details::Process {
                url: r.url.to_string(),
                status: r.status,
                bytes: r.body.len() as u64,
            });
        }
        drop(loading);
        let response = response.map_err(|e| e.to_string())?;
        if !response.ok() {
            return Err(format!("{}: HTTP status {}", response.url, response.status));
        }
        let muted = !module && response.is_opaque();
        Ok(FetchedScript {
            source: response.text(),
            url: response.url.to_string(),
            muted,
        })
    }

    fn register_script(&self, window: WindowId, id: SourceId, script: ScriptSource<'_>) {
        // A document whose policy forbids profiling can never have a Profiler: unless the
        // shell profiles it from outside, its scripts need no names (and the page pays
        // nothing for a header it does not send).
        if self.doc(window).policy == ProfilingPolicy::Disallowed
            && self.options.profile_interval.is_none()
        {
            return;
        }
        let start = Instant::now();
        self.registry.register(&ScriptInfo {
            source_id: id,
            realm: window.realm(),
            url: script.url,
            source: script.text,
            line: script.line,
            column: script.column,
            module: script.module,
            muted: script.muted,
        });
        self.support.set(self.support.get() + start.elapsed());
    }

    fn windows_same_origin(&self, a: WindowId, b: WindowId) -> bool {
        let docs = self.docs.borrow();
        match (docs.get(a.index()), docs.get(b.index())) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            _ => false,
        }
    }

    fn dynamic_import_pending(&self, _window: WindowId) {
        self.imports_pending.set(true);
    }

    fn pref_enabled(&self, name: &str) -> bool {
        self.options.prefs.get_bool(name).unwrap_or(false)
    }

    fn js_profiling(&self, window: WindowId) -> ProfilingPolicy {
        self.doc(window).policy
    }

    fn start_profiling(
        &self,
        window: WindowId,
        sample_interval: f64,
        max_buffer_size: u32,
        buffer_policy: jsprof_profiler::BufferPolicy,
        on_buffer_full: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Session, String> {
        let agent = self.sampling_agent(window)?;
        jsprof_spidermonkey::enable_sampling();
        let group = profiler_group(&self.options.prefs).map_err(|e| e.to_string())?;
        let doc = self.doc(window);
        group
            .start_session(SessionOptions {
                agent,
                realm: window.realm(),
                sample_interval,
                max_buffer_size,
                buffer_policy,
                time_origin: doc.time_origin,
                cross_origin_isolated: doc.cross_origin_isolated,
                markers: MarkerSet::for_context(
                    self.options.prefs.bool("profiler.markers.enabled"),
                    doc.cross_origin_isolated,
                ),
                symbolizer: self.registry.clone(),
                on_buffer_full,
                // A hidden document's sessions are paused (decision 8) from the start.
                paused: self.hidden.load(std::sync::atomic::Ordering::Acquire),
            })
            .map_err(|e| format!("sampleInterval {sample_interval}: {e}"))
    }

    fn track_session(&self, window: WindowId, session: std::sync::Weak<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // Forget the ones gone (a page that starts and drops many profilers stays bounded).
        if sessions.len() >= 64 && sessions.len().is_power_of_two() {
            sessions.retain(|(_, s)| s.upgrade().is_some_and(|s| !s.is_stopped()));
        }
        sessions.push((window, session));
    }

    fn tasks(&self, _window: WindowId) -> TaskSender {
        self.tasks.clone()
    }

    fn trace_sink(&self) -> Option<Arc<Mutex<Vec<ProfilerTrace>>>> {
        self.traces.clone()
    }
}

/// Fetches what a page's `fetch()` or `XMLHttpRequest` asked for, as a request of the
/// window's origin with the unsafe-request flag (so that it is preflighted when it goes
/// beyond the CORS safelists).
fn api_fetch(
    loader: &Loader,
    origin: Origin,
    api: jsprof_script_bindings::host::ApiRequest,
) -> Result<Response, LoadError> {
    let url = jsprof_net::parse_url(&api.url)?;
    // A page cannot navigate through fetch (the Request constructor refused "navigate").
    let mode = match api.mode {
        Mode::Navigate => Mode::SameOrigin,
        m => m,
    };
    let mut request = Request::new(url, origin, mode, api.credentials);
    request.method = api.method;
    request.headers = api.headers;
    request.body = api.body;
    request.redirect = api.redirect;
    request.unsafe_request = true;
    request.use_cors_preflight = api.use_cors_preflight;
    loader.fetch_request(&request)
}

/// The response a page's `fetch()` or `XMLHttpRequest` sees: its filtered response's
/// metadata as JSON (`type`, `status`, `statusText`, `url`, `redirected`, `headers`), and its
/// body; or `{"error": message, "timedOut": bool}` for a network error.
fn api_response(
    outcome: Result<Response, LoadError>,
    credentials: Credentials,
) -> (serde_json::Value, Vec<u8>) {
    match outcome {
        Ok(r) => {
            let f = filtered_response(&r, credentials);
            let meta = serde_json::json!({
                "type": f.kind, "status": f.status, "statusText": f.status_text, "url": f.url,
                "redirected": f.redirected, "headers": f.headers,
            });
            (meta, f.body)
        }
        Err(e) => {
            let timed_out = matches!(e, LoadError::TimedOut { .. });
            (
                serde_json::json!({ "error": e.to_string(), "timedOut": timed_out }),
                Vec::new(),
            )
        }
    }
}
