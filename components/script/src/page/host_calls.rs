//! What each native does: the [`Host`] trait implemented over [`PageHost`].

use super::*;

impl Host for PageHost {
    fn print(&self, _window: usize, to_stderr: bool, text: &str) {
        if to_stderr {
            let _ = std::io::stdout().flush();
            let _ = writeln!(std::io::stderr(), "{text}");
        } else {
            let _ = writeln!(std::io::stdout(), "{text}");
        }
    }

    fn now(&self, window: usize) -> f64 {
        let doc = self.doc(window);
        doc.resolution()
            .relative_ms(self.clock.now(), doc.time_origin)
    }

    fn time_origin(&self, window: usize) -> f64 {
        self.doc(window).origin_unix_ms
    }

    fn set_timer(&self, window: usize, id: u32, delay: f64, repeat: bool) {
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
    }

    fn clear_timer(&self, window: usize, id: u32) {
        if let Some(key) = self.timer_keys.borrow_mut().remove(&(window, id)) {
            self.timers.borrow_mut().remove(&key);
        }
    }

    fn fetch_script(
        &self,
        window: usize,
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
        let response = self
            .options
            .loader
            .fetch_request(&request)
            .map_err(|e| e.to_string())?;
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

    fn dynamic_import_pending(&self, _window: usize) {
        self.imports_pending.set(true);
    }

    fn fetch_sync(
        &self,
        window: usize,
        request: jsprof_script_bindings::host::ApiRequest,
    ) -> String {
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
        meta.to_string()
    }

    fn fetch_start(
        &self,
        window: usize,
        id: u32,
        request: jsprof_script_bindings::host::ApiRequest,
    ) {
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let origin = self.doc(window).origin.clone();
        std::thread::spawn(move || {
            let credentials = request.credentials;
            let (meta, body) = api_response(api_fetch(&loader, origin, request), credentials);
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
    }

    fn windows_same_origin(&self, a: usize, b: usize) -> bool {
        let docs = self.docs.borrow();
        match (docs.get(a), docs.get(b)) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            _ => false,
        }
    }

    fn frame_tree(&self, window: usize, what: i64) -> i64 {
        let docs = self.docs.borrow();
        let Some(doc) = docs.get(window) else {
            return -1;
        };
        let index = |w: Option<usize>| w.map_or(-1, |w| w as i64);
        match what {
            -1 => index(doc.parent),
            -2 => {
                let mut top = window;
                while let Some(p) = docs.get(top).and_then(|d| d.parent) {
                    top = p;
                }
                top as i64
            }
            -3 => doc.frames.iter().flatten().count() as i64,
            n if n >= 0 => index(doc.frames.get(n as usize).copied().flatten()),
            _ => -1,
        }
    }

    fn window_origin(&self, window: usize) -> String {
        self.docs
            .borrow()
            .get(window)
            .map_or("null".to_owned(), |d| d.origin.serialize())
    }

    fn window_post(&self, from: usize, to: usize, data: &str, target_origin: &str) {
        // window.postMessage (https://html.spec.whatwg.org/#window-post-message-steps),
        // steps 2-4: "*" allows any target; "/" the sender's own origin; any other value
        // (already parsed by the caller) only that origin.
        let allowed = {
            let docs = self.docs.borrow();
            let (Some(sender), Some(target)) = (docs.get(from), docs.get(to)) else {
                return;
            };
            match target_origin {
                "*" => true,
                "/" => sender.origin.same_origin(&target.origin),
                url => Url::parse(url).is_ok_and(|u| target.origin.same_origin_url(&u)),
            }
        };
        if !allowed {
            return;
        }
        let origin = self.window_origin(from);
        let data = data.to_owned();
        self.tasks.queue(Box::new(move |js| {
            js.call_hook(
                to,
                c"windowMessage",
                &[Arg::Str(&data), Arg::Num(from as f64), Arg::Str(&origin)],
            );
        }));
    }

    fn register_script(
        &self,
        window: usize,
        source_id: SourceId,
        url: &str,
        source: &str,
        line: u32,
        column: u32,
        module: bool,
        muted: bool,
    ) {
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
            source_id,
            realm: realm_of(window),
            url,
            source,
            line,
            column,
            module,
            muted,
        });
        self.support.set(self.support.get() + start.elapsed());
    }

    fn same_origin(&self, window: usize, url: &str) -> bool {
        Url::parse(url).is_ok_and(|u| self.doc(window).origin.same_origin_url(&u))
    }

    fn load_script(
        &self,
        window: usize,
        index: u32,
        url: &str,
        module: bool,
        crossorigin: Option<String>,
        inline: Option<String>,
    ) {
        let kind = if module {
            ScriptKind::Module
        } else {
            ScriptKind::Classic
        };
        let element = ScriptElement {
            index: index as usize,
            kind,
            src: inline.is_none().then(|| url.to_owned()),
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
        let url = url.to_owned();
        std::thread::spawn(move || {
            let result = jsprof_net::parse_url(&url).and_then(|u| match inline {
                // An inline module: its text, at its document's URL.
                Some(text) => Ok(Response {
                    url: u.clone(),
                    url_list: vec![u],
                    status: 200,
                    status_text: String::new(),
                    headers: Default::default(),
                    body: text.into_bytes(),
                    tainting: jsprof_net::Tainting::Basic,
                    opaque_redirect: false,
                }),
                None => loader.fetch_request(&script_request(
                    u,
                    &origin,
                    element.kind,
                    element.crossorigin.as_deref(),
                )),
            });
            let _ = tx.send(Message::Script {
                window,
                element,
                result,
                _pending: pending,
            });
        });
    }

    fn worker_start(&self, window: usize, id: u32, url: &str, source: Option<String>) {
        let Ok(url) = Url::parse(url) else {
            return;
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
            return;
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
    }

    fn port_open(&self, window: usize) -> u64 {
        let pid = NEXT_PORT_PAIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        pairs.entry(pid).or_default().ends[0] = Some((self.tasks.clone(), window));
        pid
    }

    fn port_attach(&self, window: usize, pid: u64, end: u8) {
        let end = usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let pair = pairs.entry(pid).or_default();
        let holder = (self.tasks.clone(), window);
        for data in std::mem::take(&mut pair.waiting[end]) {
            deliver_port_message(&holder, pid, end as u8, data);
        }
        pair.ends[end] = Some(holder);
    }

    fn webdriver_reply(&self, _window: usize, id: u32, error: &str, value: &str) {
        let Some(respond) = self.webdriver.borrow_mut().remove(&id) else {
            return;
        };
        respond(super::webdriver::reply_of(error, value));
    }

    fn port_send(&self, _window: usize, pid: u64, end: u8, data: &str) {
        let to = 1 - usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pair) = pairs.get_mut(&pid) else {
            return;
        };
        match &pair.ends[to] {
            Some(holder) => deliver_port_message(holder, pid, to as u8, data.to_owned()),
            None => pair.waiting[to].push(data.to_owned()),
        }
    }

    fn worker_post(&self, _window: usize, id: i64, data: &str) {
        let data = data.to_owned();
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
                js.call_hook(0, c"workerMessage", &[Arg::Num(0.0), Arg::Str(&data)]);
            }));
        }
    }

    fn worker_terminate(&self, _window: usize, id: i64) {
        if id < 0 {
            self.closed
                .store(true, std::sync::atomic::Ordering::Release);
        } else if let Some(worker) = self.workers.borrow_mut().remove(&(id as u32)) {
            worker.terminate();
        }
    }

    fn worker_error(&self, _window: usize, message: &str, filename: &str, line: u32, column: u32) {
        let (message, filename) = (message.to_owned(), filename.to_owned());
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
    }

    fn pref_enabled(&self, name: &str) -> bool {
        self.options.prefs.get_bool(name).unwrap_or(false)
    }

    fn js_profiling(&self, window: usize) -> ProfilingPolicy {
        self.doc(window).policy
    }

    fn load_frame(&self, window: usize, index: u32, url: &str, sandboxed: bool) {
        self.frames_loading.set(self.frames_loading.get() + 1);
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let tx = self.messages_tx.clone();
        let origin = self.doc(window).origin.clone();
        let url = url.to_owned();
        // The iframe's navigation starts now: its document's time origin.
        let started = navigation_start();
        std::thread::spawn(move || {
            // A navigation by the parent's document: any origin, but no file: URL for a
            // web page.
            let result = jsprof_net::parse_url(&url)
                .and_then(|u| loader.fetch_request(&Request::navigate(u, Some(origin))));
            let _ = tx.send(Message::Frame {
                parent: window,
                index,
                started,
                sandboxed,
                result,
                _pending: pending,
            });
        });
    }

    fn start_profiling(
        &self,
        window: usize,
        sample_interval: f64,
        max_buffer_size: u32,
        on_buffer_full: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Session, String> {
        let agent = self.sampling_agent(window)?;
        jsprof_spidermonkey::enable_sampling();
        let group = profiler_group(&self.options.prefs).map_err(|e| e.to_string())?;
        let doc = self.doc(window);
        group
            .start_session(SessionOptions {
                agent,
                realm: realm_of(window),
                sample_interval,
                max_buffer_size,
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

    fn tasks(&self, _window: usize) -> TaskSender {
        self.tasks.clone()
    }

    fn trace_sink(&self) -> Option<Arc<Mutex<Vec<ProfilerTrace>>>> {
        self.traces.clone()
    }

    fn track_session(&self, window: usize, session: std::sync::Weak<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // Forget the ones gone (a page that starts and drops many profilers stays bounded).
        if sessions.len() >= 64 && sessions.len().is_power_of_two() {
            sessions.retain(|(_, s)| s.upgrade().is_some_and(|s| !s.is_stopped()));
        }
        sessions.push((window, session));
    }

    fn discard_frame(&self, window: usize, index: u32) {
        self.discarded_frames.borrow_mut().insert((window, index));
        let child = self
            .doc(window)
            .frames
            .get(index as usize)
            .copied()
            .flatten();
        let Some(child) = child else {
            return; // Still loading: dropped when it arrives.
        };
        // The child and every window below it.
        let mut windows = vec![child];
        let mut i = 0;
        while i < windows.len() {
            let below: Vec<usize> = self
                .doc(windows[i])
                .frames
                .iter()
                .flatten()
                .copied()
                .collect();
            windows.extend(below);
            i += 1;
        }
        let gone: HashSet<usize> = windows.iter().copied().collect();
        self.discarded.borrow_mut().extend(gone.iter().copied());
        // Their profilers stop (their traces are kept, as at the end of a run), their
        // timers go, and their realms are let go by a task (not while script runs).
        self.stop_profilers(|w| gone.contains(&w));
        let timers: Vec<(usize, u32)> = self
            .timer_keys
            .borrow()
            .keys()
            .filter(|(w, _)| gone.contains(w))
            .copied()
            .collect();
        for (w, id) in timers {
            self.clear_timer(w, id);
        }
        self.tasks.queue(Box::new(move |js| {
            for w in windows {
                js.discard_window(w);
            }
        }));
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
