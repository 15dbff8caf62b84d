// META: title=The Profiler interface matches its IDL
// META: global=window,dedicatedworker
// META: script=/resources/WebIDLParser.js
// META: script=/resources/idlharness.js
"use strict";

idl_test(
  ["js-self-profiling"],
  ["hr-time", "dom"],
  (idl_array) => {
    idl_array.add_objects({
      Profiler: ["new Profiler({ sampleInterval: 10, maxBufferSize: 10 })"],
    });
  }
);
