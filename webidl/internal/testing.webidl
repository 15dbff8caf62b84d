// Engine-internal: an interface that exercises the generated bindings and their WebIDL
// conversions from real pages. Exposed only with --pref dom.testing.enabled=true.

[Exposed=Window]
interface JsprofTestBindings {
  constructor(optional DOMString label);
  readonly attribute DOMString label;
  JsprofTestEcho echo(JsprofTestEcho value);
  sequence<DOMString> words(sequence<DOMString> input, optional boolean reverse);
  Promise<long long> later(long long value);
  // Panics inside the engine: how tests check that a bug is caught, reported as an
  // internal error, and ends the run with its exit code and the traces written.
  undefined crashForTesting();
  // Aborts the process (SIGABRT), as a crash in SpiderMonkey would: how tests check that
  // the browser of `jsprof -M` reports a content process that crashed and goes on.
  undefined abortForTesting();
  // A full collection now, for tests of the "gc" sample marker.
  undefined gc();
};

dictionary JsprofTestEcho {
  required DOMString text;
  boolean flag;
  long small;
  unsigned long count;
  long long big;
  unsigned long long ubig;
  double finite;
  unrestricted double anyNumber;
  sequence<unsigned long> list;
  JsprofTestMood mood;
};

// A generated enum (with a value that is not an identifier, and one that is empty).
enum JsprofTestMood { "calm", "wide-awake", "" };
