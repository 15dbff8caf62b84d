// Helpers for the tests of the rendering markers ("style", "layout", "paint"): a block of
// rows whose every row changes style and size when a class is toggled, and script that
// forces style and layout by reading a size after each toggle.
(function (global) {
  // Appends a block of `rows` rows to the body (removed at the end of `test`); toggling
  // "big" on it restyles every row and lays them all out again.
  function rows(test, count = 3000) {
    const style = document.createElement("style");
    style.textContent = ".rows .row { font: 12px sans-serif; padding: 1px; }\n" +
      ".rows.big .row { font-size: 17px; padding: 3px; }";
    const block = document.createElement("div");
    block.className = "rows";
    for (let i = 0; i < count; i++) {
      const row = document.createElement("div");
      row.className = "row";
      row.textContent = `row ${i} of the block`;
      block.appendChild(row);
    }
    document.head.appendChild(style);
    document.body.appendChild(block);
    test.add_cleanup(() => { block.remove(); style.remove(); });
    block.offsetHeight;
    return block;
  }

  // For `ms` ms, toggles "big" on `block` and reads its height, which makes the engine
  // compute the rows' styles and lay them out before the read returns. Returns how many
  // times it did.
  function forceLayout(block, ms) {
    const end = performance.now() + ms;
    let n = 0;
    while (performance.now() < end) {
      block.classList.toggle("big");
      n += block.offsetHeight > 0 ? 1 : 0;
    }
    return n;
  }

  global.RenderingUtils = { rows, forceLayout };
})(self);
