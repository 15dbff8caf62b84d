// gunzip (RFC 1952) and inflate (RFC 1951) in plain JavaScript, written for these tests:
// the engine has no DecompressionStream, and the json-gzip tests need a decoder that is
// not the engine's own. The gzip trailer's CRC-32 and length are checked, so a decoded
// trace is the one the engine compressed, byte for byte.
(function (global) {
  "use strict";
  const LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
    67, 83, 99, 115, 131, 163, 195, 227, 258];
  const LEXT = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
    5, 5, 5, 5, 0];
  const DBASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513,
    769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
  const DEXT = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
    11, 11, 12, 12, 13, 13];
  const ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

  // A canonical Huffman code from its code lengths (as zlib's puff.c builds it).
  function huffman(lengths) {
    const count = new Uint16Array(16);
    for (const l of lengths) count[l]++;
    count[0] = 0;
    const offs = new Uint16Array(16);
    for (let i = 1; i < 16; i++) offs[i] = offs[i - 1] + count[i - 1];
    const symbol = new Uint16Array(lengths.length);
    for (let s = 0; s < lengths.length; s++) {
      if (lengths[s]) symbol[offs[lengths[s]]++] = s;
    }
    return { count, symbol };
  }

  function inflate(src, start) {
    let pos = start;
    let bitbuf = 0;
    let bitcnt = 0;
    let out = new Uint8Array(1 << 16);
    let n = 0;
    function bits(need) {
      while (bitcnt < need) {
        if (pos >= src.length) throw new Error("inflate: input ends early");
        bitbuf |= src[pos++] << bitcnt;
        bitcnt += 8;
      }
      const v = bitbuf & ((1 << need) - 1);
      bitbuf >>>= need;
      bitcnt -= need;
      return v;
    }
    function put(b) {
      if (n === out.length) {
        const bigger = new Uint8Array(out.length * 2);
        bigger.set(out);
        out = bigger;
      }
      out[n++] = b;
    }
    function decode(h) {
      let code = 0;
      let first = 0;
      let index = 0;
      for (let len = 1; len < 16; len++) {
        code |= bits(1);
        const count = h.count[len];
        if (code - count < first) return h.symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
      }
      throw new Error("inflate: bad code");
    }
    let fixed = null;
    let last = 0;
    do {
      last = bits(1);
      const type = bits(2);
      if (type === 0) {
        bitbuf = 0;
        bitcnt = 0;
        if (pos + 4 > src.length) throw new Error("inflate: input ends early");
        const len = src[pos] | (src[pos + 1] << 8);
        const nlen = src[pos + 2] | (src[pos + 3] << 8);
        pos += 4;
        if ((len ^ 0xffff) !== nlen) throw new Error("inflate: bad stored length");
        if (pos + len > src.length) throw new Error("inflate: input ends early");
        for (let i = 0; i < len; i++) put(src[pos++]);
        continue;
      }
      let lit;
      let dist;
      if (type === 1) {
        if (!fixed) {
          const l = [];
          for (let i = 0; i < 288; i++) l.push(i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8);
          fixed = [huffman(l), huffman(new Array(30).fill(5))];
        }
        [lit, dist] = fixed;
      } else if (type === 2) {
        const nlit = bits(5) + 257;
        const ndist = bits(5) + 1;
        const ncode = bits(4) + 4;
        const cl = new Array(19).fill(0);
        for (let i = 0; i < ncode; i++) cl[ORDER[i]] = bits(3);
        const codes = huffman(cl);
        const lengths = [];
        while (lengths.length < nlit + ndist) {
          const sym = decode(codes);
          if (sym < 16) {
            lengths.push(sym);
            continue;
          }
          let repeat;
          let value = 0;
          if (sym === 16) {
            if (!lengths.length) throw new Error("inflate: repeat with no length");
            value = lengths[lengths.length - 1];
            repeat = 3 + bits(2);
          } else if (sym === 17) {
            repeat = 3 + bits(3);
          } else {
            repeat = 11 + bits(7);
          }
          while (repeat--) lengths.push(value);
        }
        if (lengths.length !== nlit + ndist) throw new Error("inflate: too many lengths");
        lit = huffman(lengths.slice(0, nlit));
        dist = huffman(lengths.slice(nlit));
      } else {
        throw new Error("inflate: bad block type");
      }
      for (;;) {
        const sym = decode(lit);
        if (sym < 256) {
          put(sym);
        } else if (sym === 256) {
          break;
        } else {
          const s = sym - 257;
          if (s >= 29) throw new Error("inflate: bad length symbol");
          const len = LBASE[s] + bits(LEXT[s]);
          const ds = decode(dist);
          if (ds >= 30) throw new Error("inflate: bad distance symbol");
          const d = DBASE[ds] + bits(DEXT[ds]);
          if (d > n) throw new Error("inflate: distance too far back");
          for (let i = 0; i < len; i++) put(out[n - d]);
        }
      }
    } while (!last);
    return { bytes: out.subarray(0, n), end: pos };
  }

  let table = null;
  function crc32(bytes) {
    if (!table) {
      table = new Uint32Array(256);
      for (let i = 0; i < 256; i++) {
        let c = i;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
        table[i] = c >>> 0;
      }
    }
    let crc = 0xffffffff;
    for (const b of bytes) crc = table[(crc ^ b) & 0xff] ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  }

  // The bytes a gzip member (an ArrayBuffer) holds; throws unless it is exactly one
  // well-formed member whose CRC-32 and length match what it decodes to.
  function gunzip(buffer) {
    const src = new Uint8Array(buffer);
    if (src.length < 18 || src[0] !== 0x1f || src[1] !== 0x8b || src[2] !== 8) {
      throw new Error("gunzip: not a gzip member");
    }
    const flags = src[3];
    let pos = 10;
    if (flags & 4) pos += 2 + (src[pos] | (src[pos + 1] << 8));
    if (flags & 8) while (src[pos++] !== 0);
    if (flags & 16) while (src[pos++] !== 0);
    if (flags & 2) pos += 2;
    const { bytes, end } = inflate(src, pos);
    const word = (i) => (src[i] | (src[i + 1] << 8) | (src[i + 2] << 16) | (src[i + 3] << 24)) >>> 0;
    if (end + 8 !== src.length) throw new Error("gunzip: bytes after the member");
    if (word(end) !== crc32(bytes)) throw new Error("gunzip: CRC-32 mismatch");
    if (word(end + 4) !== bytes.length >>> 0) throw new Error("gunzip: length mismatch");
    return bytes;
  }

  // UTF-8 bytes to a string (strict: malformed input throws).
  function utf8(bytes) {
    let s = "";
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i];
      let cp;
      let extra;
      if (b < 0x80) {
        cp = b;
        extra = 0;
      } else if (b >= 0xc2 && b < 0xe0) {
        cp = b & 0x1f;
        extra = 1;
      } else if (b >= 0xe0 && b < 0xf0) {
        cp = b & 0x0f;
        extra = 2;
      } else if (b >= 0xf0 && b < 0xf5) {
        cp = b & 0x07;
        extra = 3;
      } else {
        throw new Error("utf8: bad lead byte");
      }
      for (let k = 1; k <= extra; k++) {
        const c = bytes[i + k];
        if (c === undefined || (c & 0xc0) !== 0x80) throw new Error("utf8: bad continuation");
        cp = (cp << 6) | (c & 0x3f);
      }
      i += extra + 1;
      s += String.fromCodePoint(cp);
    }
    return s;
  }

  global.Gunzip = { gunzip, inflate, crc32, utf8 };
})(self);
