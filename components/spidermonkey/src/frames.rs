//! What a stack capture reads frames with: the agent's cache of the script registry by
//! SpiderMonkey source id, the embedder's map from principals to realms, and what the
//! capture has learnt (the SavedFrame class, how often it fell back to the accessors). The
//! agent (`agent.rs`) owns one per thread; the capture (`capture.rs`) reads through it.

use std::ptr;
use std::sync::Arc;

use jsprof_profiler::{FrameSite, RawFrame, RealmId, ScriptId};
use jsprof_symbolizer::{ScriptRegistry, SourceId};
use mozjs::jsapi;
use rustc_hash::FxHashMap;

/// The embedder's map from a realm's principals to the profiler's realm id (its principals
/// are its own: jsprof's carry a window index and an origin).
///
/// It is called with the principals of a captured SavedFrame (null for none) and must only
/// read principals the embedder made; it must not call into SpiderMonkey.
pub type RealmOfPrincipals = unsafe fn(*mut jsapi::JSPrincipals) -> Option<RealmId>;

/// What the fallback capture needs to turn SavedFrames into raw frames.
pub(crate) struct FrameReader {
    realm: RealmId,
    registry: Arc<ScriptRegistry>,
    pub(crate) max_frames: u32,
    /// Source id -> (script, hidden, realm that compiled it): one registry lookup per source.
    sources: FxHashMap<SourceId, (Option<ScriptId>, bool, RealmId)>,
    /// The SavedFrame class, once seen (checked by name the first time).
    pub(crate) saved_frame_class: *const jsapi::JSClass,
    pub(crate) read_slots: bool,
    realm_of_principals: Option<RealmOfPrincipals>,
    /// Captures that could not read SavedFrame slots directly and used the accessors.
    pub(crate) fallbacks: u64,
}

impl FrameReader {
    /// Frames of sources `registry` does not know get `realm`; at most `max_frames` are
    /// captured (at least one).
    pub(crate) fn new(
        realm: RealmId,
        registry: Arc<ScriptRegistry>,
        max_frames: u32,
        read_slots: bool,
        realm_of_principals: Option<RealmOfPrincipals>,
    ) -> FrameReader {
        FrameReader {
            realm,
            registry,
            max_frames: max_frames.max(1),
            sources: FxHashMap::default(),
            saved_frame_class: ptr::null(),
            read_slots,
            realm_of_principals,
            fallbacks: 0,
        }
    }

    /// The raw frame of a SavedFrame's source id, line and tagged column. The script comes
    /// from the registry by source id (cached per id): a source the host never registered
    /// (eval code, the embedder's own scripts, self-hosted builtins) is a hidden frame
    /// without a script. The frame's realm is the realm that compiled its script (the fast
    /// path then reads it from the frame's principals, when the embedder maps them).
    pub(crate) fn raw_frame(&mut self, source_id: SourceId, line: u32, column: u32) -> RawFrame {
        let (registry, default_realm) = (&self.registry, self.realm);
        let (script, hidden, realm) =
            *self
                .sources
                .entry(source_id)
                .or_insert_with(|| match registry.lookup(source_id) {
                    Some(r) => (Some(r.script), r.hidden, r.realm),
                    None => (None, true, default_realm),
                });
        RawFrame {
            realm,
            script,
            hidden,
            site: position(line, column),
        }
    }

    /// The realm of a frame's principals, through the embedder's map (if any).
    ///
    /// # Safety
    /// `principals` are null or a live SavedFrame's.
    pub(crate) unsafe fn realm_of_principals(
        &self,
        principals: *mut jsapi::JSPrincipals,
    ) -> Option<RealmId> {
        let map = self.realm_of_principals?;
        // SAFETY: per the contract; the embedder's map reads only its own principals.
        unsafe { map(principals) }
    }
}

/// The raw frame of a position inside a script (the fallback capture's frames).
fn position(line: u32, column: u32) -> FrameSite {
    FrameSite::Position {
        line,
        column: column & !jsapi::JS::TaggedColumnNumberOneOrigin_WasmFunctionTag,
    }
}
