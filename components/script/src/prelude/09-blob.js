  // Blob and blob: URLs (https://w3c.github.io/FileAPI/), holding text: string parts as they
  // are, bytes as Latin-1. A Blob's text and type are in its native slot (a Blob handed to
  // another same-origin window's postMessage is still one); `blobData` (Blob -> text) is
  // this realm's index of them for the fetch of blob: URLs.
  const blobData = new WeakMapCtor();
  const blobURLs = new MapCtor();
  // A Blob of `text` with prototype `proto`: a platform object (host.platformObject), which
  // a structured clone recognises, and which its reader makes again this way.
  function makeBlob(proto, text, type) {
    const self = host.platformObject(proto, { __proto__: null, kind: PLATFORM_BLOB, text, type });
    WeakMapSet(blobData, self, text);
    return self;
  }
  const blobOf = (b) => {
    const s = platformStateOf(b, PLATFORM_BLOB);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Blob");
    return s;
  };
  // The bytes of `view` (of `buffer` from `offset`, `length` long) as Latin-1 characters.
  function latin1(buffer, offset, length) {
    const bytes = new Uint8ArrayCtor(buffer, offset, length);
    let out = "";
    const chunk = list();
    for (let i = 0; i < length; i += 8192) {
      const n = MathMin(8192, length - i);
      chunk.length = n;
      for (let j = 0; j < n; j++) chunk[j] = bytes[i + j];
      out += ReflectApply(StringFromCharCode, null, chunk);
    }
    return out;
  }
  // A BufferSource's bytes as Latin-1 characters, read through its internal slots (the
  // page cannot change what `buffer` or `byteLength` say); undefined for anything else.
  function bufferSourceText(p) {
    if (p === null || typeof p !== "object") return undefined;
    if (ArrayBufferIsView(p)) {
      if (TypedArrayPrototypeGetSymbolToStringTag(p) !== undefined) {
        return latin1(TypedArrayPrototypeGetBuffer(p), TypedArrayPrototypeGetByteOffset(p), TypedArrayPrototypeGetByteLength(p));
      }
      return latin1(DataViewPrototypeGetBuffer(p), DataViewPrototypeGetByteOffset(p), DataViewPrototypeGetByteLength(p));
    }
    let length;
    try { length = ArrayBufferPrototypeGetByteLength(p); } catch { return undefined; }
    return latin1(p, 0, length);
  }
  // The characters a Blob's `type` may have (https://w3c.github.io/FileAPI/#dom-blob-blob,
  // BlobPropertyBag: printable ASCII), lower-cased; anything else makes it "".
  function blobType(type) {
    for (let i = 0; i < type.length; i++) {
      const c = StringPrototypeCharCodeAt(type, i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return lowerCaseASCII(type);
  }
  class Blob {
    // https://w3c.github.io/FileAPI/#constructorBlob
    constructor(blobParts = undefined, options = undefined) {
      // The arguments as WebIDL converts them: a sequence<BlobPart>, then the
      // BlobPropertyBag (endings, type).
      const parts = blobParts === undefined ? list() : sequenceArg(blobParts, "Blob: blobParts");
      let text = "";
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i];
        // A Blob part by the engine's own record (instanceof asks the page's hasInstance).
        const blob = platformStateOf(p, PLATFORM_BLOB);
        if (blob !== undefined) { text += blob.text; continue; }
        const bytes = bufferSourceText(p);
        text += bytes !== undefined ? bytes : toUSVString(p);
      }
      const bag = dictionaryArg(options, "BlobPropertyBag");
      const type = bag.type;
      return makeBlob(new.target.prototype, text, type === undefined ? "" : blobType(StringCtor(type)));
    }
    // https://w3c.github.io/FileAPI/#dfn-size: the UTF-8 length of the text.
    get size() { return unescapeFn(encodeURIComponentFn(blobOf(this).text)).length; }
    get type() { return blobOf(this).type; }
    // https://w3c.github.io/FileAPI/#text-method-algo
    text() { return resolvedPromise(blobOf(this).text); }
    // https://w3c.github.io/FileAPI/#dfn-slice
    slice(start = undefined, end = undefined, contentType = undefined) {
      const s = blobOf(this);
      const type = contentType === undefined ? "" : blobType(StringCtor(contentType));
      return makeBlob(Blob.prototype, StringPrototypeSlice(s.text, start, end), type);
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
    WeakMapSet(blobData, obj, s.text);
    return url;
  });
  // https://w3c.github.io/FileAPI/#dfn-revokeObjectURL
  defineValue(URL, "revokeObjectURL", function revokeObjectURL(url) { MapDelete(blobURLs, StringCtor(url)); });
