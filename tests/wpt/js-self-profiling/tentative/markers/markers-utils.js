// Helpers for the markers extension's tests (markers.md in the spec repository).
(function (global) {
  const VALUES = ["script", "gc", "style", "layout", "paint", "other"];

  // How many samples of `trace` have each marker ("none" for samples without one); fails the
  // test if a marker is not a ProfilerMarker value.
  function countMarkers(trace) {
    const counts = { none: 0 };
    for (const s of trace.samples) {
      if (!("marker" in s)) {
        counts.none++;
        continue;
      }
      assert_in_array(s.marker, VALUES, "a ProfilerMarker value");
      counts[s.marker] = (counts[s.marker] || 0) + 1;
    }
    return counts;
  }

  // Full collections for `ms` ms (JsprofTestBindings exists with the dom.testing.enabled pref,
  // which wpt-metadata gives these tests).
  function collectFor(ms) {
    const t = new JsprofTestBindings();
    const end = performance.now() + ms;
    while (performance.now() < end) t.gc();
  }

  global.MarkerUtils = { VALUES, countMarkers, collectFor };
})(self);
