//! The run's watchdog: a thread that stops the page at its `--timeout` deadline, or as soon
//! as the process's resident memory passes `memory.max_resident_mb`.
//!
//! A script that never returns cannot be stopped between tasks, so the watchdog sets the
//! halt flag (the runtime's interrupt callback then terminates whatever script runs, see
//! `Js::terminate_on_interrupt`), requests an interrupt, and wakes the event loop in case it
//! is waiting for a message (a worker may be the one allocating). The page then ends as at
//! a normal end: its workers are terminated and its profilers' traces are written.
//!
//! Why resident memory and not SpiderMonkey's own heap limit (`JSGC_MAX_BYTES`): that limit
//! counts GC cells only, not the malloc'd elements of arrays or strings' characters (a loop
//! pushing `new Array(1e6)` passes 16 GB with it set), and a heap held near it makes every
//! allocation collect first, so the page crawls for minutes instead of failing. Browsers stop
//! such a tab as a whole ("out of memory"); so does jsprof.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the resident size is read (a read of `/proc/self/status` costs about 20 µs; at
/// the fastest allocation rate seen, 300 MB/s, the page overshoots the limit by ~8 MB).
const MEMORY_POLL: Duration = Duration::from_millis(25);

/// Why the watchdog stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `--timeout` passed.
    Deadline,
    /// The process's resident memory passed the limit.
    OutOfMemory { resident: u64, limit: u64 },
}

pub(crate) struct Watchdog {
    /// Dropped to end the thread.
    done: mpsc::Sender<()>,
    thread: JoinHandle<()>,
    stop: Arc<Mutex<Option<Stop>>>,
}

impl Watchdog {
    /// Starts watching, if there is anything to watch. At a stop it sets `halt`, then calls
    /// `interrupt` (which must make the running script reach its interrupt callback) and
    /// `wake` (which must wake the event loop).
    pub(crate) fn start(
        deadline: Option<Instant>,
        memory_limit: Option<u64>,
        halt: Arc<AtomicBool>,
        interrupt: impl Fn() + Send + 'static,
        wake: impl Fn() + Send + 'static,
    ) -> Option<Watchdog> {
        if deadline.is_none() && memory_limit.is_none() {
            return None;
        }
        let (done, wait) = mpsc::channel::<()>();
        let stop = Arc::new(Mutex::new(None));
        let reason = stop.clone();
        let thread = std::thread::Builder::new()
            .name("jsprof-watchdog".into())
            .spawn(move || {
                let Some(why) = watch(deadline, memory_limit, &wait) else {
                    return;
                };
                *reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                halt.store(true, Ordering::Release);
                interrupt();
                wake();
            })
            .ok()?;
        Some(Watchdog { done, thread, stop })
    }

    /// Ends the watch; why it stopped the run, if it did.
    pub(crate) fn finish(self) -> Option<Stop> {
        drop(self.done);
        let _ = self.thread.join();
        let stop = *self.stop.lock().unwrap_or_else(|e| e.into_inner());
        stop
    }
}

/// Waits until the deadline passes, the memory limit is passed, or `done` is dropped (`None`).
fn watch(
    deadline: Option<Instant>,
    memory_limit: Option<u64>,
    done: &mpsc::Receiver<()>,
) -> Option<Stop> {
    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Some(Stop::Deadline);
        }
        if let Some(limit) = memory_limit {
            if let Some(resident) = resident_bytes().filter(|&r| r > limit) {
                return Some(Stop::OutOfMemory { resident, limit });
            }
        }
        let until_deadline = deadline.map(|d| d.saturating_duration_since(now));
        let wait = match (until_deadline, memory_limit) {
            (Some(d), Some(_)) => d.min(MEMORY_POLL),
            (Some(d), None) => d,
            (None, _) => MEMORY_POLL,
        };
        match done.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// The process's resident set size (`VmRSS`), where the OS tells it.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_rss(&status)
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_resident_size() {
        assert_eq!(
            parse_vm_rss("Name:\tx\nVmRSS:\t  123456 kB\nVmSwap: 0 kB\n"),
            Some(123456 * 1024)
        );
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
        if cfg!(target_os = "linux") {
            assert!(resident_bytes().is_some_and(|r| r > 1 << 20));
        }
    }

    #[test]
    fn stops_at_the_deadline_and_sets_the_halt_flag_first() {
        let halt = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let seen = halt.clone();
        let dog = Watchdog::start(
            Some(Instant::now() + Duration::from_millis(30)),
            None,
            halt.clone(),
            move || tx.send(seen.load(Ordering::Acquire)).unwrap(),
            || {},
        )
        .unwrap();
        // A wait on the event with a deadline no machine needs.
        assert_eq!(rx.recv_timeout(Duration::from_secs(120)), Ok(true));
        assert_eq!(dog.finish(), Some(Stop::Deadline));
    }

    #[test]
    fn stops_when_resident_memory_passes_the_limit() {
        let halt = Arc::new(AtomicBool::new(false));
        // Any running process is over one byte.
        let dog = Watchdog::start(None, Some(1), halt.clone(), || {}, || {}).unwrap();
        let start = Instant::now();
        while !halt.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(matches!(
            dog.finish(),
            Some(Stop::OutOfMemory { limit: 1, .. })
        ));
    }

    #[test]
    fn finishing_early_is_no_stop() {
        let halt = Arc::new(AtomicBool::new(false));
        let dog = Watchdog::start(
            Some(Instant::now() + Duration::from_secs(3600)),
            Some(u64::MAX),
            halt.clone(),
            || {},
            || {},
        )
        .unwrap();
        assert_eq!(dog.finish(), None);
        assert!(!halt.load(Ordering::Acquire));
    }
}
