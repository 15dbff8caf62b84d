
  // The hooks the event loop calls (a null-prototype record: the engine reads its own
  // keys only).
  return {
    __proto__: null,
    // The realm's original DOMException, for exceptions thrown by generated bindings.
    DOMException,
    fireEvent(target, type) { fire(target, type); },
    // A message for this worker's global from its creator, or (id > 0) for a Worker object
    // of this realm from its worker.
    workerMessage(id, data) {
      const target = id > 0 ? MapGet(workers, id) : global;
      if (target === undefined) return;
      let value;
      try { value = deserialize(data); } catch { fire(target, "messageerror"); return; }
      dispatch(target, messageEvent(value.data, value.ports, "", null));
    },
    // A message from another thread for this realm's end of port pair `pid`.
    portMessage(pid, end, data) {
      const port = MapGet(remotePorts, `${pid}:${end}`);
      if (port === undefined) return;
      let value;
      try { value = deserialize(data); } catch { fire(port, "messageerror"); return; }
      listPush(portOf(port).queue, { __proto__: null, data: value.data, ports: value.ports });
      deliverIn(port);
    },
    // Worker `id` of this realm reported an uncaught exception.
    workerError(id, message, filename, lineno, colno) {
      const target = MapGet(workers, id);
      if (target === undefined) return;
      const e = trustedEvent(ErrorEvent, "error", { __proto__: null, cancelable: true, message, filename, lineno, colno });
      if (dispatch(target, e)) host.print(true, `Uncaught (in worker) ${message}` + (filename ? ` (${filename}:${lineno}:${colno})` : ""));
    },
    // This window's iframe number `index` has its window (frames[index]).
    attachFrame(index, windowIndex) {
      const el = childFrames[index];
      if (!el) return;
      const f = WeakMapGet(frameState, el);
      f.window = windowProxy(windowIndex);
      f.windowIndex = windowIndex;
      f.sameOrigin = !WeakSetHas(crossOriginWindows, f.window);
      ObjectDefineProperty(global, StringCtor(index), { __proto__: null,
        get: () => { const g = WeakMapGet(frameState, el); return g ? g.window : undefined; },
        enumerable: true, configurable: true });
    },
    // A message another window posted to this one.
    windowMessage(data, sourceIndex, origin) { deliverWindowMessage(data, sourceIndex, origin); },
    // This window's iframe number `index` has loaded.
    frameLoaded(index) { const el = childFrames[index]; if (el) fire(el, "load"); },
    // Starts the loads of the iframes the parser put in the document.
    startFrames() {
      const all = descendants(document);
      for (let i = 0; i < all.length; i++) if (isElementNamed(all[i], "iframe")) loadFrame(all[i]);
    },
    // Request `id` of fetch() or XMLHttpRequest is answered (12-fetch.js): `meta` is the
    // filtered response's metadata as JSON, or a network error; `body` its bytes.
    fetchDone: finishFetch,
    fireTimer(id) {
      const t = MapGet(timerTable, id);
      if (t === undefined) return;
      if (!t.repeat) MapDelete(timerTable, id);
      if (typeof t.handler === "function") {
        host.scopeEntered(t.handler);
        ReflectApply(t.handler, global, t.args);
      }
      else IndirectEval(t.handler);
    },
    setCurrentScript(index) { currentScript = index >= 0 ? scriptElements[index] ?? null : null; },
    setReadyState(state) { readyState = state; fire(document, "readystatechange"); },
    fireDOMContentLoaded() { fire(document, "DOMContentLoaded", true); },
    fireLoad() { fire(global, "load"); },
    fireScriptEvent(index, type) { const el = scriptElements[index]; if (el) fire(el, type); },
    // An uncaught exception, with the engine's position; an error's message is its
    // "Name: message" (read without running page code), anything else's the engine's.
    reportException(error, message, filename, line, column) {
      const text = errorText(error);
      report(error, text === null ? message : text, filename, line, column);
    },
    // https://html.spec.whatwg.org/#notify-about-rejected-promises: the reason is read from
    // the engine, not through `then`.
    reportRejection(promise) {
      const reason = host.promiseResult(promise);
      const event = trustedEvent(PromiseRejectionEvent, "unhandledrejection", { __proto__: null, cancelable: true, promise, reason });
      if (dispatch(global, event)) {
        const text = errorText(reason);
        const fileName = text === null ? undefined : dataProperty(reason, "fileName");
        const where = typeof fileName === "string" && fileName !== ""
          ? ` (${fileName}:${dataProperty(reason, "lineNumber")}:${dataProperty(reason, "columnNumber")})` : "";
        host.print(true, `Uncaught (in promise) ${text === null ? inspect(reason) : text}${where}`);
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
