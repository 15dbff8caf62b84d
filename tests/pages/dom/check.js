// A tiny assertion helper: one line per check, and a summary at the end.
let failures = 0;
let count = 0;
function check(name, ok, detail) {
  count++;
  if (!ok) failures++;
  console.log(`${ok ? "PASS" : "FAIL"} ${name}${ok || detail === undefined ? "" : ": " + detail}`);
}
function done() {
  console.log(`${count - failures} passed, ${failures} failed`);
}
