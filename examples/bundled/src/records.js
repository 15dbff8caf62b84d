// records.js: turns the CSV-like text a "server" sent into typed records.

/** A deterministic pseudo-random generator (mulberry32), so every run does the same work. */
export function createRandom(seed) {
  let state = seed >>> 0;
  return function nextRandom() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text of `count` records: "id,label,width,height,parent" per line. */
export function generateRecordText(count, seed) {
  const random = createRandom(seed);
  const lines = [];
  for (let id = 0; id < count; id++) {
    const width = 20 + Math.floor(random() * 180);
    const height = 10 + Math.floor(random() * 90);
    const parent = id === 0 ? -1 : Math.floor(random() * id);
    lines.push(`${id},node-${id.toString(36)},${width},${height},${parent}`);
  }
  return lines.join("\n");
}

/** Parses the text into records; malformed lines are counted, not thrown. */
export function parseRecords(text) {
  const records = [];
  let malformed = 0;
  for (const line of text.split("\n")) {
    const fields = line.split(",");
    if (fields.length !== 5) {
      malformed++;
      continue;
    }
    records.push({
      id: Number(fields[0]),
      label: fields[1],
      width: Number(fields[2]),
      height: Number(fields[3]),
      parent: Number(fields[4]),
    });
  }
  return { records, malformed };
}
