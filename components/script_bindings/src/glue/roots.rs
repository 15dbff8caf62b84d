//! Roots that outlive a call: a thread-local table of `Heap`s held by [`ObjectRoot`]s
//! (promises to settle later, reflectors with pending work), and the [`Promise`] /
//! [`Settlement`] pair that carries a promise's outcome across threads.

use std::cell::RefCell;
use std::ptr;

use mozjs::gc::RootedTraceableBox;
use mozjs::jsapi::{self, Heap, JSObject};
use rustc_hash::FxHashMap;

use crate::runtime::{Error, ObjectRoot, Out, Promise, RootRef, Settlement};

/// The objects of a thread's [`ObjectRoot`]s, by id. Each `Heap` is boxed so that it never
/// moves (its address may be in the store buffer).
type Table = FxHashMap<u64, Box<Heap<*mut JSObject>>>;

thread_local! {
    /// Objects kept alive past a call, by id (ids are never reused, so a stale
    /// [`RootRef`] finds nothing rather than another object). The whole table is **one**
    /// traced root: adding or releasing an object is O(1). (A `RootedTraceableBox` per
    /// object costs O(n) to release, as mozjs keeps its Rust roots in a `Vec` it scans:
    /// 100,000 running `Profiler`s took seconds to let go at the end of a run.)
    pub(super) static ROOTS: RefCell<Option<RootedTraceableBox<Table>>> = const { RefCell::new(None) };
    pub(super) static NEXT_ROOT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl ObjectRoot {
    pub(super) fn new(obj: *mut JSObject) -> ObjectRoot {
        let id = NEXT_ROOT.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        ROOTS.with(|r| {
            r.borrow_mut()
                .get_or_insert_with(|| RootedTraceableBox::new(Table::default()))
                .insert(id, Heap::boxed(obj))
        });
        ObjectRoot {
            id,
            thread: std::thread::current().id(),
        }
    }

    pub fn as_ref(&self) -> RootRef {
        RootRef(self.id)
    }
}

impl Drop for ObjectRoot {
    fn drop(&mut self) {
        if std::thread::current().id() != self.thread {
            return;
        }
        let _ = ROOTS.try_with(|r| {
            // Dropped outside the borrow: the Heap's own drop may run GC barriers.
            let taken = r
                .try_borrow_mut()
                .ok()
                .and_then(|mut r| r.as_mut()?.remove(&self.id));
            drop(taken);
        });
    }
}

/// The object of a live root (null if it was released).
pub(super) fn rooted_object(r: RootRef) -> *mut JSObject {
    ROOTS.with(|roots| {
        roots
            .borrow()
            .as_ref()
            .and_then(|t| t.get(&r.0))
            .map_or(ptr::null_mut(), |h| h.get())
    })
}

/// Releases the roots of objects whose global is `global` (a discarded window's promises
/// and reflectors with pending work: nothing will settle or reach them any more).
pub(super) fn release_roots_of(global: *mut JSObject) {
    let gone: Vec<_> = ROOTS.with(|r| {
        let mut roots = r.borrow_mut();
        let Some(roots) = roots.as_mut() else {
            return Vec::new();
        };
        let ids: Vec<u64> = roots
            .iter()
            .filter(|(_, obj)| {
                let obj = obj.get();
                // SAFETY: a rooted, live object of this thread's runtime (a root's object
                // is never a cross-compartment wrapper: roots are made in the object's
                // own realm).
                !obj.is_null() && unsafe { jsapi::GetNonCCWObjectGlobal(obj) } == global
            })
            .map(|(&id, _)| id)
            .collect();
        ids.into_iter().filter_map(|id| roots.remove(&id)).collect()
    });
    // Dropped outside the borrow: the Heap's own drop may run GC barriers.
    drop(gone);
}

/// Releases every root, and the table's own registration (before the runtime goes away).
pub(super) fn release_all_roots() {
    let all = ROOTS.with(|r| r.borrow_mut().take());
    drop(all);
}

impl<T: crate::runtime::ToJs> Promise<T> {
    /// The promise resolved with `value` (converted now, on the calling thread).
    pub fn resolved(self, value: &T) -> Settlement {
        Settlement {
            promise: self.root,
            result: Ok(value.to_js()),
        }
    }

    /// The promise resolved with a value already converted (for example on another thread).
    pub fn resolved_with(self, value: Out) -> Settlement {
        Settlement {
            promise: self.root,
            result: Ok(value),
        }
    }

    pub fn rejected(self, error: Error) -> Settlement {
        Settlement {
            promise: self.root,
            result: Err(error),
        }
    }
}
