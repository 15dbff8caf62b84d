/*
 * jsprof's field snippet: profiles a share of real users' sessions with the JS Self-Profiling
 * API (https://wicg.github.io/js-self-profiling/) and sends each trace to a jsprof collector's
 * `POST /v1/profiles`. Embed it as the first script of <head> (README.md beside it):
 *
 *   <script src="/jsprof-field.js" data-endpoint="https://collector.example/v1/profiles"
 *           data-key="KEY" data-release="shop@3.1.4" data-sample-rate="0.05"
 *           data-labels='{"page":"home"}'></script>
 *
 * (or set `window.JSPROF_FIELD = {endpoint, key, release, sampleRate, labels, ...}` before it).
 * It never throws into the page: no Profiler, a Profiler refused by Document-Policy, storage
 * that cannot be used, a failed upload: each ends profiling quietly (see `jsprofField.status`).
 * Beside each trace it sends the page's Long Animation Frames and slow interactions (Event
 * Timing), which `jsprof top --during loaf|interaction` scopes samples to.
 */
(function () {
  'use strict';
  var global = typeof window !== 'undefined' ? window : globalThis;
  // The keepalive body quota (Fetch: 64 KiB in flight per document, shared with other
  // keepalive requests and beacons): a body over this is trimmed before it goes at unload.
  var KEEPALIVE_LIMIT = 65536;

  var state = { status: 'starting', session: null, sampled: false, sent: 0, trimmed: 0 };
  global.jsprofField = state;

  function config() {
    var c = {};
    var given = global.JSPROF_FIELD || {};
    for (var k in given) c[k] = given[k];
    var script = typeof document !== 'undefined' ? document.currentScript : null;
    var d = (script && script.dataset) || {};
    if (d.endpoint) c.endpoint = d.endpoint;
    if (d.key) c.key = d.key;
    if (d.release) c.release = d.release;
    if (d.sampleRate) c.sampleRate = Number(d.sampleRate);
    if (d.sampleInterval) c.sampleInterval = Number(d.sampleInterval);
    if (d.maxBufferSize) c.maxBufferSize = Number(d.maxBufferSize);
    if (d.maxBytes) c.maxBytes = Number(d.maxBytes);
    if (d.labels) {
      try { c.labels = JSON.parse(d.labels); } catch (e) { c.labels = {}; }
    }
    c.sampleRate = isFinite(c.sampleRate) ? Math.min(1, Math.max(0, c.sampleRate)) : 0.1;
    c.sampleInterval = c.sampleInterval > 0 ? c.sampleInterval : 10;
    c.maxBufferSize = c.maxBufferSize > 0 ? c.maxBufferSize : 10000;
    c.maxBytes = c.maxBytes > 0 ? Math.min(c.maxBytes, KEEPALIVE_LIMIT) : 60000;
    c.labels = c.labels && typeof c.labels === 'object' ? c.labels : {};
    return c;
  }

  // The session: an id and one sampling decision, kept for the tab's life (sessionStorage),
  // so every page of a sampled session is profiled and no page of another.
  function session(rate) {
    var KEY = 'jsprof-field-session';
    try {
      var kept = JSON.parse(global.sessionStorage.getItem(KEY) || 'null');
      if (kept && typeof kept.id === 'string' && typeof kept.sampled === 'boolean') return kept;
    } catch (e) { /* no storage: a session per page */ }
    var id = global.crypto && global.crypto.randomUUID ? global.crypto.randomUUID()
      : String(Date.now()) + '-' + String(Math.random()).slice(2);
    var s = { id: id, sampled: Math.random() < rate };
    try { global.sessionStorage.setItem(KEY, JSON.stringify(s)); } catch (e) { /* as above */ }
    return s;
  }

  // The trace's last `keep` samples, with the stacks, frames and resources they reach
  // (renumbered): still a valid ProfilerTrace.
  function lastSamples(trace, keep) {
    var samples = trace.samples.slice(trace.samples.length - keep);
    var stackMap = {}, frameMap = {}, resourceMap = {};
    var stacks = [], frames = [], resources = [];
    function resource(id) {
      if (!(id in resourceMap)) { resourceMap[id] = resources.length; resources.push(trace.resources[id]); }
      return resourceMap[id];
    }
    function frame(id) {
      if (!(id in frameMap)) {
        var f = trace.frames[id], copy = {};
        for (var k in f) copy[k] = f[k];
        if (typeof f.resourceId === 'number') copy.resourceId = resource(f.resourceId);
        frameMap[id] = frames.length;
        frames.push(copy);
      }
      return frameMap[id];
    }
    function stack(id) {
      if (!(id in stackMap)) {
        var s = trace.stacks[id];
        // Parents first, so that a parent's index is below its child's.
        var parent = typeof s.parentId === 'number' ? stack(s.parentId) : undefined;
        var copy = { frameId: frame(s.frameId) };
        if (parent !== undefined) copy.parentId = parent;
        stackMap[id] = stacks.length;
        stacks.push(copy);
      }
      return stackMap[id];
    }
    var out = samples.map(function (s) {
      var copy = { timestamp: s.timestamp };
      if (typeof s.stackId === 'number') copy.stackId = stack(s.stackId);
      for (var k in s) if (k !== 'timestamp' && k !== 'stackId') copy[k] = s[k];
      return copy;
    });
    return { frames: frames, resources: resources, samples: out, stacks: stacks };
  }

  // gzip through CompressionStream, read with promises only (no timer, no task of our
  // own): at beforeunload it completes while the document is still there.
  function gzip(text) {
    var bytes = new TextEncoder().encode(text);
    if (typeof global.CompressionStream !== 'function') return Promise.resolve(bytes);
    var cs = new global.CompressionStream('gzip');
    var writer = cs.writable.getWriter();
    writer.write(bytes).catch(function () {});
    writer.close().catch(function () {});
    var reader = cs.readable.getReader(), chunks = [], size = 0;
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) {
          var out = new Uint8Array(size), at = 0;
          chunks.forEach(function (c) { out.set(c, at); at += c.length; });
          return out;
        }
        chunks.push(r.value);
        size += r.value.length;
        return pump();
      });
    }
    return pump();
  }

  // Long Animation Frames and slow interactions (Event Timing: the INP candidates), kept
  // beside the trace they happened in, as the collector's `entries`: a LoAF names what ran
  // (its longest script's invoker), an interaction its event's type; one entry per
  // interaction (its longest event, as INP counts it). At most MAX_ENTRIES of each kind a
  // trace (the longest stay).
  var MAX_ENTRIES = 100;
  var SLOW_INTERACTION_MS = 40;
  var observers = [];
  var recorded = { frames: [], interactions: [], byInteraction: {} };

  function keepLongest(list, entry) {
    list.push(entry);
    if (list.length > MAX_ENTRIES) {
      var shortest = 0;
      for (var i = 1; i < list.length; i++) if (list[i].duration < list[shortest].duration) shortest = i;
      list.splice(shortest, 1);
    }
  }

  function onFrame(e) {
    var name;
    var scripts = e.scripts || [], longest = null;
    for (var i = 0; i < scripts.length; i++) if (!longest || scripts[i].duration > longest.duration) longest = scripts[i];
    if (longest) name = longest.invoker || longest.sourceFunctionName || undefined;
    keepLongest(recorded.frames, { entryType: 'long-animation-frame', name: name, startTime: e.startTime, duration: e.duration });
  }

  function onEvent(e) {
    var id = e.interactionId;
    if (!id || e.duration < SLOW_INTERACTION_MS) return;
    var seen = recorded.byInteraction[id];
    if (seen) {
      if (e.duration > seen.duration) { seen.duration = e.duration; seen.startTime = e.startTime; seen.name = e.name; }
      return;
    }
    var entry = { entryType: e.entryType, name: e.name, startTime: e.startTime, duration: e.duration };
    recorded.byInteraction[id] = entry;
    keepLongest(recorded.interactions, entry);
  }

  function observe() {
    var PO = global.PerformanceObserver;
    var types = (PO && PO.supportedEntryTypes) || [];
    function add(type, each, options) {
      if (types.indexOf(type) < 0) return;
      try {
        var o = new PO(function (list) { list.getEntries().forEach(each); });
        options.type = type;
        options.buffered = true;
        o.observe(options);
        observers.push({ observer: o, each: each });
      } catch (e) { /* an engine without the type's options: not recorded */ }
    }
    add('long-animation-frame', onFrame, {});
    add('event', onEvent, { durationThreshold: SLOW_INTERACTION_MS });
  }

  // The entries recorded from `since` on (ms, the page's clock), those not delivered yet
  // included; the next trace's start afresh.
  function takeEntries(since) {
    observers.forEach(function (o) {
      try { o.observer.takeRecords().forEach(o.each); } catch (e) { /* none */ }
    });
    var out = recorded.frames.concat(recorded.interactions).filter(function (e) {
      return e.startTime + e.duration >= since;
    });
    recorded = { frames: [], interactions: [], byInteraction: {} };
    return out;
  }

  // The envelope, gzipped; at unload, samples are halved (the oldest go) until it fits
  // the keepalive quota. Resolves with null when even a trace of one sample does not fit.
  function encode(c, trace, unloading, entries) {
    var envelope = {
      trace: trace,
      pageUrl: global.location ? global.location.href : undefined,
      release: c.release,
      userAgent: global.navigator ? global.navigator.userAgent : undefined,
      session: state.session,
      timeOrigin: global.performance ? global.performance.timeOrigin : undefined,
      labels: c.labels,
    };
    if (entries && entries.length) envelope.entries = entries;
    var total = trace.samples.length;
    function attempt(keep) {
      var t = keep === total ? trace : lastSamples(trace, keep);
      envelope.trace = t;
      if (keep < total) {
        envelope.labels = {};
        for (var k in c.labels) envelope.labels[k] = c.labels[k];
        envelope.labels['jsprof.trimmed'] = 'kept the last ' + keep + ' of ' + total + ' samples';
      }
      return gzip(JSON.stringify(envelope)).then(function (body) {
        if (!unloading || body.length <= c.maxBytes) return { body: body, kept: keep };
        if (keep <= 1) return null;
        return attempt(Math.floor(keep / 2));
      });
    }
    return attempt(total);
  }

  function send(c, body, unloading) {
    var url = c.endpoint + (c.key ? (c.endpoint.indexOf('?') < 0 ? '?' : '&') + 'key=' + encodeURIComponent(c.key) : '');
    // No custom header, no Content-Type: a CORS-safelisted request, which needs no
    // preflight (the collector takes gzip by its magic bytes and the key from `?key=`).
    var init = { method: 'POST', body: body, mode: 'cors', credentials: 'omit' };
    if (body.length <= c.maxBytes) init.keepalive = true;
    else if (unloading) return Promise.resolve(false);
    return global.fetch(url, init).then(function (r) { return r.ok; }, function () {
      // Over the quota left by other keepalive requests: a hidden page is still alive.
      if (!init.keepalive || unloading) return false;
      delete init.keepalive;
      return global.fetch(url, init).then(function (r) { return r.ok; }, function () { return false; });
    });
  }

  var c = config();
  var profiler = null;
  // What finish() sends for a trace, for a page's own tests: {body, kept} or null.
  state.encode = function (trace, unloading, entries) { return encode(c, trace, unloading, entries); };
  // When the running profiler started (the page's clock): its trace's entries are those
  // from then on.
  var startedAt = 0;

  function start() {
    if (profiler) return;
    var Profiler = global.Profiler;
    if (typeof Profiler !== 'function') { state.status = 'unsupported'; return; }
    try {
      profiler = new Profiler({ sampleInterval: c.sampleInterval, maxBufferSize: c.maxBufferSize });
      startedAt = global.performance ? global.performance.now() : 0;
      state.status = 'profiling';
    } catch (e) {
      // NotAllowedError: the document was not served with `Document-Policy: js-profiling`.
      state.status = 'refused';
    }
  }

  function finish(unloading) {
    if (!profiler) return;
    var p = profiler;
    profiler = null;
    state.status = 'sending';
    var entries = takeEntries(startedAt);
    p.stop().then(function (trace) {
      if (!trace || !trace.samples || trace.samples.length === 0) return false;
      return encode(c, trace, unloading, entries).then(function (e) {
        if (!e) return false;
        if (e.kept < trace.samples.length) state.trimmed++;
        return send(c, e.body, unloading);
      });
    }).then(function (ok) {
      if (ok) state.sent++;
      state.status = ok ? 'sent' : 'not sent';
    }, function () { state.status = 'not sent'; });
  }

  try {
    if (!c.endpoint) { state.status = 'no endpoint'; return; }
    var s = session(c.sampleRate);
    state.session = s.id;
    state.sampled = s.sampled;
    if (!s.sampled) { state.status = 'sampled out'; return; }
    start();
    if (!profiler) return;
    observe();
    // Leaving the page. Chromium does not settle stop()'s promise once pagehide has begun
    // (nor visibilitychange, which follows it), so the trace is taken at beforeunload,
    // while the document is still whole; a new profiler starts in case the page stays
    // (a cancelled navigation, a download), and pagehide stops whatever still runs (in
    // an engine that settles stop() there, it is sent).
    global.addEventListener('beforeunload', function () {
      finish(true);
      global.setTimeout(start, 0);
    });
    global.addEventListener('pagehide', function () { finish(true); });
    global.document.addEventListener('visibilitychange', function () {
      if (global.document.visibilityState === 'hidden') finish(false);
      else start();
    });
    // Back from the back/forward cache: a new trace from here on.
    global.addEventListener('pageshow', function (e) { if (e.persisted) start(); });
  } catch (e) {
    state.status = 'failed';
  }
})();
