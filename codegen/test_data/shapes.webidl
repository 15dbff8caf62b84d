// A little of everything the generator supports.
typedef unsigned long long Counter;

[Exposed=(Window,Worker)]
interface Widget : EventTarget {
  constructor(DOMString name, optional WidgetOptions options);
  readonly attribute DOMString name;
  readonly attribute Counter count;
  undefined poke();
  boolean resize(long width, optional unrestricted double scale);
  sequence<DOMString> tags(sequence<Counter> ids);
  Promise<WidgetReport> report(WidgetOptions options);
};

dictionary WidgetOptions {
  required double weight;
  boolean visible;
  sequence<long long> marks;
};

// A partial dictionary adds members; an enum used by one is generated.
partial dictionary WidgetOptions {
  WidgetShape shape;
};

enum WidgetShape { "round", "square-ish" };

// Servo's `[Pref]` (a partial interface's operation and a partial dictionary's member exist
// only while the pref is true).
partial interface Widget {
  [Pref="widget.extras.enabled"] undefined spin();
};

partial dictionary WidgetOptions {
  [Pref="widget.extras.enabled"] boolean wobbly;
};

// An enum mapped to an existing Rust type (a member of a mapped dictionary).
enum WidgetGrade { "good", "bad" };

dictionary WidgetReport {
  required DOMString summary;
  Counter total;
  WidgetGrade grade;
};

// A namespace of operations called without a `this`, kept off the globals (`hidden`), with
// nullable, octet and ByteString arguments.
[Exposed=(Window,Worker)]
namespace WidgetHost {
  undefined report(octet level, DOMString? note, optional DOMString? detail);
  boolean ready();
  ByteString checksum(ByteString data, ByteString? salt);
};

// The embedder's host interface (`host = true`): its operations are the host's methods,
// given the caller's window.
[Exposed=Window]
namespace WidgetEmbedder {
  unsigned long long open(DOMString url, optional boolean background);
  undefined close(unsigned long long id);
};
