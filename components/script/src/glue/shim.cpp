// The C++ side of jsprof's SpiderMonkey glue: what the public Rust bindings do not reach.
// Built by build.rs against the same SpiderMonkey build mozjs_sys made. Every function is
// `extern "C"`, takes live pointers on the JS thread that owns them, and cannot GC.

#include "jsapi.h"
#include "js/Modules.h"
#include "vm/JSScript.h"

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
