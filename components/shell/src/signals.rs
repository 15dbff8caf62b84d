//! SIGINT and SIGTERM, from the first instruction of `main` to the exit.
//!
//! [`listen`] blocks both signals in the main thread before anything else runs, so every
//! thread started afterwards (the engine's, the WebDriver server's, the sampler) inherits the
//! mask, and starts one thread that takes them with `sigwait`. No handler is ever installed:
//! a signal that arrives while no thread waits stays pending until the signal thread takes
//! it, so none is lost, whenever it comes. What the signal thread does depends on what the
//! process is doing ([`State`]):
//!
//! - by default (parsing arguments, `jsprof convert`, a page run), a signal ends the process
//!   as its default action does: killed by that signal, at once (content processes, `-M`,
//!   die with it: see `transport.rs`);
//! - while `jsprof --webdriver` or `--profiler-service` runs its browser, the first signal
//!   shuts the browser down
//!   (its page's script is stopped, its profilers too, in its content process with `-M`),
//!   and `main` writes `--trace-out` and exits 0. If the browser has not ended [`BACKSTOP`] later (a navigation waiting on a
//!   server that does not answer), or a second signal comes, the process is killed by the
//!   signal as by default.
//!
//! The states change under one lock that the signal thread also takes to act, so a signal is
//! handled by exactly one state's rule: there is no moment at which it would be neither.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use nix::sys::signal::{raise, SigSet, Signal};

/// How long the browser may take to end after a signal before the process is killed.
pub const BACKSTOP: Duration = Duration::from_secs(10);

/// What a signal does now.
enum State {
    /// It kills the process (its default action).
    Default,
    /// It shuts down the browser, by this.
    Browser(Box<dyn Fn() + Send>),
    /// A signal shut the browser down: the next one kills the process, and so does the
    /// backstop unless [`browser_ended`] comes first.
    Ending,
}

static STATE: Mutex<State> = Mutex::new(State::Default);
/// Notified when the state leaves [`State::Ending`].
static ENDED: Condvar = Condvar::new();

/// The signals jsprof acts on.
fn signals() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set
}

/// Blocks SIGINT and SIGTERM in this (the main) thread and in every thread started from
/// now on, and starts the thread that takes them. Call it first thing in `main`.
pub fn listen() {
    let set = signals();
    if let Err(e) = set.thread_block() {
        // Not expected on any Unix; the signals then keep their default action (they end
        // the process), which is what a failure here may fall back to.
        eprintln!("jsprof: cannot block SIGINT and SIGTERM ({e}): they end the process at once");
        return;
    }
    let started = std::thread::Builder::new()
        .name("jsprof-signals".into())
        .spawn(move || loop {
            match set.wait() {
                Ok(signal) => on_signal(signal),
                // sigwait fails only for an invalid set.
                Err(_) => return,
            }
        });
    if started.is_err() {
        // Without the thread nobody would take them: give them back their default action.
        let _ = set.thread_unblock();
    }
}

/// Gives SIGINT and SIGTERM back their default action in this thread, before it `exec`s
/// another program: a blocked mask survives `exec`, and the program (`jsprof-collector`,
/// which installs no signal thread) would never see a signal. Between this and the `exec`,
/// a signal ends the process as by default, which is what it would do in the program too.
pub fn unblock_for_exec() {
    let _ = signals().thread_unblock();
}

/// From now on a signal shuts the browser down by calling `shutdown` (see the module's doc).
pub fn run_browser(shutdown: impl Fn() + Send + 'static) {
    *lock() = State::Browser(Box::new(shutdown));
}

/// The browser has ended: signals kill the process again.
pub fn browser_ended() {
    *lock() = State::Default;
    ENDED.notify_all();
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the signal thread does with `signal`.
fn on_signal(signal: Signal) {
    let mut state = lock();
    match &*state {
        State::Default | State::Ending => die(signal),
        State::Browser(shutdown) => {
            shutdown();
            *state = State::Ending;
            drop(state);
            let backstop = std::thread::Builder::new()
                .name("jsprof-backstop".into())
                .spawn(move || {
                    let state = lock();
                    let (state, _) = ENDED
                        .wait_timeout_while(state, BACKSTOP, |s| matches!(s, State::Ending))
                        .unwrap_or_else(|e| e.into_inner());
                    if matches!(*state, State::Ending) {
                        eprintln!(
                            "jsprof: the browser did not end within {} s of {}: killed",
                            BACKSTOP.as_secs(),
                            signal.as_str()
                        );
                        die(signal);
                    }
                });
            if backstop.is_err() {
                die(signal);
            }
        }
    }
}

/// Ends the process as `signal`'s default action does. Called with the state locked, so
/// that nothing else acts on a signal meanwhile.
fn die(signal: Signal) -> ! {
    // Unblocked in this thread only, raised at this thread: the default action (termination)
    // takes the whole process before `raise` returns.
    let mut set = SigSet::empty();
    set.add(signal);
    let _ = set.thread_unblock();
    let _ = raise(signal);
    // Still here: the signal's action is to be ignored (inherited from the parent). It was
    // sent to end jsprof all the same; exit as a shell reports a death by that signal.
    std::process::exit(128 + signal as i32)
}
