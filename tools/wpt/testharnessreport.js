// Provided by jsprof's WPT runner (tools/wpt): reports a test's results as one line on
// stdout that the runner looks for. Output is off, so the harness needs no rendering DOM.
setup({ output: false });
add_completion_callback((tests, status) => {
  const harness = ["OK", "ERROR", "TIMEOUT", "PRECONDITION_FAILED"];
  const subtest = ["PASS", "FAIL", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED"];
  const result = {
    status: harness[status.status] || "ERROR",
    message: status.message || null,
    subtests: tests.map((t) => ({ name: t.name, status: subtest[t.status] || "FAIL", message: t.message || null })),
  };
  console.log("JSPROF-WPT-RESULT " + JSON.stringify(result));
});
