// The page at / of `jsprof collect`: reads the filters from the URL (and the form), asks
// the API for the top functions, the flame graph and the samples over time (with the long
// tasks, long animation frames and slow interactions of their traces, marked in a lane
// under the bars), and shows them. Everything from the store is set as text, never as HTML. <body data-state> is
// "loading", "ready" or "error", and data-query the query the shown data answers.
// The sections for investigating (investigate() and the functions after it) list the
// labels' values, the samples by label, the traces, and draw one trace in time order and
// the diff flame graph of two releases; each section has its own data-state.
(function () {
  "use strict";

  var FIELDS = ["release", "url", "user_agent", "since", "until", "during", "view", "environment", "browser"];
  var MARKS = { "long-task": "long task", loaf: "long animation frame", interaction: "slow interaction" };
  var TIMES = { since: true, until: true };
  var SVG = "http://www.w3.org/2000/svg";
  var form = document.getElementById("filters");
  var auth = document.getElementById("auth");
  var status = document.getElementById("status");
  var flame = document.getElementById("flame");
  var generation = 0;

  // A time in ms since the epoch as a datetime-local value (local time), and back.
  function toLocal(ms) {
    var d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
    return d.toISOString().slice(0, 19);
  }

  function fromLocal(v) {
    return String(new Date(v).getTime());
  }

  function fillForm(query) {
    FIELDS.forEach(function (name) {
      var v = query.get(name);
      var input = form.elements[name];
      if (v === null || v === "") {
        input.value = "";
      } else if (TIMES[name] && isFinite(Number(v))) {
        input.value = toLocal(Number(v));
      } else {
        input.value = v;
      }
    });
  }

  function formQuery() {
    var q = new URLSearchParams();
    FIELDS.forEach(function (name) {
      var v = form.elements[name].value;
      if (v) {
        q.set(name, TIMES[name] ? fromLocal(v) : v);
      }
    });
    return q;
  }

  // The filters of a query string, without empty values.
  function pick(query) {
    var q = new URLSearchParams();
    FIELDS.forEach(function (name) {
      var v = query.get(name);
      if (v) {
        q.set(name, v);
      }
    });
    return q;
  }

  function fail(message) {
    document.body.setAttribute("data-state", "error");
    status.textContent = message;
  }

  // fetch() that turns an answer other than 200 into an error with the server's reason.
  function get(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (r.status === 401) {
        return r.text().then(function (why) {
          auth.hidden = false;
          document.getElementById("auth-why").textContent = why.trim();
          throw new Error("a read key is needed");
        });
      }
      if (!r.ok) {
        return r.text().then(function (why) {
          throw new Error(url.split("?")[0] + ": " + r.status + " " + why.trim());
        });
      }
      return r;
    });
  }

  function cell(row, text, cls) {
    var td = row.insertCell();
    td.textContent = text === null || text === undefined ? "" : String(text);
    if (cls) {
      td.className = cls;
    }
    return td;
  }

  function showTop(functions) {
    var body = document.querySelector("#top tbody");
    body.textContent = "";
    functions.forEach(function (f) {
      var row = body.insertRow();
      row.setAttribute("data-function", f.function);
      cell(row, f.function || "(anonymous)", "fn").title =
        (f.resource || "") + (f.line ? ":" + f.line + ":" + (f.column || "") : "");
      cell(row, f.self_ms.toFixed(1), "num");
      cell(row, f.self_pct.toFixed(2), "num");
      cell(row, f.total_ms.toFixed(1), "num");
      cell(row, f.total_pct.toFixed(2), "num");
      cell(row, f.samples, "num samples");
      cell(row, f.resource, "url");
      cell(row, f.line, "num");
      cell(row, f.column, "num");
    });
  }

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) {
      e.setAttribute(k, String(attrs[k]));
    });
    parent.appendChild(e);
    return e;
  }

  function label(ms) {
    return new Date(ms).toLocaleString();
  }

  function showTimeline(t) {
    var svg = document.getElementById("timeline");
    svg.textContent = "";
    var n = t.with_stack.length;
    document.getElementById("timeline-width").textContent =
      n ? "samples per " + t.bucket_ms + " ms" : "no samples";
    if (!n) {
      return;
    }
    var W = 1200, H = 214, left = 48, top = 10, bottom = 50;
    var plot = H - top - bottom;
    var max = 1;
    for (var i = 0; i < n; i++) {
      max = Math.max(max, t.with_stack[i] + t.empty[i]);
    }
    var bw = Math.min(40, (W - left - 10) / n);
    var y = function (v) { return top + plot * (1 - v / max); };
    el("line", { class: "grid", x1: left, x2: left + bw * n, y1: y(max), y2: y(max) }, svg);
    el("text", { x: left - 6, y: y(max) + 4, "text-anchor": "end" }, svg).textContent = String(max);
    for (i = 0; i < n; i++) {
      var s = t.with_stack[i], e = t.empty[i];
      if (s + e === 0) {
        continue;
      }
      var start = t.from_ms + i * t.bucket_ms;
      var g = el("g", { class: "bar", "data-start": start, "data-with-stack": s, "data-empty": e }, svg);
      el("title", {}, g).textContent = label(start) + ": " + s + " with a stack, " + e + " without";
      var gap = bw > 3 ? 1 : 0;
      if (s) {
        el("rect", { class: "tl-stack", x: left + bw * i, width: bw - gap, y: y(s), height: y(0) - y(s) }, g);
      }
      if (e) {
        el("rect", { class: "tl-empty", x: left + bw * i, width: bw - gap, y: y(s + e), height: y(s) - y(s + e) }, g);
      }
    }
    var base = top + plot;
    el("line", { class: "axis", x1: left, x2: left + bw * n, y1: base, y2: base }, svg);
    // The lane of marks under the axis: each event over the time it took, at least 2 px.
    var laneY = base + 4, laneH = 14, x = function (ms) { return left + (ms - t.from_ms) / t.bucket_ms * bw; };
    el("rect", { class: "lane", x: left, y: laneY, width: bw * n, height: laneH }, svg);
    (t.marks || []).forEach(function (m) {
      var x0 = Math.max(left, x(m.start_ms)), x1 = Math.min(left + bw * n, x(m.start_ms + m.duration_ms));
      var g = el("g", { class: "mark", "data-kind": m.kind, "data-start": m.start_ms, "data-duration": m.duration_ms }, svg);
      el("title", {}, g).textContent = (MARKS[m.kind] || m.kind) + (m.name ? " (" + m.name + ")" : "") + ": " +
        m.duration_ms.toFixed(1) + " ms at " + label(m.start_ms);
      el("rect", { class: "mk-" + m.kind, x: x0, y: laneY, width: Math.max(2, x1 - x0), height: laneH }, g);
    });
    [0, n - 1].forEach(function (i, k) {
      el("text", { x: left + bw * i + (k ? bw : 0), y: base + 38, "text-anchor": k ? "end" : "start" }, svg)
        .textContent = label(t.from_ms + (i + k) * t.bucket_ms);
    });
  }

  function load(query) {
    var mine = ++generation;
    var qs = query.toString();
    document.body.setAttribute("data-state", "loading");
    status.textContent = "Loading…";
    var sep = qs ? "?" + qs : "";
    var flameLoaded = new Promise(function (resolve) {
      flame.onload = resolve;
    });
    var top = get("/api/top" + sep).then(function (r) { return r.json(); });
    var timeline = get("/api/timeline" + sep).then(function (r) { return r.json(); });
    var more = investigate(qs, function () { return mine === generation; });
    Promise.all([top, timeline, more]).then(function (got) {
      if (mine !== generation) {
        return null;
      }
      auth.hidden = true;
      showTop(got[0].functions);
      showTimeline(got[1]);
      var samples = got[1].with_stack.concat(got[1].empty).reduce(function (a, b) { return a + b; }, 0);
      flame.src = "/api/flame" + sep;
      return flameLoaded.then(function () {
        if (mine !== generation) {
          return;
        }
        status.textContent = samples ? samples + " samples" : "No samples match these filters.";
        document.body.setAttribute("data-query", qs);
        document.body.setAttribute("data-state", "ready");
      });
    }).catch(function (e) {
      if (mine === generation) {
        fail(e.message);
      }
    });
  }

  // ---- Investigating: label values, samples by label, traces, one trace, the diff ----

  var LABELS = ["view", "environment", "browser"];
  // The filters (a query string) the sections below show.
  var current = "";
  var releases = [];
  var diffGeneration = 0;
  var traceGeneration = 0;

  function json(r) {
    return r.json();
  }

  function withFilters(extra) {
    var q = new URLSearchParams(current);
    Object.keys(extra).forEach(function (k) {
      q.set(k, extra[k]);
    });
    return q.toString();
  }

  // Loads the sections for the filters `qs`; `isCurrent()` says whether they still apply.
  function investigate(qs, isCurrent) {
    current = qs;
    var values = get("/api/labels").then(json).then(function (v) {
      if (isCurrent()) {
        showValues(v);
      }
    });
    var traces = get("/api/traces" + (qs ? "?" + qs : "")).then(json).then(function (t) {
      if (isCurrent()) {
        showTraces(t.traces);
      }
    });
    return Promise.all([values, traces, loadGroups(isCurrent)]).then(function () {
      if (isCurrent() && releases.length >= 2) {
        loadDiff();
      }
    });
  }

  // The filters' suggestions, and the diff's releases (by default the last two).
  function showValues(values) {
    LABELS.forEach(function (name) {
      var list = document.getElementById("values-" + name);
      list.textContent = "";
      (values[name] || []).forEach(function (v) {
        var o = document.createElement("option");
        o.value = v;
        list.appendChild(o);
      });
    });
    releases = values.release || [];
    var diff = document.getElementById("diff-form");
    ["base", "head"].forEach(function (name, k) {
      var select = diff.elements[name];
      var keep = select.value;
      select.textContent = "";
      releases.forEach(function (r) {
        select.add(new Option(r, r));
      });
      if (releases.indexOf(keep) >= 0) {
        select.value = keep;
      } else if (releases.length) {
        select.value = releases[Math.max(0, releases.length - 2 + k)];
      }
    });
  }

  function loadGroups(isCurrent) {
    var section = document.getElementById("groups-section");
    var by = document.getElementById("group-by").value;
    var qs = current;
    section.setAttribute("data-state", "loading");
    return get("/api/groups?" + withFilters({ by: by })).then(json).then(function (g) {
      if (isCurrent() && by === document.getElementById("group-by").value) {
        showGroups(g);
        section.setAttribute("data-by", g.by);
        section.setAttribute("data-query", qs);
        section.setAttribute("data-state", "ready");
      }
    });
  }

  function showGroups(g) {
    var body = document.querySelector("#groups tbody");
    body.textContent = "";
    g.groups.forEach(function (group) {
      var row = body.insertRow();
      row.setAttribute("data-value", group.value === null ? "" : group.value);
      cell(row, group.value === null ? "(not given)" : group.value, "value");
      cell(row, group.traces, "num traces");
      cell(row, group.samples, "num samples");
      cell(row, group.with_stack, "num");
      cell(row, group.top_function === null ? "" : group.top_function + " (" + group.top_self + ")", "fn");
      var action = row.insertCell();
      if (group.value !== null) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "link";
        b.textContent = "Filter";
        b.addEventListener("click", function () {
          form.elements[g.by].value = group.value;
          form.requestSubmit();
        });
        action.appendChild(b);
      }
    });
  }

  function showTraces(traces) {
    var body = document.querySelector("#traces tbody");
    body.textContent = "";
    traces.forEach(function (t) {
      var row = body.insertRow();
      row.setAttribute("data-id", t.id);
      row.setAttribute("data-events", t.events);
      cell(row, label(t.start_ms));
      cell(row, (t.end_ms - t.start_ms).toFixed(0), "num");
      cell(row, t.release, "release");
      cell(row, t.view, "view");
      cell(row, t.environment, "environment");
      cell(row, t.browser, "browser").title = t.user_agent || "";
      cell(row, t.page_name || t.page_url, "url").title = t.page_url || "";
      cell(row, t.samples, "num samples");
      cell(row, t.events, "num events");
      var b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.textContent = "Open";
      b.addEventListener("click", function () {
        openTrace(t.id);
      });
      row.insertCell().appendChild(b);
    });
  }

  function openTrace(id) {
    var mine = ++traceGeneration;
    var section = document.getElementById("trace-section");
    var note = document.getElementById("trace-status");
    section.hidden = false;
    section.setAttribute("data-state", "loading");
    note.textContent = "Loading…";
    get("/api/trace?id=" + encodeURIComponent(id)).then(json).then(function (t) {
      if (mine !== traceGeneration) {
        return;
      }
      drawTrace(t);
      note.textContent = t.samples.length + " samples" + (t.truncated ? " (the first; the rest left out)" : "") +
        ", " + t.marks.length + " events";
      section.setAttribute("data-id", id);
      section.setAttribute("data-state", "ready");
    }).catch(function (e) {
      if (mine === traceGeneration) {
        section.setAttribute("data-state", "error");
        note.textContent = e.message;
      }
    });
  }

  // One trace in time order: the events in a lane at the top, a tick per sample, and each
  // sample's stack below it (root first), a frame drawn once over consecutive samples that
  // share its call path (a stack chart).
  function drawTrace(t) {
    var svg = document.getElementById("trace");
    svg.textContent = "";
    var tr = t.trace;
    document.getElementById("trace-title").textContent = "Trace " + tr.id + " (" + (tr.release || "no release") + ", " +
      (tr.page_name || tr.page_url || "no page") + ")";
    var s = t.samples;
    if (!s.length) {
      return;
    }
    var nodes = {};
    t.stacks.forEach(function (n) {
      nodes[n.id] = n;
    });
    var paths = {};
    function path(id) {
      if (id === null) {
        return [];
      }
      if (!paths[id]) {
        var n = nodes[id];
        paths[id] = (n && n.parent !== null ? path(n.parent) : []).concat([id]);
      }
      return paths[id];
    }
    var deepest = 0;
    s.forEach(function (x) {
      deepest = Math.max(deepest, path(x.stack).length);
    });
    var W = 1200, left = 10, width = W - 20, laneY = 4, laneH = 12, tickY = 20, tickH = 10, rowY = 36, rowH = 16;
    var t0 = s[0].t, t1 = Math.max(s[s.length - 1].t + s[s.length - 1].w, t0 + 1);
    var x = function (ms) { return left + (ms - t0) / (t1 - t0) * width; };
    var H = rowY + deepest * rowH + 24;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("data-from", t0);
    svg.setAttribute("data-to", t1);
    svg.setAttribute("data-left", left);
    svg.setAttribute("data-width", width);
    el("rect", { class: "lane", x: left, y: laneY, width: width, height: laneH, fill: "#f4f4f4" }, svg);
    t.marks.forEach(function (m) {
      var x0 = Math.max(left, x(m.start_ms)), x1 = Math.min(left + width, x(m.start_ms + m.duration_ms));
      var g = el("g", { class: "mark", "data-kind": m.kind, "data-start": m.start_ms, "data-duration": m.duration_ms }, svg);
      el("title", {}, g).textContent = (MARKS[m.kind] || m.kind) + (m.name ? " (" + m.name + ")" : "") + ": " +
        m.duration_ms.toFixed(1) + " ms at " + label(m.start_ms);
      el("rect", { class: "mk-" + m.kind, x: x0, y: laneY, width: Math.max(2, x1 - x0), height: laneH }, g);
    });
    s.forEach(function (x1s) {
      var at = x(x1s.t);
      el("line", { class: x1s.stack === null ? "tick empty" : "tick", "data-t": x1s.t, x1: at, x2: at, y1: tickY, y2: tickY + tickH }, svg);
    });
    el("line", { class: "axis", x1: left, x2: left + width, y1: rowY - 2, y2: rowY - 2 }, svg);
    for (var d = 0; d < deepest; d++) {
      var i = 0;
      while (i < s.length) {
        var key = path(s[i].stack)[d];
        var j = i + 1;
        while (j < s.length && path(s[j].stack)[d] === key) {
          j++;
        }
        if (key !== undefined) {
          var end = j < s.length ? s[j].t : t1;
          var n = nodes[key];
          var bx = x(s[i].t), bw = Math.max(1, x(end) - x(s[i].t));
          var g = el("g", { class: "box", "data-function": n.function, "data-depth": d, "data-start": s[i].t,
            "data-end": end, "data-samples": j - i }, svg);
          el("title", {}, g).textContent = n.function + ": " + (j - i) + " samples, " + (end - s[i].t).toFixed(1) + " ms" +
            (n.resource ? " (" + n.resource + (n.line ? ":" + n.line + ":" + (n.column || "") : "") + ")" : "");
          el("rect", { class: "frame", x: bx, y: rowY + d * rowH, width: bw, height: rowH - 1 }, g);
          if (bw > 40) {
            el("text", { x: bx + 3, y: rowY + d * rowH + 12 }, g).textContent = n.function;
          }
        }
        i = j;
      }
    }
    [t0, t1].forEach(function (ms, k) {
      el("text", { x: k ? left + width : left, y: H - 6, "text-anchor": k ? "end" : "start" }, svg).textContent =
        label(ms) + (k ? " (" + (t1 - t0).toFixed(0) + " ms)" : "");
    });
  }

  function loadDiff() {
    var mine = ++diffGeneration;
    var section = document.getElementById("diff-section");
    var note = document.getElementById("diff-status");
    var f = document.getElementById("diff-form");
    var base = f.elements.base.value, head = f.elements.head.value, qs = current;
    if (new URLSearchParams(qs).get("release")) {
      document.getElementById("diff").textContent = "";
      document.getElementById("diff-legend").hidden = true;
      section.setAttribute("data-state", "idle");
      note.textContent = "The diff compares two releases: clear the Release filter to see it.";
      return Promise.resolve();
    }
    section.setAttribute("data-state", "loading");
    note.textContent = "Loading…";
    return get("/api/diff?" + withFilters({ base: base, head: head })).then(json).then(function (d) {
      if (mine !== diffGeneration) {
        return;
      }
      section.setAttribute("data-base", base);
      section.setAttribute("data-head", head);
      section.setAttribute("data-query", qs);
      if (!d.root) {
        document.getElementById("diff").textContent = "";
        document.getElementById("diff-legend").hidden = true;
        note.textContent = d.empty;
        section.setAttribute("data-state", "empty");
        return;
      }
      drawDiff(d);
      note.textContent = "Base " + d.base + " (" + d.root.base + " samples with a stack) against head " + d.head +
        " (" + d.root.head + ").";
      section.setAttribute("data-base", base);
      section.setAttribute("data-head", head);
      section.setAttribute("data-query", qs);
      section.setAttribute("data-state", "ready");
    }).catch(function (e) {
      if (mine === diffGeneration) {
        document.getElementById("diff").textContent = "";
        document.getElementById("diff-legend").hidden = true;
        section.setAttribute("data-state", "error");
        note.textContent = e.message;
      }
    });
  }

  function significant(c) {
    return c.low > 0 || c.high < 0;
  }

  // A diff node's colour: red where its share grew, blue where it shrank, the stronger the
  // larger the change against the largest; grey where the change is not significant.
  function diffColour(c, largest) {
    if (!significant(c)) {
      return "rgb(220, 220, 220)";
    }
    var k = 0.25 + 0.75 * (largest > 0 ? Math.min(1, Math.abs(c.delta) / largest) : 1);
    var to = c.delta > 0 ? [214, 39, 40] : [31, 119, 180];
    var mix = to.map(function (v) { return Math.round(255 + (v - 255) * k); });
    return "rgb(" + mix.join(", ") + ")";
  }

  // The diff flame graph: the root at the top, each call path as wide as the mean of its
  // shares in both releases, its children below it in the API's order.
  function drawDiff(d) {
    var svg = document.getElementById("diff");
    svg.textContent = "";
    var root = d.root, n1 = root.base || 1, n2 = root.head || 1;
    var share = function (n) { return (n.base / n1 + n.head / n2) / 2; };
    var largest = 0, deepest = 0;
    (function walk(n, depth) {
      if (depth > 0) {
        largest = Math.max(largest, Math.abs(n.change.delta));
      }
      deepest = Math.max(deepest, depth);
      n.children.forEach(function (c) { walk(c, depth + 1); });
    }(root, 0));
    var W = 1200, rowH = 18, H = (deepest + 1) * rowH + 2;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var points = function (v) { return (v >= 0 ? "+" : "") + (100 * v).toFixed(2); };
    (function draw(n, x, depth) {
      var w = W * share(n);
      if (w < 0.5) {
        return;
      }
      var g = el("g", { class: "node", "data-function": n.function, "data-base": n.base, "data-head": n.head,
        "data-delta": n.change.delta, "data-significant": significant(n.change) }, svg);
      el("title", {}, g).textContent = n.function + (n.resource ? " (" + n.resource + (n.line ? ":" + n.line : "") + ")" : "") +
        ": base " + n.base + " samples (" + (100 * n.change.base).toFixed(2) + "%), head " + n.head + " (" +
        (100 * n.change.head).toFixed(2) + "%), " + points(n.change.delta) + " points [" + points(n.change.low) + ", " +
        points(n.change.high) + "]";
      el("rect", { x: x, y: depth * rowH, width: w, height: rowH - 1, fill: diffColour(n.change, largest) }, g);
      if (w > 40) {
        el("text", { x: x + 3, y: depth * rowH + 13 }, g).textContent = n.function;
      }
      var at = x;
      n.children.forEach(function (c) {
        draw(c, at, depth + 1);
        at += W * share(c);
      });
    }(root, 0, 0));
    document.getElementById("diff-scale").textContent = "colour up to ±" + (100 * largest).toFixed(2) + " points of share";
    document.getElementById("diff-legend").hidden = false;
  }

  document.getElementById("group-by").addEventListener("change", function () {
    var mine = generation;
    loadGroups(function () { return mine === generation; }).catch(function (e) {
      document.getElementById("groups-section").setAttribute("data-state", "error");
      status.textContent = e.message;
    });
  });

  document.getElementById("diff-form").addEventListener("submit", function (e) {
    e.preventDefault();
    loadDiff();
  });

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var q = formQuery();
    var qs = q.toString();
    history.pushState(null, "", qs ? "?" + qs : location.pathname);
    load(q);
  });

  auth.addEventListener("submit", function (e) {
    e.preventDefault();
    document.cookie = "jsprof_key=" + encodeURIComponent(auth.elements.key.value) +
      "; path=/; SameSite=Strict";
    auth.elements.key.value = "";
    load(new URLSearchParams(location.search));
  });

  window.addEventListener("popstate", function () {
    var q = pick(new URLSearchParams(location.search));
    fillForm(q);
    load(q);
  });

  var initial = pick(new URLSearchParams(location.search));
  fillForm(initial);
  load(initial);
}());
