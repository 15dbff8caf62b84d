  // fire an event (https://dom.spec.whatwg.org/#concept-event-fire): trusted, made and
  // dispatched without anything the page could have replaced.
  function fire(target, type, bubbles = false) {
    dispatch(target, trustedEvent(Event, type, eventInit(bubbles, false)));
  }

  // The hooks the event loop calls.
  return {
    // The realm's original DOMException, for exceptions thrown by generated bindings.
    DOMException,
    fireEvent(target, type) { fire(target, type); },
    // A message for this worker's global from its creator, or (id > 0) for a Worker object
    // of this realm from its worker.
    workerMessage(id, data) {
      const target = id > 0 ? workers.get(id) : global;
      if (!target) return;
      let value;
      try { value = deserialize(data); } catch { fire(target, "messageerror"); return; }
      dispatch(target, trustedEvent(MessageEvent, "message", { __proto__: null, data: value.data, ports: value.ports }));
    },
    // A message from another thread for this realm's end of port pair `pid`.
    portMessage(pid, end, data) {
      const port = remotePorts.get(`${pid}:${end}`);
      if (!port) return;
      let value;
      try { value = deserialize(data); } catch { fire(port, "messageerror"); return; }
      portState.get(port).queue.push({ data: value.data, ports: value.ports });
      portState.get(port).deliver(port);
    },
    // Worker `id` of this realm reported an uncaught exception.
    workerError(id, message, filename, lineno, colno) {
      const target = workers.get(id);
      if (!target) return;
      const e = trustedEvent(ErrorEvent, "error", { __proto__: null, cancelable: true, message, filename, lineno, colno });
      if (dispatch(target, e)) host.print(true, `Uncaught (in worker) ${message}` + (filename ? ` (${filename}:${lineno}:${colno})` : ""));
    },
    // This window's iframe number `index` has its window (frames[index]).
    attachFrame(index, windowIndex) {
      const el = childFrames[index];
      if (!el) return;
      const f = frameState.get(el);
      f.window = windowProxy(windowIndex);
      f.windowIndex = windowIndex;
      Object.defineProperty(global, String(index), { get: () => frameState.get(el).window, enumerable: true, configurable: true });
    },
    // A message another window posted to this one.
    windowMessage(data, sourceIndex, origin) { deliverWindowMessage(data, sourceIndex, origin); },
    // This window's iframe number `index` has loaded.
    frameLoaded(index) { const el = childFrames[index]; if (el) fire(el, "load"); },
    // Starts the loads of the iframes the parser put in the document.
    startFrames() { for (const e of document._descendants()) if (e instanceof HTMLIFrameElement) loadFrame(e); },
    // Request `id` of fetch() or XMLHttpRequest is answered (12-fetch.js): `meta` is the
    // filtered response's metadata as JSON, or a network error; `body` its bytes.
    fetchDone: finishFetch,
    fireTimer(id) {
      const t = MapGet(timerTable, id);
      if (!t) return;
      if (!t.repeat) MapDelete(timerTable, id);
      if (typeof t.handler === "function") ReflectApply(t.handler, global, t.args);
      else IndirectEval(StringCtor(t.handler));
    },
    setCurrentScript(index) { currentScript = index >= 0 ? scriptElements[index] || null : null; },
    setReadyState(state) { readyState = state; fire(document, "readystatechange"); },
    fireDOMContentLoaded() { fire(document, "DOMContentLoaded", true); },
    fireLoad() { fire(global, "load"); },
    fireScriptEvent(index, type) { const el = scriptElements[index]; if (el) fire(el, type); },
    reportException(error, message, filename, line, column) {
      if (error instanceof Error || error instanceof DOMException) message = `${error.name}: ${error.message}`;
      report(error, message, filename, line, column);
    },
    // https://html.spec.whatwg.org/#notify-about-rejected-promises: the reason is read from
    // the engine, not through `then`.
    reportRejection(promise) {
      const reason = host.promiseResult(promise);
      const event = trustedEvent(PromiseRejectionEvent, "unhandledrejection", { __proto__: null, cancelable: true, promise, reason });
      if (dispatch(global, event)) {
        const isError = reason instanceof Error || reason instanceof DOMException;
        const where = isError && reason.fileName ? ` (${reason.fileName}:${reason.lineNumber}:${reason.columnNumber})` : "";
        host.print(true, `Uncaught (in promise) ${inspect(reason)}${where}`);
      }
    },
    watchModule(promise) { host.whenSettled(promise, null, reportError); },
    // https://html.spec.whatwg.org/#update-the-visibility-state
    setVisibility(hidden) {
      hidden = !!hidden;
      if (visibilityHidden === hidden) return;
      visibilityHidden = hidden;
      fire(document, "visibilitychange", true);
    },
    webdriver: webdriverCommand,
  };
})
