// A script other origins load: its functions must never reach a trace unless CORS allows.
function secretWork(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}
globalThis.secretRan = (globalThis.secretRan || 0) + 1;
