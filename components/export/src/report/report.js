(function () {
  "use strict";

  // The top functions table: a click on a header sorts by that column (numbers first
  // descending, text first ascending; a second click reverses).
  var table = document.querySelector("table.top");
  if (table && table.tBodies.length) {
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    heads.forEach(function (th, col) {
      var button = th.querySelector("button");
      if (!button) {
        return;
      }
      button.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var now = th.getAttribute("aria-sort");
        var dir = now === "descending" ? 1 : now === "ascending" ? -1 : numeric ? -1 : 1;
        heads.forEach(function (h) {
          h.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var key = function (row) {
          var cell = row.cells[col];
          return numeric ? Number(cell.getAttribute("data-v")) : cell.textContent;
        };
        rows.sort(function (a, b) {
          var x = key(a);
          var y = key(b);
          var c = numeric ? x - y : x.localeCompare(y);
          return c * dir || Number(a.getAttribute("data-rank")) - Number(b.getAttribute("data-rank"));
        });
        rows.forEach(function (row) {
          body.appendChild(row);
        });
      });
    });
  }

  // The flame graph's script takes Ctrl-F and F3 for its own search anywhere in the window;
  // in this page it gets them only while the pointer is over the flame graph, and the
  // browser's own find works everywhere else.
  var flame = document.querySelector(".flame > svg");
  var over = false;
  if (flame) {
    flame.addEventListener("mouseenter", function () {
      over = true;
    });
    flame.addEventListener("mouseleave", function () {
      over = false;
    });
  }
  window.addEventListener("keydown", function (e) {
    var find = e.key === "F3" || ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F"));
    if (find && !over) {
      e.stopPropagation();
    }
  }, true);
}());
