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

dictionary WidgetReport {
  required DOMString summary;
  Counter total;
};
