// A module other origins import: it must fail to load without CORS.
export function secretModuleWork(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}
globalThis.moduleRan = (globalThis.moduleRan || 0) + 1;
