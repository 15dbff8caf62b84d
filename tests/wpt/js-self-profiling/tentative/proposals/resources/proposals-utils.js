// Checks shared by the proposals' tests.
(function (global) {
  "use strict";
  // Every ID of `trace` is valid, a stack's parent comes before it, and every frame, stack
  // and resource is used by some sample (directly or as an ancestor).
  function assertValidTrace(trace) {
    const stacks = new Set();
    for (const s of trace.samples) {
      for (let id = s.stackId; id !== undefined; id = trace.stacks[id].parentId) {
        assert_true(Number.isInteger(id) && id >= 0 && id < trace.stacks.length, `stack ${id}`);
        const stack = trace.stacks[id];
        assert_true(stack.parentId === undefined || stack.parentId < id, `parent of ${id}`);
        assert_true(stack.frameId >= 0 && stack.frameId < trace.frames.length, `frame of ${id}`);
        stacks.add(id);
      }
    }
    assert_equals(stacks.size, trace.stacks.length, "every stack is used");
    const frames = new Set(trace.stacks.map((s) => s.frameId));
    assert_equals(frames.size, trace.frames.length, "every frame is used");
    const resources = new Set();
    for (const f of trace.frames) {
      if (f.resourceId !== undefined) {
        assert_true(f.resourceId >= 0 && f.resourceId < trace.resources.length, "resource");
        resources.add(f.resourceId);
      }
    }
    assert_equals(resources.size, trace.resources.length, "every resource is used");
  }

  global.Proposals = { assertValidTrace };
})(self);
