
  // ---------------------------------------------------------------------------------------
  // Structured clone (https://html.spec.whatwg.org/#safe-passing-of-structured-data):
  // SpiderMonkey's own serializer (glue/clone.rs), the one implementation behind
  // structuredClone, postMessage and messages to and from workers. The engine clones the
  // language's values (ArrayBuffers, views and DataViews, Maps, Sets, Errors, cycles…); the
  // platform objects it may meet (Blobs, and MessagePorts in the transfer list) are made with
  // host.platformObject, serialised to a string here and made again from it on the other
  // side. Anything else is a DataCloneError.
  const dataCloneError = (message) => { throw new DOMException(message, "DataCloneError"); };
  // The interface name a platform object's prototype chain tags it with (data properties
  // only), for messages.
  const interfaceName = (obj) => {
    const name = dataProperty(obj, SymbolToStringTag);
    return typeof name === "string" ? name : "platform";
  };
  // A platform object's serialised form: "b<type>\n<bytes>" for a Blob, "p<index>" for a
  // MessagePort in the transfer list. By the engine's own records (its native state), not
  // by anything the page can redefine.
  function platformWriter(transfer) {
    return (obj) => {
      const blob = platformStateOf(obj, PLATFORM_BLOB);
      if (blob !== undefined) return "b" + blob.type + "\n" + blob.bytes;
      if (platformStateOf(obj, PLATFORM_PORT) !== undefined) {
        const i = listIndexOf(transfer, obj);
        if (i < 0) throw new DOMException("A MessagePort must be transferred, not cloned.", "DataCloneError");
        return "p" + i;
      }
      throw new DOMException(`${interfaceName(obj)} object could not be cloned.`, "DataCloneError");
    };
  }
  function platformReader(ports) {
    return (s) => {
      if (StringPrototypeCharCodeAt(s, 0) === 0x62) { // b
        const nl = StringPrototypeIndexOf(s, "\n");
        return makeBlob(Blob.prototype, StringPrototypeSlice(s, nl + 1), StringPrototypeSlice(s, 1, nl));
      }
      const index = StringPrototypeCharCodeAt(s, 0) === 0x70 ? NumberCtor(StringPrototypeSlice(s, 1)) : -1; // p
      const port = index >= 0 && index < ports.length ? ports[index] : undefined;
      if (port !== undefined) return port;
      throw new DOMException("A platform object in the message could not be made again.", "DataCloneError");
    };
  }
  // StructuredSerialize / StructuredDeserialize: the clone as a string of Latin-1 bytes.
  const writeClone = (value, transfer) => host.cloneWrite(value, platformWriter(transfer), dataCloneError);
  const readClone = (data, ports) => host.cloneRead(data, platformReader(ports), dataCloneError);
  // The transfer list's checks (https://html.spec.whatwg.org/#structuredserializewithtransfer):
  // only ports, none transferred before or closed, none twice.
  function checkTransfer(transfer) {
    for (let i = 0; i < transfer.length; i++) {
      const t = transfer[i];
      const st = platformStateOf(t, PLATFORM_PORT);
      if (st === undefined) throw new DOMException("Only MessagePorts can be transferred.", "DataCloneError");
      if (st.transferred || st.closed || listIndexOf(transfer, t) !== i) {
        throw new DOMException("A MessagePort was transferred twice or is closed.", "DataCloneError");
      }
    }
  }
  // The transfer list of a postMessage or structuredClone call: WebIDL's
  // `sequence<object> transfer` of the overload taking one, or the `transfer` member of
  // StructuredSerializeOptions (`options`).
  function transferArg(arg) {
    if (arg === undefined || arg === null) return list();
    if (typeof arg !== "object" && typeof arg !== "function") throw new TypeErrorCtor("The transfer options are not an object");
    const method = arg[SymbolIterator]; // prelude-lint: allow(protocol-read) WebIDL overload resolution: a sequence if @@iterator is there
    if (method !== undefined && method !== null) {
      if (typeof method !== "function") throw new TypeErrorCtor("The transfer list is not iterable");
      return iterableToList(arg, method);
    }
    const transfer = arg.transfer;
    return transfer === undefined ? list() : sequenceArg(transfer, "The transfer list");
  }
  // The `transfer` member of a StructuredSerializeOptions dictionary (structuredClone's).
  function transferOption(options) {
    const transfer = dictionaryArg(options, "The options").transfer;
    return transfer === undefined ? list() : sequenceArg(transfer, "The transfer list");
  }
  // Within a realm: ports in the transfer list stay the same objects.
  function structuredCloneWithTransfer(value, transfer) {
    checkTransfer(transfer);
    const data = readClone(writeClone(value, transfer), transfer);
    for (let i = 0; i < transfer.length; i++) platformStateOf(transfer[i], PLATFORM_PORT).transferred = true;
    return data;
  }
