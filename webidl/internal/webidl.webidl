// From https://webidl.spec.whatwg.org/#idl-DOMException (the members the engine implements).
// Implemented in components/script/src/prelude/; see webidl/Bindings.toml.

[Exposed=(Window,Worker)]
interface DOMException {
  constructor(optional DOMString message = "", optional DOMString name = "Error");
  readonly attribute DOMString name;
  readonly attribute DOMString message;
  readonly attribute unsigned short code;
};
