// main.js
import { genPrimes } from "./generate.js";

function handleLoad() {
  const start = performance.now();
  const primes = genPrimes();
  const ms = performance.now() - start;
  console.log(`Finished generating ${primes.length} primes in ${ms.toFixed(1)} ms`);
}

window.addEventListener("load", handleLoad);
