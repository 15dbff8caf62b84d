// The page at / of `jsprof collect`: reads the filters from the URL (and the form), asks
// the API for the top functions, the flame graph and the samples over time (with the long
// tasks, long animation frames and slow interactions of their traces, marked in a lane
// under the bars), and shows them. Everything from the store is set as text, never as HTML. <body data-state> is
// "loading", "ready" or "error", and data-query the query the shown data answers.
(function () {
  "use strict";

  var FIELDS = ["release", "url", "user_agent", "since", "until", "during"];
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
    Promise.all([top, timeline]).then(function (got) {
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
