  // Blob and blob: URLs (https://w3c.github.io/FileAPI/), holding text: string parts as they
  // are, bytes as Latin-1.
  const blobData = new WeakMap();
  const blobURLs = new Map();
  // A Blob of `text` with prototype `proto`: a platform object (host.platformObject), which
  // a structured clone recognises, and which its reader makes again this way.
  function makeBlob(proto, text, type) {
    const self = host.platformObject(proto);
    WeakMapSet(blobData, self, text);
    defineValue(self, "_type", type);
    return self;
  }
  class Blob {
    constructor(parts = [], options = {}) {
      let text = "";
      for (const p of Array.from(parts)) {
        // A Blob part by the engine's own record (instanceof asks the page's hasInstance).
        if (WeakMapHas(blobData, p)) text += WeakMapGet(blobData, p);
        else if (p instanceof ArrayBuffer) text += String.fromCharCode(...new Uint8Array(p));
        else if (ArrayBuffer.isView(p)) text += String.fromCharCode(...new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
        else text += String(p);
      }
      const type = String(options.type ?? "");
      return makeBlob(new.target.prototype, text, /[^\x20-\x7e]/.test(type) ? "" : type.toLowerCase());
    }
    get size() { return unescape(encodeURIComponent(blobData.get(this))).length; }
    get type() { return this._type; }
    text() { return Promise.resolve(blobData.get(this)); }
    slice(start = 0, end = undefined, type = "") {
      const b = new Blob([blobData.get(this).slice(start, end)], { type });
      return b;
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

