// Spins ~500 ms while it loads (loaded cross-origin with CORS by cross-origin-script.https.sub.html).
function corsLoadSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}
self.corsWindow = [performance.now()];
corsLoadSpin(500);
self.corsWindow.push(performance.now());
