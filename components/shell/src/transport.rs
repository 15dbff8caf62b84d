//! How the browser's messages reach its contents and back: one protocol (`protocol.rs`),
//! two transports. With `-M` a content is this same binary run again as
//! `jsprof --content-process TOKEN`, bootstrapped through an
//! [`IpcOneShotServer`] (Servo's way), and the messages cross ipc-channel's
//! [`IpcSender`]/[`IpcReceiver`]; without it a content is a thread of the browser's process
//! and they cross crossbeam channels. Neither side's logic knows which: the browser reads
//! [`Event`]s from one channel and sends with a [`ToContentTx`]; a content receives with a
//! [`ToContentRx`] and sends with a [`FromContentTx`].
//!
//! Processes are started only from the browser's main thread: a content process asks the
//! kernel to kill it when the thread that started it ends (`PR_SET_PDEATHSIG`), which must
//! be when the browser's process ends.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel as crossbeam;
use ipc_channel::ipc::{self, IpcOneShotServer, IpcReceiver, IpcSender};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::protocol::{FromContent, ScopeCall, ToContent};

/// Where contents run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each in a process of its own (`-M`).
    Processes,
    /// Each on a thread of the browser's process.
    Threads,
}

/// The stack of a content thread: the main thread's (a page's runtime needs more than a
/// spawned thread's default 2 MiB; SpiderMonkey's own quota stays 1 MB).
const CONTENT_STACK: usize = 8 << 20;

/// What the browser hears, from every content at once, in one channel.
#[derive(Debug)]
pub enum Event {
    /// From the content of page number `.0` (0-based).
    Page(usize, What),
    /// A line about the browser's process itself (a panic in a thread of a page without
    /// `-M`, see `diagnostics.rs`): printed as it is.
    Diagnostic(String),
    /// From the profiler service's threads (`service.rs`).
    Service(ServiceEvent),
}

/// What the profiler service's threads (`service.rs`) tell the browser's loop.
#[derive(Debug)]
pub enum ServiceEvent {
    /// Carry `call` to window `window`'s content; its answer goes to the call `id`.
    Ask {
        window: u32,
        id: u64,
        call: ScopeCall,
    },
    /// `Continue`: the held first loads go ahead.
    Continue,
    /// `Quit`, SIGINT or SIGTERM: the browser ends.
    Quit,
}

#[derive(Debug)]
pub enum What {
    /// The content can be sent to (a process once it has connected).
    Connected(ToContentTx),
    Message(FromContent),
    /// The content has ended, after every message it sent.
    Exited(Exit),
}

/// How a content ended.
#[derive(Debug, Clone, Copy)]
pub enum Exit {
    /// Its process ended with this status.
    Process(ExitStatus),
    /// Its thread returned.
    Thread,
}

impl Exit {
    /// The signal a content process died of.
    pub fn signal(self) -> Option<i32> {
        match self {
            Exit::Process(status) => status.signal(),
            Exit::Thread => None,
        }
    }

    /// Why the content ended without reporting, for the line that says so.
    pub fn describe(self) -> String {
        match self {
            Exit::Process(status) => match (status.signal(), status.code()) {
                (Some(signal), _) => format!("signal {signal}"),
                (None, Some(code)) => format!("exit status {code}"),
                (None, None) => status.to_string(),
            },
            Exit::Thread => "its thread ended without a report".into(),
        }
    }
}

/// The browser's end of a content: what it sends with.
#[derive(Debug)]
pub enum ToContentTx {
    Ipc(IpcSender<ToContent>),
    Thread(crossbeam::Sender<ToContent>),
}

impl ToContentTx {
    /// Sends `message`; false if the content is gone.
    pub fn send(&self, message: ToContent) -> bool {
        match self {
            ToContentTx::Ipc(tx) => tx.send(message).is_ok(),
            ToContentTx::Thread(tx) => tx.send(message).is_ok(),
        }
    }
}

/// A content's end of what the browser sends.
#[derive(Debug)]
pub enum ToContentRx {
    Ipc(IpcReceiver<ToContent>),
    Thread(crossbeam::Receiver<ToContent>),
}

/// The browser has let go of a content.
#[derive(Debug)]
pub struct Closed;

impl ToContentRx {
    /// The next message, until the browser lets go of the content. A message that cannot be
    /// read (a bug) is skipped.
    pub fn recv(&self) -> Result<ToContent, Closed> {
        loop {
            match self {
                ToContentRx::Ipc(rx) => match rx.recv() {
                    Ok(message) => return Ok(message),
                    Err(ipc_channel::IpcError::SerializationError(_)) => continue,
                    Err(_) => return Err(Closed),
                },
                ToContentRx::Thread(rx) => return rx.recv().map_err(|_| Closed),
            }
        }
    }

    /// Whether the browser letting go ([`Closed`]) before the content said it is
    /// done means the browser is gone: a content process then ends itself at once (its
    /// page's work is nobody's any more); a content thread's browser is its own process.
    pub fn orphaned_when_closed(&self) -> bool {
        matches!(self, ToContentRx::Ipc(_))
    }
}

/// What a content sends with. Cheap to clone; any of the content's threads may send.
#[derive(Debug, Clone)]
pub enum FromContentTx {
    /// An `IpcSender` may not be shared between threads: one lock keeps each message whole
    /// and the page's lines in the order they were made.
    Ipc(Arc<Mutex<IpcSender<FromContent>>>),
    Thread {
        page: usize,
        events: crossbeam::Sender<Event>,
    },
}

impl FromContentTx {
    /// Sends `message`; false if the browser is gone.
    pub fn send(&self, message: FromContent) -> bool {
        match self {
            FromContentTx::Ipc(tx) => tx
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send(message)
                .is_ok(),
            FromContentTx::Thread { page, events } => events
                .send(Event::Page(*page, What::Message(message)))
                .is_ok(),
        }
    }
}

/// The first message of a content process, through the one-shot server: the two channels
/// it made.
#[derive(Serialize, Deserialize)]
enum Bootstrap {
    Hello {
        to_content: IpcSender<ToContent>,
        from_content: IpcReceiver<FromContent>,
    },
    /// Sent by the browser itself to its own server when the process ended without
    /// connecting, so that nothing waits for it any more.
    Gone,
}

/// A started content, as the browser holds it.
#[derive(Debug)]
pub struct Content {
    /// The content process, if it is one, until it has been waited for.
    process: Option<(Pid, Arc<AtomicBool>)>,
    /// The content thread, if it is one.
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Content {
    /// Waits for a content thread to be gone, its thread-local state too (the engine may be
    /// shut down only then); a content process was waited for by the time it is
    /// [`What::Exited`].
    pub fn join(self) {
        if let Some(thread) = self.thread {
            let _ = thread.join();
        }
    }

    /// Kills the content process (the browser's backstop); a content thread cannot be.
    /// Does nothing once the process has been waited for (its pid may be another's).
    pub fn kill(&self) -> bool {
        match &self.process {
            Some((pid, reaped)) if !reaped.load(Ordering::Acquire) => {
                nix::sys::signal::kill(*pid, Signal::SIGKILL).is_ok()
            }
            _ => false,
        }
    }
}

/// Starts the content of page number `page` (0-based); what it says comes to `events`,
/// ending with [`What::Exited`]. For a thread, `run` is the content's body (a process runs
/// the same body in `content::process_main`).
pub fn start(
    mode: Mode,
    page: usize,
    events: crossbeam::Sender<Event>,
    run: impl FnOnce(ToContentRx, FromContentTx) -> u8 + Send + 'static,
) -> std::io::Result<Content> {
    match mode {
        Mode::Threads => {
            let (to_tx, to_rx) = crossbeam::unbounded();
            let from = FromContentTx::Thread {
                page,
                events: events.clone(),
            };
            let _ = events.send(Event::Page(
                page,
                What::Connected(ToContentTx::Thread(to_tx)),
            ));
            let thread = std::thread::Builder::new()
                .name(format!("jsprof-content-{}", page + 1))
                .stack_size(CONTENT_STACK)
                .spawn(move || {
                    // Exited follows whatever the content sent, even if its body panics
                    // (a panic it did not catch is reported by the hook, and here as an end
                    // without a report).
                    let _exited = ExitedOnDrop(events, page);
                    run(ToContentRx::Thread(to_rx), from);
                })?;
            Ok(Content {
                process: None,
                thread: Some(thread),
            })
        }
        Mode::Processes => start_process(page, events),
    }
}

/// Sends [`What::Exited`] for a content thread when dropped.
struct ExitedOnDrop(crossbeam::Sender<Event>, usize);

impl Drop for ExitedOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(Event::Page(self.1, What::Exited(Exit::Thread)));
    }
}

fn start_process(page: usize, events: crossbeam::Sender<Event>) -> std::io::Result<Content> {
    let (server, token) = IpcOneShotServer::<Bootstrap>::new()?;
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .arg("--content-process")
        .arg(&token)
        .arg("--content-page")
        .arg((page + 1).to_string())
        .stdin(Stdio::null())
        // Everything the page prints crosses to the browser; what the process itself might
        // write to stderr (a crash's last words) goes where the browser's goes.
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        // Its own process group: a terminal's Ctrl-C (and SIGTERM to the group) is the
        // browser's to handle; the content ends when its browser says or dies.
        .process_group(0)
        .spawn()?;
    let pid = Pid::from_raw(child.id() as i32);
    let connected = Arc::new(AtomicBool::new(false));
    let reaped = Arc::new(AtomicBool::new(false));
    // The link: accepts the process's connection, hands the browser its sender, and
    // forwards what it sends until it closes (its process ended).
    let link = {
        let (events, connected) = (events.clone(), connected.clone());
        std::thread::Builder::new()
            .name(format!("jsprof-link-{}", page + 1))
            .spawn(move || {
                let Ok((
                    _,
                    Bootstrap::Hello {
                        to_content,
                        from_content,
                    },
                )) = server.accept()
                else {
                    return;
                };
                connected.store(true, Ordering::Release);
                let connected = What::Connected(ToContentTx::Ipc(to_content));
                if events.send(Event::Page(page, connected)).is_err() {
                    return;
                }
                while let Ok(message) = from_content.recv() {
                    if events
                        .send(Event::Page(page, What::Message(message)))
                        .is_err()
                    {
                        return;
                    }
                }
            })
    };
    let link = match link {
        Ok(link) => link,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    // The reaper: waits for the process (no zombie is left), lets the link go if the
    // process never connected, and reports the end once the link has forwarded everything.
    let reaper = {
        let reaped = reaped.clone();
        std::thread::Builder::new()
            .name(format!("jsprof-reaper-{}", page + 1))
            .spawn(move || {
                let status = child.wait();
                reaped.store(true, Ordering::Release);
                if !connected.load(Ordering::Acquire) {
                    // Nothing will connect to the one-shot server now but us: accept returns.
                    if let Ok(tx) = IpcSender::<Bootstrap>::connect(token) {
                        let _ = tx.send(Bootstrap::Gone);
                    }
                }
                let _ = link.join();
                let exit = match status {
                    Ok(status) => Exit::Process(status),
                    // wait fails only for a child already waited for: never here.
                    Err(_) => Exit::Process(ExitStatus::from_raw(0)),
                };
                let _ = events.send(Event::Page(page, What::Exited(exit)));
            })
    };
    if let Err(e) = reaper {
        // The child moved into the closure that failed to start, and was dropped: it runs
        // on unwaited for, and dies with us.
        let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
        return Err(e);
    }
    Ok(Content {
        process: Some((pid, reaped)),
        thread: None,
    })
}

/// A content process's side of the bootstrap: connects to the browser's one-shot server
/// named `token` and hands it the two channels. `None` if the browser is gone.
pub fn connect(token: &str) -> Option<(ToContentRx, FromContentTx)> {
    let bootstrap = IpcSender::<Bootstrap>::connect(token.to_owned()).ok()?;
    let (to_tx, to_rx) = ipc::channel::<ToContent>().ok()?;
    let (from_tx, from_rx) = ipc::channel::<FromContent>().ok()?;
    bootstrap
        .send(Bootstrap::Hello {
            to_content: to_tx,
            from_content: from_rx,
        })
        .ok()?;
    Some((
        ToContentRx::Ipc(to_rx),
        FromContentTx::Ipc(Arc::new(Mutex::new(from_tx))),
    ))
}
