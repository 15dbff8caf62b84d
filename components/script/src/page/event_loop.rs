//! The event loop: the parser's scripts in the standard's order, tasks, timers and the
//! end of a run.

use std::time::Instant;

use jsprof_script_bindings::runtime::Arg;

use crate::document::ScriptKind;

use super::scripts::ready_from;
use super::{Fetched, Message, Page, Timer};

impl Page {
    pub(super) fn run(&mut self) {
        // Parsing: scripts in document order (https://html.spec.whatwg.org/#prepare-the-script-element).
        let mut deferred = Vec::new();
        let inline_async_modules: Vec<usize> = self
            .async_left
            .iter()
            .copied()
            .filter(|&i| self.scripts[i].src.is_none())
            .collect();
        for i in 0..self.scripts.len() {
            let s = &self.scripts[i];
            if s.index == usize::MAX {
                continue;
            }
            match (s.kind, s.src.is_some(), s.is_async, s.defer) {
                (ScriptKind::Classic, false, _, _) => self.execute_inline(i),
                (ScriptKind::Classic, true, false, false) => {
                    // A parser-blocking script: the loop turns until it has arrived.
                    if !self.wait_for(i) {
                        return;
                    }
                    self.execute_fetched(i);
                }
                (ScriptKind::Classic, true, true, _) | (ScriptKind::Module, _, true, _) => {}
                (ScriptKind::Classic, true, false, true) | (ScriptKind::Module, _, false, _) => {
                    deferred.push(i)
                }
            }
            if self.expired() {
                return;
            }
        }
        // Inline async modules run as soon as parsing reaches them (they have nothing to fetch).
        for i in inline_async_modules {
            self.async_left.retain(|&x| x != i);
            self.execute_inline(i);
        }
        if self.expired() {
            return;
        }
        // The end (https://html.spec.whatwg.org/#the-end).
        self.js
            .call_hook(self.window, c"setReadyState", &[Arg::Str("interactive")]);
        self.checkpoint();
        for i in deferred {
            if self.scripts[i].src.is_some() {
                if !self.wait_for(i) {
                    return;
                }
                self.execute_fetched(i);
            } else {
                self.execute_inline(i);
            }
        }
        if self.expired() {
            return;
        }
        self.js.call_hook(self.window, c"fireDOMContentLoaded", &[]);
        self.checkpoint();
        // The load event waits for async scripts and for the iframes' documents.
        while !self.async_left.is_empty()
            || self.host.frames_loading.get() > 0
            || self.host.scripts_loading.get() > 0
        {
            if !self.turn() {
                return;
            }
        }
        self.js
            .call_hook(self.window, c"setReadyState", &[Arg::Str("complete")]);
        self.checkpoint();
        self.js.call_hook(self.window, c"fireLoad", &[]);
        self.checkpoint();
        // A page WebDriver navigated to: the navigation is answered now ("normal" page load
        // strategy), and the page turns until the next one.
        if let Some(browser) = &mut self.browser {
            if let Some(respond) = browser.loaded.take() {
                respond(Ok(serde_json::Value::Null));
            }
            while self.turn() {}
            return;
        }
        // Then the loop turns until no task, timer or load is left (a promised task, such
        // as a `stop()` whose trace is being built, counts, and so does a task already
        // queued, such as a `samplebufferfull` event).
        loop {
            while self.host.next_deadline().is_some()
                || self.host.imports_pending.get()
                || self.host.tasks.pending() > 0
            {
                if !self.turn() {
                    return;
                }
            }
            match self.messages.try_recv() {
                Ok(message) if !self.expired() => self.handle(message),
                _ => return,
            }
        }
    }

    /// Whether `--timeout` has passed (then nothing more runs).
    pub(super) fn expired(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.halt.load(std::sync::atomic::Ordering::Acquire)
            || jsprof_script_bindings::glue::internal_error().is_some()
        {
            self.timed_out = true;
        }
        self.timed_out
    }

    pub(super) fn checkpoint(&mut self) {
        self.js.perform_microtask_checkpoint();
    }

    /// Turns the event loop until script `i` has arrived. False if the run timed out.
    pub(super) fn wait_for(&mut self, i: usize) -> bool {
        while !self.arrived.contains_key(&i) {
            if !self.turn() {
                return false;
            }
        }
        true
    }

    /// One turn of the event loop: a task (a load, a timer or a dynamic import), or a wait for
    /// one. False once `--timeout` has passed.
    pub(super) fn turn(&mut self) -> bool {
        if self.host.closed.load(std::sync::atomic::Ordering::Acquire) {
            return false;
        }
        let now = Instant::now();
        if self.expired() {
            return false;
        }
        if self.host.imports_pending.replace(false) {
            self.js.finish_dynamic_imports();
            self.checkpoint();
            return true;
        }
        // Timers and the other task sources take turns: a page that keeps a 0 ms timer due
        // must not starve the tasks other threads queue (responses, `samplebufferfull`,
        // `stop()`'s trace), nor a flood of those its timers.
        self.timers_first = !self.timers_first;
        if !self.timers_first {
            if let Ok(m) = self.messages.try_recv() {
                self.host.set_busy(true);
                self.handle(m);
                return true;
            }
        }
        if let Some(timer) = self.host.take_due(now) {
            if timer.repeat {
                let at = Instant::now() + timer.delay;
                self.host.arm(Timer { ..timer }, at);
            }
            let event = jsprof_scope::record::begin(timer.window.index() as u32 + 1, || {
                jsprof_scope::Details::ThreadEvaluation {
                    kind: if timer.repeat {
                        jsprof_scope::EvalKind::Interval
                    } else {
                        jsprof_scope::EvalKind::Timeout
                    },
                    event_type: None,
                    script: None,
                    function: None,
                }
            });
            self.js
                .call_hook(timer.window, c"fireTimer", &[Arg::Num(timer.id as f64)]);
            drop(event);
            self.checkpoint();
            return true;
        }
        let wake = [self.host.next_deadline(), self.deadline]
            .into_iter()
            .flatten()
            .min();
        if wake.is_none()
            && self.loads_outstanding == 0
            && self.host.tasks.pending() == 0
            && !self.keep_alive
        {
            // Try what is already queued; beyond that nothing can arrive and nothing is due:
            // the page is stuck waiting.
            return match self.messages.try_recv() {
                Ok(m) => {
                    self.handle(m);
                    true
                }
                Err(_) => {
                    self.timed_out = true;
                    false
                }
            };
        }
        // Blocking waits are marked as such: a sample taken in one has no marker, where any
        // other work of the loop outside script is `other` (markers extension).
        let message = match wake {
            Some(at) => jsprof_spidermonkey::waiting(|| {
                self.messages
                    .recv_timeout(at.saturating_duration_since(now))
                    .ok()
            }),
            None => {
                // A worker with nothing left to do but wait for messages no longer keeps
                // its creator's page running; it does again as soon as it has work.
                let idle = self.host.tasks.pending() == 0 && self.loads_outstanding == 0;
                if idle {
                    self.host.set_busy(false);
                }
                jsprof_spidermonkey::waiting(|| self.messages.recv().ok())
            }
        };
        if let Some(m) = message {
            self.host.set_busy(true);
            self.handle(m);
        }
        true
    }

    /// Runs what another thread sent: a fetched script's turn, or a task.
    pub(super) fn handle(&mut self, message: Message) {
        match message {
            Message::Fetched(Fetched { index, result }) => {
                self.loads_outstanding -= 1;
                self.arrived.insert(index, result);
                if let Some(pos) = self.async_left.iter().position(|&x| x == index) {
                    self.async_left.remove(pos);
                    self.execute_fetched(index);
                }
            }
            Message::Task(task) => {
                task(&mut self.js);
                self.checkpoint();
            }
            Message::WebDriver(command, respond) => self.webdriver(command, respond),
            Message::ScopeSampling => self.start_scope_sampling(),
            Message::Script {
                window,
                element,
                result,
                _pending,
            } => {
                self.host
                    .scripts_loading
                    .set(self.host.scripts_loading.get() - 1);
                let ready = ready_from(&element, result);
                self.execute_or_fail(window, element.index, &element, ready);
            }
            Message::Frame {
                parent,
                index,
                started,
                sandboxed,
                result,
                _pending,
            } => {
                self.load_frame(parent, index, started, sandboxed, result);
                self.host
                    .frames_loading
                    .set(self.host.frames_loading.get() - 1);
            }
        }
    }
}
