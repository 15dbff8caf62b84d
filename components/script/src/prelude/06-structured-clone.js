  // ---------------------------------------------------------------------------------------
  // Structured clone (https://html.spec.whatwg.org/#safe-passing-of-structured-data):
  // SpiderMonkey's own serializer (glue/clone.rs), the one implementation behind
  // structuredClone, postMessage and messages to and from workers. The engine clones the
  // language's values (ArrayBuffers, views and DataViews, Maps, Sets, Errors, cycles…); the
  // platform objects it may meet (Blobs, and MessagePorts in the transfer list) are made with
  // host.platformObject, serialised to a string here and made again from it on the other
  // side. Anything else is a DataCloneError.
  const transferredPorts = new WeakSet();
  const dataCloneError = (message) => { throw new DOMException(message, "DataCloneError"); };
  // A platform object's serialised form: "b<type>\n<text>" for a Blob, "p<index>" for a
  // MessagePort in the transfer list.
  function platformWriter(transfer) {
    return (obj) => {
      // By the engine's own records, not by anything the page can redefine (instanceof
      // consults Blob[Symbol.hasInstance], `type` the prototype's getter).
      if (WeakMapHas(blobData, obj)) return `b${obj._type}\n${WeakMapGet(blobData, obj)}`;
      if (isPort(obj)) {
        const i = transfer.indexOf(obj);
        if (i < 0) throw new DOMException("A MessagePort must be transferred, not cloned.", "DataCloneError");
        return `p${i}`;
      }
      throw new DOMException(`${Object.prototype.toString.call(obj).slice(8, -1)} object could not be cloned.`, "DataCloneError");
    };
  }
  function platformReader(ports) {
    return (s) => {
      if (s[0] === "b") {
        const nl = s.indexOf("\n");
        return makeBlob(Blob.prototype, s.slice(nl + 1), s.slice(1, nl));
      }
      const port = s[0] === "p" ? ports[Number(s.slice(1))] : undefined;
      if (port) return port;
      throw new DOMException("A platform object in the message could not be made again.", "DataCloneError");
    };
  }
  // StructuredSerialize / StructuredDeserialize: the clone as a string of Latin-1 bytes.
  const writeClone = (value, transfer) => host.cloneWrite(value, platformWriter(transfer), dataCloneError);
  const readClone = (data, ports) => host.cloneRead(data, platformReader(ports), dataCloneError);
  // The transfer list's checks (https://html.spec.whatwg.org/#structuredserializewithtransfer).
  function checkTransfer(transfer) {
    for (const t of transfer) {
      if (!isPort(t)) throw new DOMException("Only MessagePorts can be transferred.", "DataCloneError");
      if (transferredPorts.has(t) || portState.get(t).closed) throw new DOMException("A MessagePort was transferred twice or is closed.", "DataCloneError");
    }
  }
  // Within a realm: ports in the transfer list stay the same objects.
  function structuredCloneWithTransfer(value, transfer = []) {
    transfer = Array.from(transfer);
    checkTransfer(transfer);
    const data = readClone(writeClone(value, transfer), transfer);
    for (const t of transfer) transferredPorts.add(t);
    return data;
  }
