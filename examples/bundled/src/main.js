// main.js: the page's entry point. It profiles itself, like examples/primes does.
import { generateRecordText, parseRecords } from "./records.js";
import { computeLayout } from "./layout.js";

const RECORD_COUNT = 600;
const ITERATIONS = 600;

/** One line saying what the layout came to. */
function renderSummary(parsed, layout) {
  const { left, top, right, bottom } = layout.bounds;
  const width = Math.round(right - left);
  const height = Math.round(bottom - top);
  return (
    `Laid out ${parsed.records.length} records (${parsed.malformed} malformed) ` +
    `in a ${width}x${height} box`
  );
}

async function runProfiledLayout() {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const text = generateRecordText(RECORD_COUNT, 2024);
  const parsed = parseRecords(text);
  const layout = computeLayout(parsed.records, ITERATIONS);
  console.log(renderSummary(parsed, layout));
  const trace = await profiler.stop();
  console.log(JSON.stringify(trace));
}

window.addEventListener("load", runProfiledLayout);
