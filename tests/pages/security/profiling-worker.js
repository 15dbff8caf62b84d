const port = new URL(location.href).searchParams.get("port");
importScripts("http://127.0.0.1:" + port + "/work.js?cors", "/visible.js");
const p = new Profiler({ sampleInterval: 1, maxBufferSize: 10000 });
for (let i = 0; i < 10; i++) { secretWork(15); visibleWork(15); }
p.stop().then((trace) => postMessage(trace));
