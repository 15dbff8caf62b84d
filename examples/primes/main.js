// main.js
import { genPrimes } from "./generate.js";

async function handleLoad() {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const primes = genPrimes();
  console.log(`Finished generating ${primes.length} primes!`);
  const trace = await profiler.stop();
  console.log(JSON.stringify(trace));
}

window.addEventListener("load", handleLoad);
