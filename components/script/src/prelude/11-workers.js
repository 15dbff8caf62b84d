
  // Dedicated workers (https://html.spec.whatwg.org/#dedicated-workers-and-the-worker-interface):
  // each runs on its own thread, with its own runtime and realm, started by the engine
  // (host.workerStart); messages cross as serialised text (host.workerPost).
  const workers = new MapCtor(); // id -> Worker
  const workerIds = new WeakMapCtor(); // Worker -> id
  let nextWorker = 1;
  const workerIdOf = (w) => {
    const id = WeakMapGet(workerIds, w);
    if (id === undefined) throw new TypeErrorCtor("'this' is not a Worker");
    return id;
  };
  class Worker extends EventTarget {
    // https://html.spec.whatwg.org/#dom-worker
    constructor(scriptURL, options = undefined) {
      scriptURL = StringCtor(scriptURL);
      dictionaryArg(options, "WorkerOptions");
      // 4. Let worker URL be the result of encoding-parsing a URL given scriptURL,
      // relative to outside settings. 5. If worker URL is failure, throw a "SyntaxError".
      let url;
      try { url = parseURL(scriptURL, init.url); } catch { throw new DOMException(`Failed to construct 'Worker': '${scriptURL}' is not a valid URL.`, "SyntaxError"); }
      // Only same-origin, blob: and data: URLs make workers: anything else is a
      // SecurityError.
      if (url.protocol !== "blob:" && url.protocol !== "data:" && !host.sameOrigin(url.href)) {
        throw new DOMException(`Failed to construct 'Worker': ${url.href} is not same-origin with ${locationParts.origin}.`, "SecurityError");
      }
      let source = null;
      if (url.protocol === "blob:") {
        const blob = MapGet(blobURLs, url.href);
        if (blob === undefined) throw new DOMException(`${url.href} is not a live blob URL`, "SecurityError");
        source = host.utf8Decode(blobBytes(blob));
      }
      const self = makeEventTarget(new.target.prototype);
      const id = nextWorker++;
      WeakMapSet(workerIds, self, id);
      MapSet(workers, id, self);
      host.workerStart(id, url.href, source);
      return self;
    }
    // https://html.spec.whatwg.org/#dom-worker-postmessage
    postMessage(message, options = undefined) {
      const id = workerIdOf(this);
      host.workerPost(id, serialize(message, transferArg(options)));
    }
    // https://html.spec.whatwg.org/#dom-worker-terminate
    terminate() {
      const id = workerIdOf(this);
      MapDelete(workers, id);
      host.workerTerminate(id);
    }
  }
  tag(Worker, "Worker");
  defineHandler(Worker.prototype, "message");
  defineHandler(Worker.prototype, "error");
  defineHandler(Worker.prototype, "messageerror");

  // fire an event (https://dom.spec.whatwg.org/#concept-event-fire): trusted, made and
  // dispatched without anything the page could have replaced.
  function fire(target, type, bubbles = false) {
    dispatch(target, trustedEvent(Event, type, eventInit(bubbles, false)));
  }
