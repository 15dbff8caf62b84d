// Decodes a .pb.gz with Datadog's pprof-format (gunzipped by node's zlib) and prints, as
// JSON, what it holds: sample types, the sum of each over all samples, the functions, and
// every sample's call path (root first) with its values.
//   node pprof.mjs FILE.pb.gz
import fs from "node:fs";
import zlib from "node:zlib";
import { need } from "./lib.mjs";

const { Profile } = need("pprof-format");
const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const str = (i) => profile.stringTable.strings[Number(i)];
const num = (v) => Number(v);

const functions = new Map(profile.function.map((f) => [num(f.id), {
  id: num(f.id), name: str(f.name), systemName: str(f.systemName), filename: str(f.filename), startLine: num(f.startLine),
}]));
const locations = new Map(profile.location.map((l) => [num(l.id), l.line.map((line) => ({
  function: functions.get(num(line.functionId)) || null, line: num(line.line),
}))]));
const sampleTypes = profile.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`);
const totals = Object.fromEntries(sampleTypes.map((t, i) => [t, profile.sample.reduce((a, s) => a + num(s.value[i]), 0)]));
const samples = profile.sample.map((s) => ({
  // pprof lists a sample's locations leaf first; this is root first.
  path: s.locationId.map((id) => {
    const lines = locations.get(num(id));
    if (!lines || lines.length !== 1 || !lines[0].function) return null;
    const { function: f, line } = lines[0];
    return { name: f.name, systemName: f.systemName, filename: f.filename, line };
  }).reverse(),
  values: s.value.map(num),
}));

console.log(JSON.stringify({
  sampleTypes,
  defaultSampleType: str(profile.defaultSampleType),
  periodType: profile.periodType ? `${str(profile.periodType.type)}/${str(profile.periodType.unit)}` : null,
  period: num(profile.period),
  durationNanos: num(profile.durationNanos),
  comments: profile.comment.map(str),
  totals,
  functions: [...functions.values()],
  samples,
}, null, 1));
