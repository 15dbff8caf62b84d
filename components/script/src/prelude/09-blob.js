  // Bytes: the engine holds a byte sequence as a string of code units 0-255 (what a WebIDL
  // ByteString is), the form JsprofHost's calls take and give (bodies, blobs, clones).
  const BYTES_CHUNK = 8192;
  function isArrayBuffer(v) {
    try { ArrayBufferPrototypeGetByteLength(v); return true; } catch { return false; }
  }
  // A copy of the bytes a BufferSource holds (https://webidl.spec.whatwg.org/#dfn-get-buffer-source-copy),
  // or null if `v` is none (an ArrayBuffer, a typed array or a DataView, not shared).
  function bufferSourceBytes(v) {
    let buffer, offset, length;
    if (isArrayBuffer(v)) {
      buffer = v; offset = 0; length = ArrayBufferPrototypeGetByteLength(v);
    } else if (ArrayBufferIsView(v)) {
      try {
        buffer = TypedArrayPrototypeGetBuffer(v);
        offset = TypedArrayPrototypeGetByteOffset(v);
        length = TypedArrayPrototypeGetByteLength(v);
      } catch {
        buffer = DataViewPrototypeGetBuffer(v);
        offset = DataViewPrototypeGetByteOffset(v);
        length = DataViewPrototypeGetByteLength(v);
      }
      if (!isArrayBuffer(buffer)) throw new TypeErrorCtor("A view of a SharedArrayBuffer is not allowed here");
    } else {
      return null;
    }
    let out = "";
    for (let i = 0; i < length; i += BYTES_CHUNK) {
      const n = MathMin(BYTES_CHUNK, length - i);
      // A chunk's bytes as fromCharCode's arguments: the view gets an own `length`, so that
      // reading it as an array-like runs no getter a page could have replaced.
      const part = new Uint8ArrayCtor(buffer, offset + i, n);
      ObjectDefineProperty(part, "length", dataDescriptor(n, false, false, false));
      out += ReflectApply(StringFromCharCode, null, part);
    }
    return out;
  }
  function bytesToUint8Array(bytes) {
    const out = new Uint8ArrayCtor(bytes.length);
    for (let i = 0; i < bytes.length; i++) out[i] = StringPrototypeCharCodeAt(bytes, i);
    return out;
  }
  function bytesToArrayBuffer(bytes) { return TypedArrayPrototypeGetBuffer(bytesToUint8Array(bytes)); }

  // Blob and blob: URLs (https://w3c.github.io/FileAPI/), holding bytes.
  const blobData = new WeakMap();
  const blobURLs = new Map();
  // A Blob of `bytes` with prototype `proto`: a platform object (host.platformObject), which
  // a structured clone recognises, and which its reader makes again this way.
  function makeBlob(proto, bytes, type) {
    const self = host.platformObject(proto);
    WeakMapSet(blobData, self, bytes);
    defineValue(self, "_type", type);
    return self;
  }
  // By the engine's own record (instanceof would ask the page's Symbol.hasInstance).
  function isBlob(v) { return WeakMapHas(blobData, v); }
  function blobBytes(blob) {
    const bytes = WeakMapGet(blobData, blob);
    if (bytes === undefined) throw new TypeErrorCtor("'this' is not a Blob");
    return bytes;
  }
  // A type of printable ASCII, lowercased; anything else is "".
  function blobType(t) {
    for (let i = 0; i < t.length; i++) {
      const c = StringPrototypeCharCodeAt(t, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return StringPrototypeToLowerCase(t);
  }
  // Native line endings (https://w3c.github.io/FileAPI/#convert-line-endings-to-native): LF.
  function nativeLineEndings(s) {
    let out = "", start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      if (c !== 13) continue;
      out += StringPrototypeSlice(s, start, i) + "\n";
      if (i + 1 < s.length && StringPrototypeCharCodeAt(s, i + 1) === 10) i++;
      start = i + 1;
    }
    return out + StringPrototypeSlice(s, start);
  }
  // A relative position of slice() ([Clamp] long long, then clamped to the size).
  function relativePosition(v, size, fallback) {
    if (v === undefined) return fallback;
    let x = NumberCtor(v);
    x = x !== x ? 0 : MathTrunc(x);
    return x < 0 ? (size + x < 0 ? 0 : size + x) : (x < size ? x : size);
  }
  class Blob {
    // https://w3c.github.io/FileAPI/#constructorBlob
    constructor(blobParts = undefined, options = undefined) {
      // WebIDL: sequence<BlobPart> (the page's iterable), then BlobPropertyBag.
      let parts = list();
      if (blobParts !== undefined) {
        if (blobParts === null || (typeof blobParts !== "object" && typeof blobParts !== "function")) throw new TypeErrorCtor("Blob constructor: blobParts is not a sequence");
        const method = blobParts[SymbolIterator];
        if (typeof method !== "function") throw new TypeErrorCtor("Blob constructor: blobParts is not iterable");
        parts = iterableToList(blobParts, method);
      }
      let endings = "transparent", type = "";
      if (options !== undefined && options !== null) {
        if (typeof options !== "object" && typeof options !== "function") throw new TypeErrorCtor("Blob constructor: options is not an object");
        const e = options.endings;
        if (e !== undefined) {
          endings = StringCtor(e);
          if (endings !== "transparent" && endings !== "native") throw new TypeErrorCtor(`'${endings}' is not a valid value for enumeration EndingType`);
        }
        const t = options.type;
        if (t !== undefined) type = StringCtor(t);
      }
      // Step 2. Process the parts: a Blob's bytes, a BufferSource's, a string UTF-8 encoded.
      let bytes = "";
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i];
        if (isBlob(p)) { bytes += blobBytes(p); continue; }
        const copy = bufferSourceBytes(p);
        if (copy !== null) { bytes += copy; continue; }
        let text = StringPrototypeToWellFormed(StringCtor(p));
        if (endings === "native") text = nativeLineEndings(text);
        bytes += host.utf8Encode(text);
      }
      // Steps 3-4.
      return makeBlob(new.target.prototype, bytes, blobType(type));
    }
    get size() { return blobBytes(this).length; }
    get type() { return this._type; }
    text() { return PromiseResolve(host.utf8Decode(blobBytes(this))); }
    arrayBuffer() { return PromiseResolve(bytesToArrayBuffer(blobBytes(this))); }
    bytes() { return PromiseResolve(bytesToUint8Array(blobBytes(this))); }
    // https://w3c.github.io/FileAPI/#dfn-slice
    slice(start = undefined, end = undefined, contentType = undefined) {
      const bytes = blobBytes(this);
      const size = bytes.length;
      const from = relativePosition(start, size, 0);
      const to = relativePosition(end, size, size);
      const type = contentType === undefined ? "" : blobType(StringCtor(contentType));
      return makeBlob(Blob.prototype, from < to ? StringPrototypeSlice(bytes, from, to) : "", type);
    }
  }
  tag(Blob, "Blob");
  let nextBlobURL = 1;
  URL.createObjectURL = function createObjectURL(blob) {
    if (!(blob instanceof Blob)) throw new TypeError("createObjectURL: argument is not a Blob");
    const origin = location.origin === "null" ? "null" : location.origin;
    const url = `blob:${origin}/jsprof-${nextBlobURL++}-${Math.random().toString(16).slice(2)}`;
    blobURLs.set(url, blob);
    return url;
  };
  URL.revokeObjectURL = function revokeObjectURL(url) { blobURLs.delete(String(url)); };

