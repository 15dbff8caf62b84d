//! `-M`: the browser's side of its links to Servo's content processes (`link.rs`). It
//! listens before Servo starts; each content process connects once jsprof is configured in
//! it, and from then on every request goes to every live content process, whose answers
//! are summed up: the work left (for "done"), Force Sample, and the run's end (the traces,
//! the profiles and the sampler's stats of each process).
//!
//! A content process that ended without saying `Bye` crashed (Servo itself only reaps it:
//! its constellation tells the embedder nothing); [`Contents::crashed`] names it until the
//! run's end ([`Contents::finish`]), after which processes just end (the browser's
//! shutdown, its exit).

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use servo_base::id::BrowsingContextId;

use crate::link::{self, Answer, Report, Request, Setup, ToBrowser, ToContent};

/// How long a content process has to say what work it has left: one that does not answer
/// in time is counted as busy.
const STATUS_WAIT: Duration = Duration::from_millis(250);
/// How long a connection has to say `Hello`.
const HELLO_WAIT: Duration = Duration::from_secs(10);

/// The browser's links to its content processes.
#[derive(Clone)]
pub struct Contents(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// Wakes the browser's loop (a crash).
    wake: Box<dyn Fn() + Send + Sync>,
}

#[derive(Default)]
struct State {
    /// The live content processes, in the order they connected.
    links: Vec<Link>,
    /// How many have connected so far (each link's order).
    connected: usize,
    next_id: u64,
    /// The requests still waited for.
    open: HashSet<u64>,
    /// Their answers not yet collected, by request id and pid.
    answers: HashMap<(u64, u32), Answer>,
    /// The reports of the processes that ended (`Bye`) or finished, with their order.
    reports: Vec<(usize, Report)>,
    /// The processes that ended without `Bye`, while the run lasted.
    crashed: Vec<u32>,
    /// The run has ended: processes now end without `Bye` (shutdown, exit).
    ended: bool,
}

struct Link {
    pid: u32,
    order: usize,
    writer: UnixStream,
}

/// What the run's end gathered from every content process, in the order they connected.
pub struct Finished {
    pub reports: Vec<Report>,
    /// The processes that did not finish in time.
    pub unanswered: usize,
}

impl Contents {
    /// Listens, and gives the [`Setup`] the content processes must get (the caller fills in
    /// jsprof's part and puts it in the environment before Servo starts).
    pub fn listen(wake: Box<dyn Fn() + Send + Sync>) -> Result<(Contents, Setup), String> {
        let random = || RandomState::new().build_hasher().finish();
        let nonce = format!("{:016x}{:016x}", random(), random());
        let socket = format!("jsprof-servo-{}-{}", std::process::id(), &nonce[..8]);
        let address = SocketAddr::from_abstract_name(socket.as_bytes())
            .map_err(|e| format!("-M: the socket {socket:?}: {e}"))?;
        let listener = UnixListener::bind_addr(&address)
            .map_err(|e| format!("-M: cannot listen on {socket:?}: {e}"))?;
        let contents = Contents(Arc::new(Shared {
            state: Mutex::default(),
            changed: Condvar::new(),
            wake,
        }));
        let accepting = contents.clone();
        let expected = nonce.clone();
        std::thread::Builder::new()
            .name("jsprof-servo contents".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let (contents, expected) = (accepting.clone(), expected.clone());
                    let spawned = std::thread::Builder::new()
                        .name("jsprof-servo content link".into())
                        .spawn(move || contents.follow(stream, &expected));
                    if let Err(e) = spawned {
                        eprintln!("jsprof-servo: no thread for a content process's link: {e}");
                    }
                }
            })
            .map_err(|e| format!("-M: no thread to accept content processes: {e}"))?;
        let setup = Setup {
            socket,
            nonce,
            browser_pid: std::process::id(),
            prefs: Vec::new(),
            trace_sink: false,
            profile_interval: None,
        };
        Ok((contents, setup))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One content process's connection: its `Hello`, then its answers until it ends.
    fn follow(&self, stream: UnixStream, nonce: &str) {
        let (Ok(writer), Ok(())) = (
            stream.try_clone(),
            stream.set_read_timeout(Some(HELLO_WAIT)),
        ) else {
            return;
        };
        // A content process that stops reading must not block the browser.
        let _ = writer.set_write_timeout(Some(Duration::from_secs(5)));
        let mut lines = BufReader::new(stream);
        let mut line = String::new();
        if lines.read_line(&mut line).is_err() {
            return;
        }
        let pid = match serde_json::from_str(&line) {
            Ok(ToBrowser::Hello { pid, nonce: said }) if said == nonce => pid,
            _ => return,
        };
        if lines.get_ref().set_read_timeout(None).is_err() {
            return;
        }
        {
            let mut state = self.lock();
            let order = state.connected;
            state.connected += 1;
            state.links.push(Link { pid, order, writer });
        }
        let mut said_bye = false;
        for line in lines.lines() {
            let Ok(line) = line else { break };
            let message = match serde_json::from_str(&line) {
                Ok(message) => message,
                Err(e) => {
                    eprintln!("jsprof-servo: content process {pid}: a malformed message: {e}");
                    break;
                }
            };
            let mut state = self.lock();
            match message {
                ToBrowser::Answer { id, answer } => {
                    // A late answer (its request gave up) is dropped.
                    if state.open.contains(&id) {
                        state.answers.insert((id, pid), answer);
                    }
                }
                ToBrowser::Bye(report) => {
                    said_bye = true;
                    let order = state.links.iter().find(|l| l.pid == pid).map(|l| l.order);
                    state.reports.push((order.unwrap_or(usize::MAX), report));
                }
                ToBrowser::Hello { .. } => {}
            }
            drop(state);
            self.0.changed.notify_all();
        }
        let mut state = self.lock();
        state.links.retain(|l| l.pid != pid);
        let crashed = !said_bye && !state.ended;
        if crashed {
            state.crashed.push(pid);
        }
        drop(state);
        self.0.changed.notify_all();
        if crashed {
            (self.0.wake)();
        }
    }

    /// Sends `request` to every live content process and waits at most `wait` for their
    /// answers: one per process asked, `None` for those that did not answer (or ended).
    fn ask(&self, request: Request, wait: Duration) -> Vec<(u32, Option<Answer>)> {
        let deadline = Instant::now() + wait;
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.open.insert(id);
        let message = ToContent { id, request };
        let mut asked = Vec::new();
        for link in &mut state.links {
            if link::send(&mut link.writer, &message).is_ok() {
                asked.push(link.pid);
            }
        }
        let waiting = |state: &State| {
            asked.iter().any(|pid| {
                !state.answers.contains_key(&(id, *pid))
                    && state.links.iter().any(|l| l.pid == *pid)
            })
        };
        while waiting(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .0
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let answers = asked
            .iter()
            .map(|pid| (*pid, state.answers.remove(&(id, *pid))))
            .collect();
        state.open.remove(&id);
        state.answers.retain(|(answer_id, _), _| *answer_id != id);
        answers
    }

    /// Whether some content process still has work: a `stop()` to settle, a timer, a busy
    /// worker, or no answer in time.
    pub fn busy(&self) -> bool {
        self.ask(Request::Status, STATUS_WAIT)
            .into_iter()
            .any(|(_, answer)| match answer {
                Some(Answer::Status {
                    stops,
                    timers,
                    busy_workers,
                }) => stops + timers + busy_workers != 0,
                _ => true,
            })
    }

    /// WebDriver's Force Sample in every content process (those without a session of
    /// `context` answer at once): whether all recorded their samples in time.
    pub fn force_sample(&self, context: BrowsingContextId, timeout: Duration) -> bool {
        let request = Request::ForceSample {
            context,
            timeout_ms: timeout.as_millis() as u64,
        };
        self.ask(request, timeout + Duration::from_secs(1))
            .into_iter()
            .all(|(_, answer)| matches!(answer, Some(Answer::Sampled(true))))
    }

    /// A content process that crashed during the run, if one did.
    pub fn crashed(&self) -> Option<u32> {
        self.lock().crashed.first().copied()
    }

    /// The run's end: from now on processes may end without `Bye`. Every live process
    /// stops its sessions (each within `limit`, as a single process does) and reports; the
    /// reports of those that ended before are kept with them.
    pub fn finish(&self, limit: Duration) -> Finished {
        self.lock().ended = true;
        let order: HashMap<u32, usize> =
            self.lock().links.iter().map(|l| (l.pid, l.order)).collect();
        let request = Request::Finish {
            limit_ms: limit.as_millis() as u64,
        };
        let mut unanswered = 0;
        let mut finished = Vec::new();
        for (pid, answer) in self.ask(request, 2 * limit + Duration::from_secs(2)) {
            match answer {
                Some(Answer::Finished(report)) => {
                    finished.push((order.get(&pid).copied().unwrap_or(usize::MAX), report));
                }
                _ => unanswered += 1,
            }
        }
        let mut reports = std::mem::take(&mut self.lock().reports);
        reports.extend(finished);
        reports.sort_by_key(|(order, _)| *order);
        Finished {
            reports: reports.into_iter().map(|(_, report)| report).collect(),
            unanswered,
        }
    }
}
