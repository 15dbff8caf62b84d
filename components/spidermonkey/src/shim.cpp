// The C++ side of jsprof's SpiderMonkey agent (jsprof-spidermonkey): what the public Rust
// bindings do not reach. Built by build.rs against the same SpiderMonkey build mozjs_sys
// made; uses only what SpiderMonkey 153.3 (Servo 0.7) and 153.6 both declare (lib.rs).
//
// 1. A compiled script's ScriptSource id (the identity every captured frame carries), and
//    whether an object is a scripted Proxy (jsprof's prelude never opens one).
// 2. The sampler's stack walk. The profiler takes a sample *at the tick*, whatever the
//    agent's thread is doing (JIT code, the interpreter, a long native call such as
//    JSON.parse). The sampler thread first asks for an interrupt: JIT and interpreter code
//    serve it within microseconds, and the interrupt callback walks there. If it is not
//    served within 50 µs (the thread is in a long native call, a collection, a blocking
//    call), the sampler sends the agent's thread a SIGPROF, and the handler, on the agent's
//    thread, stopped at an arbitrary pc, walks instead. The walk uses SpiderMonkey's
//    profiling frame iterator (the same walk Gecko's profiler does on a suspended thread)
//    and the profiling stack (frames of the C++ interpreter). It writes plain numbers into
//    the agent's preallocated buffer. Exactly one of the two takes the request (an atomic
//    state), so a request is walked once, at most 50 µs after its tick, and an interrupt
//    is never served for a stack that is no longer running: the signal walks instead.
//
// Rules of the handler: it allocates nothing, takes no lock, calls no function that could
// (only the iterator, which SpiderMonkey designs for a thread stopped anywhere, and which
// yields nothing while sampling is suppressed: JIT table updates, profiler toggling), and
// keeps errno. Everything else happens on the agent's thread (setup, teardown) or on the
// sampler thread (the request and the wait), never both at once for one agent.

#include <atomic>
#include <cerrno>
#include <csignal>
#include <algorithm>
#include <cstring>
#include <ctime>

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "jsapi.h"
#include "jsfriendapi.h"
#include "js/Interrupt.h"
#include "js/Modules.h"
#include "js/Proxy.h"
#include "js/ProfilingFrameIterator.h"
#include "js/ProfilingStack.h"
#include "jit/BaselineFrame.h"
#include "jit/JitRuntime.h"
#include "jit/JitcodeMap.h"
#include "jit/JSJitFrameIter.h"
#include "jit/ProcessExecutableMemory.h"
#include "jit/ScriptFromCalleeToken.h"
#include "vm/JitActivation.h"
#include "vm/Runtime.h"
#include "vm/JSScript.h"

// ---- 1. Script identity ------------------------------------------------------------------

// The id of the ScriptSource a compiled script (or function) belongs to: the same id a
// SavedFrame's source id slot and the profiler's frames carry. Every compilation has its own
// ScriptSource, so this identifies *one* fetch and compile of a script, whatever its URL.
extern "C" uint32_t jsprof_script_source_id(JSScript* script) {
  return script->scriptSource()->id();
}

// The ScriptSource id of a compiled module record.
extern "C" uint32_t jsprof_module_source_id(JSObject* module) {
  JSScript* script = JS::GetModuleScript(JS::Handle<JSObject*>::fromMarkedLocation(&module));
  return script ? script->scriptSource()->id() : 0;
}

// Whether `obj` is a scripted Proxy (`new Proxy(…)`: every operation on it may run a page
// function), seen through any cross-compartment wrapper.
extern "C" bool jsprof_is_scripted_proxy(JSObject* obj) {
  return js::IsScriptedProxy(js::UncheckedUnwrap(obj, /* stopAtWindowProxy = */ true));
}

// ---- 2. The stack walk ---------------------------------------------------------------------

// One frame as the walk reports it: the frame's ScriptSource id and the 1-based definition
// position of its function (the `(` of its parameter list), or no position for top-level
// script code.
struct jsprof_frame {
  uint32_t source_id;
  uint32_t line;
  uint32_t column;
  uint32_t flags;  // JSPROF_FRAME_*
};
static const uint32_t JSPROF_FRAME_DEFINITION = 1;  // line/column: the function's definition
static const uint32_t JSPROF_FRAME_TOP_LEVEL = 2;   // top-level code of its script

static const uint32_t kMaxFrames = 256;
static const uint32_t kCacheSlots = 256;  // a power of two
static const uint32_t kPcFrames = 3;      // the frames one return address is remembered with

// A request's life: the sampler sets kRequested; the interrupt callback or the handler
// takes it (kWalking) and publishes the frames (kDone), or, inside a collection whose stack
// was not kept and cannot be walked now, defers it to the collection's end (kDeferred).
enum : uint32_t { kIdle = 0, kRequested = 1, kDone = 2, kWalking = 3, kDeferred = 4 };

// What a walk found (jsprof_agent_sample's result).
enum : int32_t {
  JSPROF_SAMPLE_OK = 0,          // `count` frames, outermost first
  JSPROF_SAMPLE_NOT_ENABLED = 1, // profiling instrumentation is off: nothing to walk
  JSPROF_SAMPLE_NO_SIGNAL = 2,   // the thread could not be signalled (it is gone)
  JSPROF_SAMPLE_TIMEOUT = 3,     // the walk was abandoned before the thread took it
  JSPROF_SAMPLE_PENDING = 4,     // the thread has not taken the walk yet
  JSPROF_SAMPLE_DEFERRED = 5,    // the thread took it inside a collection: walked at its end
};

// What jsprof_agent_poll does about a pending walk.
enum : int32_t { JSPROF_POLL_LOOK = 0, JSPROF_POLL_NUDGE = 1, JSPROF_POLL_ABANDON = 2 };

struct JsprofAgent {
  JSContext* cx;
  ProfilingStack* stack;
  pid_t tid;
  bool enabled;
  std::atomic<uint32_t> state;
  int32_t status;
  uint32_t count;
  bool truncated;
  // Time spent in the handler (ns), and walks, in total and by frames walked (the last
  // bucket: that many or more), for --profile-stats. Written by the handler only.
  uint64_t handler_ns;
  uint64_t walks;
  uint64_t signalled;  // walks that needed a signal
  // What one signal costs the thread beyond its handler (delivery and sigreturn), measured
  // on this machine when the agent is created.
  uint64_t signal_ns;
  uint64_t depth_ns[65];
  uint64_t depth_walks[65];
  jsprof_frame frames[kMaxFrames];
  // Inside a collection (a major GC slice or a nursery collection) nothing is walkable:
  // SpiderMonkey suppresses sampling while it sweeps its JIT tables. The JS stack cannot
  // change during one, so a tick inside it is walked when it ends (kDeferred, or kRequested
  // if the sampler saw the collection and sent no signal). `in_gc` is set by the agent's
  // thread, read by its handler and by the sampler thread.
  std::atomic<bool> in_gc;
  uint32_t gc_depth;  // nursery collections nest inside major slices
  uint64_t gc_deferred;  // ticks inside a collection, walked at its end
  // What walks remember between collections (see `cache_slot`): the frames a JIT return
  // address stands for, a label's parsed position, and a Baseline Interpreter frame's
  // script's frame. An entry counts only if its `gen` is the current `cache_gen`, which
  // every major collection slice's start and end moves on.
  uint64_t cache_gen;
  // One cache line: the frames of a return address in Baseline or Ion code (up to
  // kPcFrames, inlined ones included, youngest first), or that it is the Baseline
  // Interpreter's (whose frames are remembered by script).
  struct alignas(64) PcSlot {
    void* pc;
    uint32_t gen;  // the low half of cache_gen
    uint16_t count;
    uint16_t interpreter;
    jsprof_frame frames[kPcFrames];
  } pc_cache[kCacheSlots];
  struct LabelSlot {
    const char* label;
    uint64_t gen;
    uint32_t line, column, flags;
  } label_cache[kCacheSlots];
  struct ScriptSlot {
    const JSScript* script;
    uint64_t gen;
    jsprof_frame frame;
  } script_cache[kCacheSlots];
  // Scratch for the merge: JIT frames (youngest first) and their stack addresses.
  jsprof_frame jit[kMaxFrames];
  void* jit_addr[kMaxFrames];
};

// The agent of this thread, read by the signal handler (initial-exec TLS: no allocation on
// first access from a handler).
static thread_local JsprofAgent* tls_agent __attribute__((tls_model("initial-exec"))) = nullptr;

static inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

static uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Parses the position a SpiderMonkey profile string ends with: "name (url:line:col)",
// "url:line:col", or just "url" for top-level code (no position).
static jsprof_frame frame_from_label(uint32_t source_id, const char* label) {
  jsprof_frame f{source_id, 0, 0, JSPROF_FRAME_TOP_LEVEL};
  if (!label) return f;
  size_t end = strnlen(label, 4096);
  if (end > 0 && label[end - 1] == ')') end--;
  uint32_t numbers[2] = {0, 0};
  for (int n = 0; n < 2; n++) {
    size_t digits = 0;
    uint64_t value = 0, scale = 1;
    while (end > 0 && label[end - 1] >= '0' && label[end - 1] <= '9' && digits < 10) {
      value += uint64_t(label[end - 1] - '0') * scale;
      scale *= 10;
      end--;
      digits++;
    }
    if (digits == 0 || end == 0 || label[end - 1] != ':') return f;
    end--;
    numbers[n] = uint32_t(value);
  }
  f.line = numbers[1];
  f.column = numbers[0];
  f.flags = JSPROF_FRAME_DEFINITION;
  return f;
}

// What walks remember. A walk at a 20 ms interval finds everything it reads cold (the
// page ran meanwhile), so its time goes mostly to cache misses: for each JIT frame, a
// JitcodeGlobalTable lookup (a tree of every JIT code record), the record, its script's
// source and its label, read to its end for the position; for a Baseline Interpreter frame
// the script's source, realm and JitScript. So a return address is remembered with the
// frames it stands for (one cache line), a label with its position, and an interpreter
// frame by its script. All of it stays put between major collections: SpiderMonkey frees
// JIT code, its records (and their labels) and scripts (and the profile strings of the
// profiling stack) only while it sweeps, and moves scripts only while it compacts, both in
// a major collection's slices. A nursery collection moves and frees only nursery things:
// no script, JIT code or code record is ever in the nursery, and labels are malloc'd; on a
// page that allocates they come every few milliseconds and would leave a 20 ms walk
// nothing remembered. The exception is a Baseline Interpreter frame's label, owned by the
// script's JitScript, which discarding JIT code outside a collection (a JIT option
// changed, say) frees: that frame is remembered by its script instead, whose label,
// wherever it is allocated, names the same position. So a slot is valid for the stretch
// between major slices it was filled in (`cache_gen`), and a deep or recursive stack looks
// each return address, label and script up once.
static inline uint32_t cache_slot(const void* p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  return uint32_t((v >> 4) ^ (v >> 12)) & (kCacheSlots - 1);
}


// frame_from_label through the agent's cache.
static jsprof_frame labelled(JsprofAgent* a, uint32_t source_id, const char* label) {
  if (!label) return frame_from_label(source_id, label);
  JsprofAgent::LabelSlot& slot = a->label_cache[cache_slot(label)];
  if (slot.label != label || slot.gen != a->cache_gen) {
    jsprof_frame f = frame_from_label(source_id, label);
    slot = {label, a->cache_gen, f.line, f.column, f.flags};
    return f;
  }
  return jsprof_frame{source_id, slot.line, slot.column, slot.flags};
}

// A Baseline Interpreter frame, through the agent's cache: its script's ScriptSource id and
// label position, the id given only while the frame runs in the interpreter (as
// `baselineInterpreterScriptPC` gives it; otherwise 0, a hidden frame).
static jsprof_frame interpreter_frame(JsprofAgent* a,
                                      const js::jit::JSJitProfilingFrameIterator& jit) {
  uint8_t* fp = static_cast<uint8_t*>(jit.fp());
  JSScript* script =
      js::jit::ScriptFromCalleeToken(reinterpret_cast<js::jit::JitFrameLayout*>(fp)->calleeToken());
  auto* frame = reinterpret_cast<js::jit::BaselineFrame*>(fp - js::jit::BaselineFrame::Size());
  bool interpreted = frame->runningInInterpreter() && frame->interpreterScript() == script;
  JsprofAgent::ScriptSlot& slot = a->script_cache[cache_slot(script)];
  if (slot.script != script || slot.gen != a->cache_gen) {
    slot = {script, a->cache_gen,
            frame_from_label(script->scriptSource()->id(), jit.baselineInterpreterLabel())};
  }
  jsprof_frame f = slot.frame;
  if (!interpreted) f.source_id = 0;
  return f;
}

// The registers of the agent's thread stopped at `uc`.
static JS::ProfilingFrameIterator::RegisterState registers(const ucontext_t* uc) {
  JS::ProfilingFrameIterator::RegisterState regs;
#if defined(__x86_64__)
  regs.pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  regs.sp = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RSP]);
  regs.fp = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RBP]);
  regs.tempRA = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_R10]);
  regs.tempFP = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_R12]);
#elif defined(__aarch64__)
  regs.pc = reinterpret_cast<void*>(uc->uc_mcontext.pc);
  regs.sp = reinterpret_cast<void*>(uc->uc_mcontext.sp);
  regs.fp = reinterpret_cast<void*>(uc->uc_mcontext.regs[29]);
  regs.lr = reinterpret_cast<void*>(uc->uc_mcontext.regs[30]);
#endif
  // Stopped outside JIT code (in a native call, the VM, the C++ interpreter: ticks that
  // need a signal mostly land there), the iterator starts from the last JIT exit frame
  // whatever the pc, after looking the pc up in the JIT code table, a tree of every code
  // record, cold at each walk, where it cannot be. Without a pc it starts there at once,
  // as from the interrupt callback.
  if (!js::jit::AddressIsInExecutableMemory(regs.pc)) regs.pc = nullptr;
  return regs;
}

// `ProfilingFrameIterator::extractStack` computes each JIT frame's line and column, which
// the walk does not need (a frame is named by its function's definition, from its label):
// for Baseline frames through `JS::LookupJitCodeRecord`, a linear scan of every JIT code
// record under a lock, and for Ion frames by decoding source notes (`PCToLineNumber`).
// Those were most of a cold walk's time. So the walk reads the same JitcodeGlobalTable
// entry extractStack would, and takes only its labels and source ids. The JIT iterator
// inside ProfilingFrameIterator is private; it is reached through the standard rule that
// explicit template instantiations may name private members.
using JitIterGetter =
    const js::jit::JSJitProfilingFrameIterator& (JS::ProfilingFrameIterator::*)() const;
struct JitIterTag {
  friend JitIterGetter jit_iter_getter(JitIterTag);
};
template <JitIterGetter Getter>
struct JitIterAccess {
  friend JitIterGetter jit_iter_getter(JitIterTag) { return Getter; }
};
template struct JitIterAccess<&JS::ProfilingFrameIterator::jsJitIter>;

// The frames a JIT return address stands for, youngest first, into `out` (at most `room`):
// its code record's script (several when Ion inlined calls). Wasm, trampoline and
// unknown code give none. Sets `*interpreter` instead for the Baseline Interpreter's code,
// shared by every script.
static uint32_t code_frames(JsprofAgent* a, void* pc, jsprof_frame* out, uint32_t room,
                            bool* interpreter) {
  *interpreter = false;
  js::jit::JitcodeGlobalTable* table = a->cx->runtime()->jitRuntime()->getJitcodeGlobalTable();
  const js::jit::JitcodeGlobalEntry* entry = table->lookup(pc);
  if (!entry || entry->isDummy()) return 0;
  if (entry->isBaselineInterpreter()) {
    *interpreter = true;
    return 0;
  }
  if (entry->isBaseline()) {
    const js::jit::BaselineEntry& b = entry->asBaseline();
    out[0] = labelled(a, b.scriptKey().scriptSource->id(), b.str());
    return 1;
  }
  if (entry->isIon() || entry->isIonIC()) {
    const js::jit::IonEntry* ion = &entry->asIon();
    if (entry->isIonIC()) {
      ion = &entry->asIonIC().ionEntry();
      pc = entry->asIonIC().rejoinAddr();
    }
    if (!ion->containsPointer(pc)) return 0;
    uint32_t offset = uint32_t(static_cast<uint8_t*>(pc) -
                               static_cast<uint8_t*>(ion->nativeStartAddr()));
    const js::jit::JitcodeIonTable* regions = ion->regionTable();
    js::jit::JitcodeRegionEntry region = regions->regionEntry(regions->findRegionEntry(offset));
    js::jit::JitcodeRegionEntry::ScriptPcIterator scripts = region.scriptPcIterator();
    uint32_t n = 0;
    while (scripts.hasMore() && n < room) {
      uint32_t script_index, pc_offset;
      scripts.readNext(&script_index, &pc_offset);
      out[n++] = labelled(a, ion->getScriptKey(script_index).scriptSource->id(),
                          ion->getStr(script_index));
    }
    return n;
  }
  if (entry->isRealmIndependentShared()) {
    // Shared stubs name no script: a hidden frame.
    out[0] = labelled(a, 0, entry->asRealmIndependentShared().str());
    return 1;
  }
  return 0;
}

// The frames of the iterator's current physical JIT frame (several when Ion inlined
// calls), youngest first, into `out`/`addr` (at most `room`), through the agent's cache of
// return addresses: a cold walk's time goes to cache misses, and a remembered return
// address costs one line where its code record, script source and label cost several.
// Trampoline frames give none.
static uint32_t jit_frames(JsprofAgent* a, const js::jit::JSJitProfilingFrameIterator& jit,
                           jsprof_frame* out, void** addr, uint32_t room) {
  if (room == 0 || js::jit::IsPortableBaselineInterpreterEnabled()) return 0;
  void* stack_address = jit.stackAddress();
  void* pc = jit.resumePCinCurrentFrame();
  JsprofAgent::PcSlot& slot = a->pc_cache[cache_slot(pc)];
  uint32_t gen = uint32_t(a->cache_gen);
  uint32_t n;
  bool interpreter;
  if (slot.pc == pc && slot.gen == gen) {
    interpreter = slot.interpreter;
    n = std::min<uint32_t>(slot.count, room);
    for (uint32_t i = 0; i < n; i++) out[i] = slot.frames[i];
  } else {
    n = code_frames(a, pc, out, room, &interpreter);
    // A return address with no code record (yet) is not remembered: code may be compiled
    // there before the next collection. Nor is one with more inlined frames than a slot
    // holds (or than there was room for).
    if ((n > 0 || interpreter) && n <= kPcFrames && room > kPcFrames) {
      slot.pc = pc;
      slot.gen = gen;
      slot.count = uint16_t(n);
      slot.interpreter = interpreter;
      for (uint32_t i = 0; i < n; i++) slot.frames[i] = out[i];
    }
  }
  if (interpreter) {
    out[0] = interpreter_frame(a, jit);
    n = 1;
  }
  for (uint32_t i = 0; i < n; i++) addr[i] = stack_address;
  return n;
}

// The JIT frames of every profiling activation, youngest first, into `a->jit` (`*njit` of
// them): what JS::ProfilingFrameIterator gives from no registers (the interrupt callback,
// a collection's end, a signal outside JIT code), each activation's frames from its last
// exit frame, without what only wasm needs. That iterator asks, at every walk, whether
// the registers' pc is in wasm code (a lookup among every wasm module and builtin thunk
// of the process, behind an atomic counter: cold lines at each walk, a tenth of a walk's
// time). With no pc it cannot be; a wasm exit on the stack is left to it (false).
static bool jit_walk_from_exits(JsprofAgent* a, uint32_t* njit) {
  JSContext* cx = a->cx;
  *njit = 0;
  if (!cx->isProfilerSamplingEnabled()) return true;
  bool youngest = true;
  for (js::Activation* act = cx->profilingActivation(); act && *njit < kMaxFrames;
       act = act->prevProfiling(), youngest = false) {
    js::jit::JitActivation* jit_act = act->asJit();
    if (jit_act->hasWasmExitFP()) return false;
    js::jit::JSJitProfilingFrameIterator jit =
        youngest ? js::jit::JSJitProfilingFrameIterator(cx, nullptr, nullptr)
                 : js::jit::JSJitProfilingFrameIterator(
                       reinterpret_cast<js::jit::CommonFrameLayout*>(jit_act->jsExitFP()));
    for (; !jit.done() && *njit < kMaxFrames; ++jit) {
      *njit += jit_frames(a, jit, &a->jit[*njit], &a->jit_addr[*njit], kMaxFrames - *njit);
    }
    if (jit.done() && jit.wasmCallerFP()) return false;
  }
  return true;
}

// The walk, on the agent's thread, stopped at `regs` (or, with empty registers, at a point
// where SpiderMonkey itself called out: the profiler starts from the last JIT exit frame).
// The frames go to `out` (`*out_count` of them, outermost first).
static void walk(JsprofAgent* a, const JS::ProfilingFrameIterator::RegisterState& regs,
                 jsprof_frame* out, uint32_t* out_count) {
  *out_count = 0;
  a->truncated = false;
  JSContext* cx = a->cx;
  if (!a->enabled) {
    a->status = JSPROF_SAMPLE_NOT_ENABLED;
    return;
  }
  // JIT frames (Baseline Interpreter, Baseline, Ion with its inlined frames), youngest
  // first, each with the stack address the merge orders by. From a pc in JIT or wasm code,
  // or with wasm frames on the stack, SpiderMonkey's own iterator (which crashes if the
  // profiler is off: the agent is the only one that turns it on or off, on this thread,
  // but it is checked all the same).
  uint32_t njit = 0;
  if (regs.pc || !jit_walk_from_exits(a, &njit)) {
    if (!JS::IsProfilingEnabledForContext(cx)) {
      a->status = JSPROF_SAMPLE_NOT_ENABLED;
      return;
    }
    njit = 0;
    for (JS::ProfilingFrameIterator it(cx, regs); !it.done() && njit < kMaxFrames; ++it) {
      if (!it.isJSJit()) continue;
      const js::jit::JSJitProfilingFrameIterator& jit = (it.*jit_iter_getter(JitIterTag{}))();
      njit += jit_frames(a, jit, &a->jit[njit], &a->jit_addr[njit], kMaxFrames - njit);
    }
  }
  // The profiling stack, oldest first: label and SP-marker frames give the stack address
  // of the C++ interpreter's JS frames after them (Gecko's MergeStacks); frames running
  // in JIT code (OSR) and js::RunScript markers (no profile string) are left to the JIT
  // walk. Merged with the JIT frames by address, oldest (highest) first.
  ProfilingStack* ps = a->stack;
  uint32_t depth = ps->stackSize();
  if (depth > ps->stackCapacity()) depth = ps->stackCapacity();
  js::ProfilingStackFrame* pframes = ps->frames;
  void* last_label_addr = nullptr;
  int32_t j = int32_t(njit) - 1;  // the oldest JIT frame not emitted yet
  auto emit = [&](const jsprof_frame& f) {
    if (*out_count < kMaxFrames) {
      out[(*out_count)++] = f;
    } else {
      a->truncated = true;
    }
  };
  for (uint32_t i = 0; pframes && i < depth; i++) {
    js::ProfilingStackFrame& pf = pframes[i];
    if (pf.isLabelFrame() || pf.isSpMarkerFrame()) {
      last_label_addr = pf.stackAddress();
      continue;
    }
    if (!pf.isJsFrame() || pf.isOSRFrame() || !pf.dynamicString()) continue;
    // Emit the JIT frames older than this interpreter frame first.
    while (j >= 0 && a->jit_addr[j] > last_label_addr) emit(a->jit[j--]);
    emit(labelled(a, pf.sourceId(), pf.dynamicString()));
  }
  while (j >= 0) emit(a->jit[j--]);
  a->status = JSPROF_SAMPLE_OK;
}

// Takes the request if it is in state `from` (kRequested, or kDeferred at a collection's
// end), and walks from `regs` (the signal handler's registers, or none from the interrupt
// callback and the collection callback). Whether it took it.
static bool take_and_walk(JsprofAgent* a, const JS::ProfilingFrameIterator::RegisterState& regs,
                          uint32_t from = kRequested) {
  uint32_t expected = from;
  if (a && a->state.compare_exchange_strong(expected, kWalking)) {
    // Nothing is walkable inside a collection (sampling is suppressed while it moves
    // things the walk reads: the iterator would yield no JIT frame, and the C++
    // interpreter's frames alone are not the stack). The JS stack cannot change meanwhile,
    // so the tick is walked when the collection ends, and gets the stack that was running
    // at its tick: the one that made the collection.
    if (a->in_gc.load(std::memory_order_seq_cst)) {
      a->gc_deferred++;
      a->state.store(kDeferred, std::memory_order_seq_cst);
      return true;
    }
    uint64_t start = now_ns();
    walk(a, regs, a->frames, &a->count);
    uint64_t spent = now_ns() - start;
    a->handler_ns += spent;
    uint32_t bucket = a->count < 64 ? a->count : 64;
    a->walks++;
    a->depth_ns[bucket] += spent;
    a->depth_walks[bucket]++;
    a->state.store(kDone, std::memory_order_seq_cst);
    return true;
  }
  return false;
}

static void on_sigprof(int, siginfo_t*, void* context) {
  int saved_errno = errno;
  JsprofAgent* a = tls_agent;
  if (a) {
    a->signalled++;
    take_and_walk(a, registers(static_cast<const ucontext_t*>(context)));
  }
  errno = saved_errno;
}

// The interrupt callback's part (on the agent's thread, from SpiderMonkey's interrupt
// check): walks a pending request from where the JS code stopped.
extern "C" void jsprof_agent_on_interrupt() {
  JS::ProfilingFrameIterator::RegisterState none;
  take_and_walk(tls_agent, none);
}

static std::atomic<bool> handler_installed{false};

// Creates the sampling agent of this thread's context (on that thread): a profiling stack
// for the context, and the SIGPROF handler (once per process). Sampling walks nothing until
// jsprof_agent_enable.
extern "C" JsprofAgent* jsprof_agent_new(JSContext* cx) {
  if (!handler_installed.exchange(true)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, nullptr);
  }
  JsprofAgent* a = new JsprofAgent();
  a->cx = cx;
  a->stack = new ProfilingStack();
  a->tid = pid_t(syscall(SYS_gettid));
  a->enabled = false;
  a->state.store(kIdle);
  js::SetContextProfilingStack(cx, a->stack);
  tls_agent = a;
  // Calibration: a signal to this very thread is delivered on the syscall's return, so the
  // time of tgkill-to-self minus a plain syscall is what delivery and sigreturn cost (the
  // handler finds no request and returns at once). Medians of 15.
  uint64_t with_signal[15], plain[15];
  pid_t pid = getpid();
  for (int i = 0; i < 15; i++) {
    uint64_t t0 = now_ns();
    syscall(SYS_getppid);
    uint64_t t1 = now_ns();
    syscall(SYS_tgkill, pid, a->tid, SIGPROF);
    uint64_t t2 = now_ns();
    plain[i] = t1 - t0;
    with_signal[i] = t2 - t1;
  }
  std::sort(plain, plain + 15);
  std::sort(with_signal, with_signal + 15);
  a->signal_ns = with_signal[7] > plain[7] ? with_signal[7] - plain[7] : 0;
  a->signalled = 0;
  return a;
}

// Turns SpiderMonkey's profiling instrumentation on (on the agent's thread, outside any
// JS): JIT code is discarded and recompiled with it, and every script starts in the
// Baseline Interpreter, whose frames the iterator sees.
extern "C" void jsprof_agent_enable(JsprofAgent* a) {
  if (a->enabled) return;
  JS_SetGlobalJitCompilerOption(a->cx, JSJITCOMPILER_BASELINE_INTERPRETER_WARMUP_TRIGGER, 0);
  js::EnableContextProfilingStack(a->cx, true);  // discards JIT code, outside a collection
  a->cache_gen++;
  a->enabled = true;
}

// The frames of a finished walk (state kDone), handed over: valid until the next request
// for this agent.
static int32_t hand_over(JsprofAgent* a, const jsprof_frame** frames, uint32_t* count,
                         bool* truncated) {
  int32_t status = a->status;
  *frames = a->frames;
  *count = a->count;
  *truncated = a->truncated;
  a->state.store(kIdle, std::memory_order_release);
  return status;
}

// Starts taking the agent's stack now, from the sampler thread: asks for the interrupt and
// spins a little (the interrupt is usually served, and the walk done, within 10 µs). Returns
// JSPROF_SAMPLE_OK with the frames, or JSPROF_SAMPLE_PENDING: the agent's thread has not
// walked yet (or JSPROF_SAMPLE_DEFERRED: it took the request inside a collection), and
// jsprof_agent_poll follows the walk. The sampler does not wait here for a
// thread that waits for a CPU (threads outnumbering cores): it serves the other agents
// meanwhile, and the walk, whenever the thread runs, finds the stack the tick saw (a thread
// that is not running cannot change its stack).
extern "C" int32_t jsprof_agent_begin(JsprofAgent* a, const jsprof_frame** frames,
                                      uint32_t* count, bool* truncated) {
  *count = 0;
  a->state.store(kRequested, std::memory_order_seq_cst);
  // Inside a collection, the thread walks the request when the collection ends (see
  // jsprof_agent_gc_slice): no interrupt, no wait. The store above and the load here, and
  // the thread's store of `in_gc` and load of the state at the collection's end, are all
  // sequentially consistent, so at least one side sees the other: the request is not left
  // behind.
  if (a->in_gc.load(std::memory_order_seq_cst)) return JSPROF_SAMPLE_DEFERRED;
  JS_RequestInterruptCallback(a->cx);
  uint64_t start = now_ns();
  const uint64_t spin_ns = 10000;
  while (now_ns() - start < spin_ns) {
    if (a->state.load(std::memory_order_seq_cst) == kDone) {
      return hand_over(a, frames, count, truncated);
    }
    cpu_relax();
  }
  return a->state.load(std::memory_order_seq_cst) == kDeferred ? JSPROF_SAMPLE_DEFERRED
                                                                : JSPROF_SAMPLE_PENDING;
}

// Where a walk jsprof_agent_begin left pending stands. `action`: JSPROF_POLL_LOOK only looks;
// JSPROF_POLL_NUDGE signals the thread if it has not taken the request (past 50 µs the
// thread is elsewhere than JS code: a native call, a GC, a blocking call, or off the CPU;
// the handler walks from its registers as soon as it runs); JSPROF_POLL_ABANDON withdraws
// the request (the handler, if it comes later, finds nothing). A request the thread has
// taken inside a collection is walked at its end: JSPROF_SAMPLE_DEFERRED, whatever `action`.
extern "C" int32_t jsprof_agent_poll(JsprofAgent* a, int32_t action, const jsprof_frame** frames,
                                     uint32_t* count, bool* truncated) {
  *count = 0;
  for (;;) {
    uint32_t s = a->state.load(std::memory_order_seq_cst);
    if (s == kDone) return hand_over(a, frames, count, truncated);
    // The thread took the request inside a collection and walks when it ends: it is
    // running, and its stack is still the tick's. Not nudged nor abandoned, however long
    // that takes.
    if (s == kDeferred) return JSPROF_SAMPLE_DEFERRED;
    // Not taken yet, and the thread is inside a collection: it walks the request when the
    // collection ends (as jsprof_agent_begin). No signal: the handler could only defer it.
    if (s == kRequested && a->in_gc.load(std::memory_order_seq_cst)) {
      return JSPROF_SAMPLE_DEFERRED;
    }
    if (action == JSPROF_POLL_ABANDON) {
      if (s == kWalking) {
        cpu_relax();  // a walk under way ends within microseconds: wait for it
        continue;
      }
      uint32_t expected = s;
      if (a->state.compare_exchange_strong(expected, kIdle)) return JSPROF_SAMPLE_TIMEOUT;
      continue;
    }
    if (action == JSPROF_POLL_NUDGE && s == kRequested) {
      if (syscall(SYS_tgkill, getpid(), a->tid, SIGPROF) != 0) {
        uint32_t expected = kRequested;
        if (a->state.compare_exchange_strong(expected, kIdle)) return JSPROF_SAMPLE_NO_SIGNAL;
        continue;
      }
    }
    return JSPROF_SAMPLE_PENDING;
  }
}

// A collection of the agent's context (a major GC slice or a nursery collection) begins
// (`begin`) or ends, on the agent's thread. A tick inside it is walked when the outermost
// one ends: the JS stack cannot change meanwhile, and the sampler waits for such a walk
// however long the collection takes (jsprof_agent_poll answers JSPROF_SAMPLE_DEFERRED).
// Walking every collection's stack as it began, or every one a tick was likely to fall in,
// cost the page's thread more than the walks the ticks inside them need: most collections
// are far shorter than the interval, and no tick falls in them. A major slice's edges
// (`major`) also move the walk caches on (`cache_gen`): it may free or move what they
// remember. A nursery collection does not (see `cache_slot`).
extern "C" void jsprof_agent_gc_slice(bool begin, bool major) {
  JsprofAgent* a = tls_agent;
  if (!a) return;
  if (begin) {
    if (a->gc_depth++ == 0) {
      // The handler, which may interrupt this thread anywhere, sees `in_gc` before
      // anything the collection frees goes.
      a->in_gc.store(true, std::memory_order_seq_cst);
    }
    if (major) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      a->cache_gen++;
    }
    return;
  }
  if (a->gc_depth == 0) return;
  if (major) a->cache_gen++;
  if (--a->gc_depth > 0) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  a->in_gc.store(false, std::memory_order_seq_cst);
  // A tick that came inside it: walk now (the stack is the one the collection interrupted),
  // with SIGPROF blocked so that the handler (which uses the same buffers) cannot run in the
  // middle. Deferred by the handler, or still requested: the sampler saw the collection
  // and sent no signal (jsprof_agent_begin, jsprof_agent_poll).
  uint32_t pending = a->state.load(std::memory_order_seq_cst);
  if (pending == kDeferred || pending == kRequested) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    JS::ProfilingFrameIterator::RegisterState none;
    if (take_and_walk(a, none, pending) && pending == kRequested) a->gc_deferred++;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
}

// Ticks that came inside a collection (walked at its end).
extern "C" uint64_t jsprof_agent_gc_deferred(const JsprofAgent* a) { return a->gc_deferred; }

// Time the agent's thread spent in walks, and how many: in all (`depth` > 64) or of walks
// that found exactly `depth` frames (64: that many or more).
// Walks that needed a signal, and what one signal costs the agent's thread beyond its
// handler.
extern "C" uint64_t jsprof_agent_signalled(const JsprofAgent* a, uint64_t* signal_ns) {
  *signal_ns = a->signal_ns;
  return a->signalled;
}

extern "C" void jsprof_agent_cost(const JsprofAgent* a, uint32_t depth, uint64_t* handler_ns,
                                  uint64_t* walks) {
  if (depth > 64) {
    *handler_ns = a->handler_ns;
    *walks = a->walks;
  } else {
    *handler_ns = a->depth_ns[depth];
    *walks = a->depth_walks[depth];
  }
}

// The CPU time the agent's thread has run (ns), read from any thread of the process (the
// thread's CPU-time clock: Linux's clock id for a thread id, as pthread_getcpuclockid makes
// it), or 0 if it cannot be read.
extern "C" uint64_t jsprof_agent_cpu_ns(const JsprofAgent* a) {
  clockid_t clock = clockid_t((~uint32_t(a->tid) << 3) | 6);  // CPUCLOCK_SCHED, per thread
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Tears the agent down (on its thread, outside any JS, with no sample in progress).
extern "C" void jsprof_agent_free(JsprofAgent* a) {
  tls_agent = nullptr;
  if (a->enabled) js::EnableContextProfilingStack(a->cx, false);
  js::SetContextProfilingStack(a->cx, nullptr);
  delete a->stack;
  delete a;
}

// The sampler thread asks the scheduler for a short time slice (EEVDF's per-task slice,
// Linux 6.12+; no privilege needed): a task with a shorter slice than the running one
// preempts it when it wakes, so the sampler's timer wake-ups are not queued behind the
// page's threads for up to a default slice (~0.75-3 ms) when every core is busy. Older
// kernels ignore the request or refuse it; either way nothing else changes.
// Returns 0 or the errno.
extern "C" int32_t jsprof_sampler_thread_setup(uint64_t slice_ns) {
  struct {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
  } attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.sched_policy = 0;  // SCHED_OTHER
  attr.sched_nice = getpriority(PRIO_PROCESS, 0);
  attr.sched_runtime = slice_ns;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
    return errno;
  }
  return 0;
}
