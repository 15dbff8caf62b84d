// The page's "Regressions" section, apart from page.js: each release against the one
// before it (GET /api/regressions, with the page's filters but the release, which it does
// not take), the findings in a table, and a finding's base and head flame graphs side by
// side (GET /api/flame?release=…, the page's own flame graph route). The first finding's
// pair is shown first; a click on a row shows its pair. Everything from the store is set
// as text. <section id="regressions" data-state> is "loading", "ready" (data-pair: the
// pair shown, "BASE HEAD") or "error".
(function () {
  "use strict";

  var FIELDS = ["url", "user_agent", "since", "until", "during"];
  var section = document.getElementById("regressions");
  var note = document.getElementById("regressions-status");
  var body = document.querySelector("#regressions-table tbody");
  var base = document.getElementById("flame-base");
  var head = document.getElementById("flame-head");
  var generation = 0;

  function filters() {
    var from = new URLSearchParams(location.search);
    var q = new URLSearchParams();
    FIELDS.forEach(function (name) {
      var v = from.get(name);
      if (v) {
        q.set(name, v);
      }
    });
    return q;
  }

  function pct(v) {
    return (100 * v).toFixed(2);
  }

  function points(v) {
    return (v >= 0 ? "+" : "") + (100 * v).toFixed(2);
  }

  function cell(row, text, cls) {
    var td = row.insertCell();
    td.textContent = text === null || text === undefined ? "" : String(text);
    if (cls) {
      td.className = cls;
    }
  }

  // Loads the flame graphs of `pair` ([base, head]) into the two frames.
  function show(pair, mine) {
    var q = filters();
    var loaded = [base, head].map(function (frame, i) {
      var p = new URLSearchParams(q);
      p.set("release", pair[i]);
      return new Promise(function (resolve) {
        frame.onload = resolve;
        frame.src = "/api/flame?" + p.toString();
      });
    });
    document.getElementById("flame-base-title").textContent = "Base " + pair[0];
    document.getElementById("flame-head-title").textContent = "Head " + pair[1];
    return Promise.all(loaded).then(function () {
      if (mine === generation) {
        section.setAttribute("data-pair", pair.join(" "));
        section.setAttribute("data-state", "ready");
      }
    });
  }

  function render(report, mine) {
    body.textContent = "";
    report.findings.forEach(function (f) {
      var row = body.insertRow();
      row.setAttribute("data-function", f.function);
      row.setAttribute("data-measure", f.measure);
      row.setAttribute("data-pair", f.base + " " + f.head);
      cell(row, f.base + " → " + f.head);
      cell(row, f.function || "(anonymous)", "fn");
      cell(row, f.measure);
      cell(row, pct(f.base_share), "num");
      cell(row, pct(f.head_share), "num");
      cell(row, points(f.change) + " [" + points(f.low) + ", " + points(f.high) + "]", "num change");
      cell(row, f.p_adjusted.toExponential(2), "num");
      cell(row, f.resource, "url");
      row.addEventListener("click", function () {
        section.setAttribute("data-state", "loading");
        show([f.base, f.head], generation);
      });
    });
    var tested = report.pairs.filter(function (p) { return !p.skipped; });
    // With fewer than two releases, the note says why nothing is compared.
    note.textContent = report.note ? report.note : report.findings.length + " regression(s) in " + tested.length +
      " release pair(s); Holm–Bonferroni, family-wise error rate " + report.alpha +
      " per pair; intervals simultaneous, in percentage points.";
    var first = report.findings[0];
    var last = tested[tested.length - 1];
    var pair = first ? [first.base, first.head] : last ? [last.base, last.head] : null;
    if (!pair) {
      section.setAttribute("data-pair", "");
      section.setAttribute("data-state", "ready");
      return null;
    }
    return show(pair, mine);
  }

  function load() {
    var mine = ++generation;
    section.setAttribute("data-state", "loading");
    var qs = filters().toString();
    fetch("/api/regressions" + (qs ? "?" + qs : ""), { credentials: "same-origin" })
      .then(function (r) {
        return r.text().then(function (text) {
          if (mine !== generation) {
            return null;
          }
          if (!r.ok) {
            throw new Error("/api/regressions: " + r.status + " " + text.trim());
          }
          return render(JSON.parse(text), mine);
        });
      })
      .catch(function (e) {
        if (mine === generation) {
          note.textContent = e.message;
          section.setAttribute("data-state", "error");
        }
      });
  }

  // After page.js has put the filters in the URL (its listeners run first).
  document.getElementById("filters").addEventListener("submit", function () {
    setTimeout(load, 0);
  });
  document.getElementById("auth").addEventListener("submit", function () {
    setTimeout(load, 0);
  });
  window.addEventListener("popstate", load);
  load();
}());
