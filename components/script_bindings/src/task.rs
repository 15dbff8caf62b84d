//! Tasks for an event loop (<https://html.spec.whatwg.org/#concept-task>) from any thread:
//! a trace built off-thread comes back as a task that resolves the `stop()` promise, a
//! fetch's response as one that calls the prelude.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::runtime::TaskJs;

/// A task for an event loop (<https://html.spec.whatwg.org/#concept-task>), made on any
/// thread and run on the loop's thread with its runtime.
pub type Task = Box<dyn FnOnce(&mut dyn TaskJs) + Send>;

/// Queues tasks on an event loop from any thread.
#[derive(Clone)]
pub struct TaskSender {
    send: Arc<dyn Fn(Task) + Send + Sync>,
    /// Tasks promised with [`TaskSender::expect`] and not run yet: the loop waits for them.
    pending: Arc<AtomicUsize>,
}

impl std::fmt::Debug for TaskSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSender")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl TaskSender {
    pub fn new(send: impl Fn(Task) + Send + Sync + 'static) -> TaskSender {
        TaskSender {
            send: Arc::new(send),
            pending: Arc::default(),
        }
    }

    /// Queues `task` (dropped if the loop has ended).
    pub fn queue(&self, task: Task) {
        (self.send)(task);
    }

    /// Promises a task: the loop keeps turning until it is queued and run (or the promise
    /// is dropped).
    pub fn expect(&self) -> PendingTask {
        self.pending.fetch_add(1, Ordering::AcqRel);
        PendingTask {
            sender: Some(self.clone()),
        }
    }

    /// How many promised tasks have not run yet.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}

/// A task the loop waits for (see [`TaskSender::expect`]).
#[derive(Debug)]
pub struct PendingTask {
    sender: Option<TaskSender>,
}

impl PendingTask {
    pub fn queue(mut self, task: Task) {
        if let Some(sender) = self.sender.take() {
            let pending = sender.pending.clone();
            sender.queue(Box::new(move |js| {
                pending.fetch_sub(1, Ordering::AcqRel);
                task(js)
            }));
        }
    }
}

impl Drop for PendingTask {
    /// A promise given up (the work it stood for is done another way, or abandoned): the
    /// loop no longer waits for it — and is woken, with a task that does nothing, so that
    /// it sees that now rather than at its next timer or deadline.
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            sender.pending.fetch_sub(1, Ordering::AcqRel);
            sender.queue(Box::new(|_| {}));
        }
    }
}
