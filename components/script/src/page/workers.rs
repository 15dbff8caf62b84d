//! Dedicated workers: their loop on its own thread ([`run_worker`]), their handles, and the
//! port pairs that carry `MessagePort`s between loops.

use std::collections::{BTreeMap, HashMap};
use std::sync::{mpsc, Arc};

use jsprof_net::{Credentials, Mode, Origin, Request, Response, Url};
use jsprof_script_bindings::generated::JsprofHostMethods;
use jsprof_script_bindings::glue::Js;
use jsprof_script_bindings::runtime::{Arg, GlobalKind, WindowId};
use jsprof_script_bindings::task::TaskSender;

use crate::dom::DomTypeHolder;
use crate::policy::{Init, ProfilingPolicy};
use crate::RunOptions;

use super::host::{PageHost, WorkerParent};
use super::{navigation_start, Doc, Page, PRELUDE};

/// Message ports whose two ends live on different threads (one was transferred to a worker):
/// pair id -> the loops holding each end, and messages waiting for an end to arrive.
pub(super) static PORT_PAIRS: std::sync::Mutex<BTreeMap<u64, PortPair>> =
    std::sync::Mutex::new(BTreeMap::new());
pub(super) static NEXT_PORT_PAIR: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(1);

#[derive(Default)]
pub(super) struct PortPair {
    pub(super) ends: [Option<(TaskSender, WindowId)>; 2],
    pub(super) waiting: [Vec<String>; 2],
}

/// Delivers `data` to end `end` of pair `pid` (a task of the loop holding it).
pub(super) fn deliver_port_message(
    holder: &(TaskSender, WindowId),
    pid: u64,
    end: u8,
    data: String,
) {
    let window = holder.1;
    holder.0.queue(Box::new(move |js| {
        js.call_hook(
            window,
            c"portMessage",
            &[
                Arg::Num(pid as f64),
                Arg::Num(f64::from(end)),
                Arg::Str(&data),
            ],
        );
    }));
}

/// A dedicated worker's thread: its own runtime, realm (a DedicatedWorkerGlobalScope) and
/// event loop (<https://html.spec.whatwg.org/#run-a-worker>). The script comes from `source`
/// (a `blob:` URL's text) or from `url` (also `data:`); its Document-Policy is its response's
/// header, and a `blob:` or `data:` worker inherits its creator's (decision 2). The loop runs
/// until the worker is terminated, closes itself, or its creator's page ends.
pub(super) fn run_worker(
    url: Url,
    source: Option<String>,
    creator: Doc,
    options: RunOptions,
    parent: WorkerParent,
    ready: mpsc::SyncSender<(
        TaskSender,
        Arc<std::sync::atomic::AtomicBool>,
        mozjs::rust::ThreadSafeJSContext,
    )>,
) {
    let started = navigation_start();
    // https://html.spec.whatwg.org/#fetch-a-classic-worker-script: a same-origin request of
    // the creator (a data: URL is allowed, and gives the worker an opaque origin).
    let script: Result<(String, Option<Response>), String> = match source {
        Some(text) => Ok((text, None)),
        None => {
            let request = Request::new(
                url.clone(),
                creator.origin.clone(),
                Mode::SameOrigin,
                Credentials::SameOrigin,
            );
            match options.loader.fetch_request(&request) {
                Ok(r) if r.ok() => Ok((r.text(), Some(r))),
                Ok(r) => Err(format!("{}: HTTP status {}", r.url, r.status)),
                Err(e) => Err(e.to_string()),
            }
        }
    };
    let doc = match &script {
        Ok((_, Some(r))) if r.url.scheme() != "data" => Doc::of(r, started, false),
        // A data: worker has an opaque origin; a blob: one its creator's. Both inherit the
        // creator's policy (decision 2).
        _ => Doc {
            url: url.clone(),
            origin: if url.scheme() == "data" {
                Origin::new_opaque()
            } else {
                creator.origin.clone()
            },
            time_origin: started.0,
            origin_unix_ms: started.1,
            parent: None,
            frames: Vec::new(),
            ..creator
        },
    };
    let (tx, messages) = mpsc::channel();
    let host = PageHost::new(&options, doc.clone(), tx, Some(parent));
    let mut js = Js::new::<DomTypeHolder>(host.clone());
    let _ = host.interrupter.set(js.interrupter());
    js.terminate_on_interrupt(host.closed.clone());
    if ready
        .send((host.tasks.clone(), host.closed.clone(), js.interrupter()))
        .is_err()
    {
        return;
    }
    let init = serde_json::json!({
        "url": url.as_str(),
        "nodes": [],
        "crossOriginIsolated": doc.cross_origin_isolated,
        "worker": true,
        "windowIndex": 0,
    })
    .to_string();
    let window = match js.new_window_of_kind(
        PRELUDE,
        &init,
        doc.origin.clone(),
        GlobalKind::DedicatedWorker,
    ) {
        Ok(w) => w,
        Err(e) => {
            // Reaching the Worker object cannot fail: its loop is gone or it is told.
            let _ = host.worker_error(
                WindowId(0),
                format!("cannot start the worker: {e}"),
                url.to_string(),
                0,
                0,
            );
            return;
        }
    };
    if doc.policy == ProfilingPolicy::Allowed(Init::Eager) {
        let _ = host.sampling_agent(window);
    }
    match script {
        Ok((text, _)) => {
            js.run_classic(window, &text, url.as_str(), 1, 1, false);
            js.perform_microtask_checkpoint();
        }
        Err(message) => {
            let _ = host.worker_error(
                window,
                format!("failed to load the worker script {message}"),
                url.to_string(),
                0,
                0,
            );
        }
    }
    let mut page = Page {
        js,
        host,
        window,
        url,
        scripts: Vec::new(),
        messages,
        loads_outstanding: 0,
        arrived: HashMap::new(),
        async_left: Vec::new(),
        deadline: None,
        timed_out: false,
        halt: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        keep_alive: true,
        browser: None,
        timers_first: true,
    };
    let turned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| while page.turn() {}));
    if let Err(payload) = turned {
        jsprof_script_bindings::glue::record_internal_error(&*payload);
    }
    page.host.terminate_workers();
    page.host.stop_running_profilers();
}
