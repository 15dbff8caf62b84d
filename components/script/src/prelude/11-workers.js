  // Dedicated workers (https://html.spec.whatwg.org/#dedicated-workers-and-the-worker-interface):
  // each runs on its own thread, with its own runtime and realm, started by the engine
  // (host.workerStart); messages cross as serialised text (host.workerPost).
  const workers = new Map();
  let nextWorker = 1;
  class Worker extends EventTarget {
    constructor(scriptURL, options = {}) {
      super();
      const url = new URL(String(scriptURL), location.href);
      // Only same-origin, blob: and data: URLs make workers
      // (https://html.spec.whatwg.org/#dom-worker): anything else is a SecurityError.
      if (url.protocol !== "blob:" && url.protocol !== "data:" && !host.sameOrigin(url.href)) {
        throw new DOMException(`Failed to construct 'Worker': ${url.href} is not same-origin with ${location.origin}.`, "SecurityError");
      }
      let source = null;
      if (url.protocol === "blob:") {
        const blob = blobURLs.get(url.href);
        if (!blob) throw new DOMException(`${url.href} is not a live blob URL`, "SecurityError");
        source = host.utf8Decode(blobBytes(blob));
      }
      const id = nextWorker++;
      defineValue(this, "_id", id);
      workers.set(id, this);
      host.workerStart(id, url.href, source);
    }
    postMessage(message, transfer = []) {
      if (!Array.isArray(transfer) && transfer && typeof transfer === "object") transfer = transfer.transfer ?? [];
      host.workerPost(this._id, serialize(message, transfer));
    }
    terminate() {
      workers.delete(this._id);
      host.workerTerminate(this._id);
    }
  }
  tag(Worker, "Worker");
  for (const name of ["message", "error", "messageerror"]) defineHandler(Worker.prototype, name);

