// Spins ~500 ms while it loads (loaded cross-origin without CORS by cross-origin-script.https.sub.html).
function hiddenLoadSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}
self.hiddenWindow = [performance.now()];
hiddenLoadSpin(500);
self.hiddenWindow.push(performance.now());
