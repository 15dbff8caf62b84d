  // Bytes: the engine holds a byte sequence as a string of code units 0-255 (what a WebIDL
  // ByteString is), the form JsprofHost's calls take and give (bodies, blobs, clones).
  const BYTES_CHUNK = 8192;
  // Whether `v` is an ArrayBuffer (not a SharedArrayBuffer), by its internal slots: the
  // byteLength getter throws for anything else.
  function isArrayBuffer(v) {
    try { ArrayBufferPrototypeGetByteLength(v); return true; } catch { return false; }
  }
  // The bytes of `buffer` from `offset`, `length` long, as Latin-1 characters: a chunk at a
  // time as fromCharCode's arguments, straight from a view of the chunk that has an own
  // `length` (so that reading it as an array-like runs no getter a page could have
  // replaced). 16 MiB in 44 ms, against 61 ms copying each chunk to a list first.
  function latin1(buffer, offset, length) {
    let out = "";
    for (let i = 0; i < length; i += BYTES_CHUNK) {
      const n = MathMin(BYTES_CHUNK, length - i);
      const part = new Uint8ArrayCtor(buffer, offset + i, n);
      ObjectDefineProperty(part, "length", dataDescriptor(n, false, false, false));
      out += ReflectApply(StringFromCharCode, null, part);
    }
    return out;
  }
  // A copy of the bytes a BufferSource holds (https://webidl.spec.whatwg.org/#dfn-get-buffer-source-copy),
  // read through its internal slots (the page cannot change what `buffer` or `byteLength`
  // say), or null if `v` is none (an ArrayBuffer, a typed array or a DataView); a view of a
  // SharedArrayBuffer is a TypeError (BufferSource is not [AllowShared]).
  function bufferSourceBytes(v) {
    if (v === null || typeof v !== "object") return null;
    if (ArrayBufferIsView(v)) {
      let buffer, offset, length;
      if (TypedArrayPrototypeGetSymbolToStringTag(v) !== undefined) {
        buffer = TypedArrayPrototypeGetBuffer(v);
        offset = TypedArrayPrototypeGetByteOffset(v);
        length = TypedArrayPrototypeGetByteLength(v);
      } else {
        buffer = DataViewPrototypeGetBuffer(v);
        offset = DataViewPrototypeGetByteOffset(v);
        length = DataViewPrototypeGetByteLength(v);
      }
      if (!isArrayBuffer(buffer)) throw new TypeErrorCtor("A view of a SharedArrayBuffer is not allowed here");
      return latin1(buffer, offset, length);
    }
    if (!isArrayBuffer(v)) return null;
    return latin1(v, 0, ArrayBufferPrototypeGetByteLength(v));
  }
  function bytesToUint8Array(bytes) {
    const out = new Uint8ArrayCtor(bytes.length);
    for (let i = 0; i < bytes.length; i++) out[i] = StringPrototypeCharCodeAt(bytes, i);
    return out;
  }
  function bytesToArrayBuffer(bytes) { return TypedArrayPrototypeGetBuffer(bytesToUint8Array(bytes)); }

  // Blob and blob: URLs (https://w3c.github.io/FileAPI/), holding bytes. A Blob's bytes and
  // type are in its native slot (a Blob handed to another same-origin window's postMessage
  // is still one); `blobURLs` maps this realm's blob: URLs to their Blobs.
  const blobURLs = new MapCtor();
  // A Blob of `bytes` with prototype `proto`: a platform object (host.platformObject), which
  // a structured clone recognises, and which its reader makes again this way.
  function makeBlob(proto, bytes, type) {
    return host.platformObject(proto, { __proto__: null, kind: PLATFORM_BLOB, bytes, type });
  }
  const blobOf = (b) => {
    const s = platformStateOf(b, PLATFORM_BLOB);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Blob");
    return s;
  };
  // By the engine's own record (instanceof would ask the page's Symbol.hasInstance).
  const isBlob = (v) => platformStateOf(v, PLATFORM_BLOB) !== undefined;
  const blobBytes = (blob) => blobOf(blob).bytes;
  // The characters a Blob's `type` may have (https://w3c.github.io/FileAPI/#dom-blob-blob,
  // BlobPropertyBag: printable ASCII), lower-cased; anything else makes it "".
  function blobType(type) {
    for (let i = 0; i < type.length; i++) {
      const c = StringPrototypeCharCodeAt(type, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return lowerCaseASCII(type);
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
  // A `[Clamp] long long` (https://webidl.spec.whatwg.org/#abstract-opdef-converttoint):
  // NaN is 0, anything else is rounded to the nearest integer, ties to even.
  function clampInteger(v) {
    const x = NumberCtor(v);
    if (x !== x) return 0;
    if (x === 1 / 0 || x === -1 / 0) return x;
    const t = MathTrunc(x);
    const rest = x - t;
    if (rest > 0.5 || (rest === 0.5 && t % 2 !== 0)) return t + 1;
    if (rest < -0.5 || (rest === -0.5 && t % 2 !== 0)) return t - 1;
    return t + 0;
  }
  // A relative position of slice() (https://w3c.github.io/FileAPI/#dfn-slice, steps 3-4),
  // clamped to [0, size].
  function relativePosition(v, size, fallback) {
    if (v === undefined) return fallback;
    const x = clampInteger(v);
    return x < 0 ? (size + x < 0 ? 0 : size + x) : (x < size ? x : size);
  }
  class Blob {
    // https://w3c.github.io/FileAPI/#constructorBlob
    constructor(blobParts = undefined, options = undefined) {
      // The arguments as WebIDL converts them: a sequence<BlobPart>, then the
      // BlobPropertyBag (its members in order: endings, type).
      const parts = blobParts === undefined ? list() : sequenceArg(blobParts, "Blob: blobParts");
      const bag = dictionaryArg(options, "BlobPropertyBag");
      let endings = "transparent", type = "";
      const e = bag.endings;
      if (e !== undefined) {
        endings = StringCtor(e);
        if (endings !== "transparent" && endings !== "native") throw new TypeErrorCtor(`'${endings}' is not a valid value for enumeration EndingType`);
      }
      const t = bag.type;
      if (t !== undefined) type = StringCtor(t);
      // 1. If invoked with zero parameters, return a new Blob with a size of 0. 2. Let bytes
      // be the result of processing blob parts: a Blob's bytes, a BufferSource's, a string
      // (a USVString) with its line endings converted if asked, UTF-8 encoded.
      let bytes = "";
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i];
        // A Blob part by the engine's own record (instanceof asks the page's hasInstance).
        const blob = platformStateOf(p, PLATFORM_BLOB);
        if (blob !== undefined) { bytes += blob.bytes; continue; }
        const copy = bufferSourceBytes(p);
        if (copy !== null) { bytes += copy; continue; }
        let text = toUSVString(p);
        if (endings === "native") text = nativeLineEndings(text);
        bytes += host.utf8Encode(text);
      }
      // 3. If the type member is not the empty string: printable ASCII, lower-cased, or "".
      // 4. Return a Blob of bytes with that type.
      return makeBlob(new.target.prototype, bytes, blobType(type));
    }
    // https://w3c.github.io/FileAPI/#dfn-size
    get size() { return blobOf(this).bytes.length; }
    // https://w3c.github.io/FileAPI/#dfn-type
    get type() { return blobOf(this).type; }
    // https://w3c.github.io/FileAPI/#text-method-algo: the bytes, UTF-8 decoded.
    text() { return resolvedPromise(host.utf8Decode(blobOf(this).bytes)); }
    // https://w3c.github.io/FileAPI/#arraybuffer-method-algo
    arrayBuffer() { return resolvedPromise(bytesToArrayBuffer(blobOf(this).bytes)); }
    // https://w3c.github.io/FileAPI/#bytes-method-algo
    bytes() { return resolvedPromise(bytesToUint8Array(blobOf(this).bytes)); }
    // https://w3c.github.io/FileAPI/#dfn-slice
    slice(start = undefined, end = undefined, contentType = undefined) {
      const bytes = blobOf(this).bytes;
      const size = bytes.length;
      // 3-4. relativeStart and relativeEnd, clamped to the size.
      const from = relativePosition(start, size, 0);
      const to = relativePosition(end, size, size);
      // 5. relativeContentType: printable ASCII lower-cased, or "".
      const type = contentType === undefined ? "" : blobType(StringCtor(contentType));
      // 6-7. span = max(relativeEnd - relativeStart, 0); the bytes from relativeStart.
      return makeBlob(Blob.prototype, from < to ? StringPrototypeSlice(bytes, from, to) : "", type);
    }
  }
  tag(Blob, "Blob");
  let nextBlobURL = 1;
  // https://w3c.github.io/FileAPI/#dfn-createObjectURL
  defineValue(URL, "createObjectURL", function createObjectURL(obj) {
    const s = platformStateOf(obj, PLATFORM_BLOB);
    if (s === undefined) throw new TypeErrorCtor("createObjectURL: argument is not a Blob");
    const url = `blob:${locationParts.origin}/jsprof-${nextBlobURL++}-${StringPrototypeSlice(NumberPrototypeToString(MathRandom(), 16), 2)}`;
    MapSet(blobURLs, url, obj);
    return url;
  });
  // https://w3c.github.io/FileAPI/#dfn-revokeObjectURL
  defineValue(URL, "revokeObjectURL", function revokeObjectURL(url) { MapDelete(blobURLs, StringCtor(url)); });
