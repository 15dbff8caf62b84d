// Engine-internal: an interface that exercises the generated bindings and their WebIDL
// conversions from real pages. Exposed only with --pref dom.testing.enabled=true.

[Exposed=Window]
interface JsprofTestBindings {
  constructor(optional DOMString label);
  readonly attribute DOMString label;
  JsprofTestEcho echo(JsprofTestEcho value);
  sequence<DOMString> words(sequence<DOMString> input, optional boolean reverse);
  Promise<long long> later(long long value);
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
};
