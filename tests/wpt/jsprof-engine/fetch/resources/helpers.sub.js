// Shared by the fetch and XMLHttpRequest tests: the echo server on this test's origin and on
// another one (the "alt" host), fresh stash tokens, and byte helpers.
"use strict";

const ECHO = "/jsprof-engine/fetch/resources/echo.py";
const OTHER_ORIGIN = "http://{{hosts[alt][]}}:{{ports[http][0]}}";
const OTHER_ECHO = OTHER_ORIGIN + ECHO;

// A v4 UUID (the stash's keys must be UUIDs).
function newToken() {
  const hex = (n) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + Math.floor(Math.random() * 4)).toString(16)}${hex(3)}-${hex(12)}`;
}

// The echo server's URL with `params` (an object) in its query.
function echo(base, params = {}) {
  const query = new URLSearchParams(params).toString();
  return query ? `${base}?${query}` : base;
}

// Every byte value, twice (512 bytes that are not UTF-8).
function allBytes() {
  const out = new Uint8Array(512);
  for (let i = 0; i < 512; i++) out[i] = i & 255;
  return out;
}

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

function sameBytes(buffer, expected, message) {
  assert_array_equals(Array.from(new Uint8Array(buffer)), Array.from(expected), message);
}

// Whether a Content-Type is one a CORS request sends without a preflight.
const safelistedType = (type) => ["", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded;charset=UTF-8"].includes(type);

// The two places the bodies go: this origin, and another that allows it (and Content-Type),
// each with a fresh token to count preflights.
function destinations() {
  return [
    ["same-origin", () => echo(ECHO, { token: newToken() })],
    ["cross-origin with CORS", () => echo(OTHER_ECHO, { token: newToken(), acao: "*", headers: "content-type" })],
  ];
}

// The bodies fetch() and XMLHttpRequest take, with the bytes and Content-Type each sends.
function bodyCases() {
  const bytes = allBytes();
  const words = new Uint16Array([0x0102, 0xfffe]);
  return [
    { name: "a string", body: "h\u00e9llo \u2603 \ud800", bytes: new TextEncoderLite().encode("h\u00e9llo \u2603 \ufffd"), type: "text/plain;charset=UTF-8" },
    { name: "an ArrayBuffer", body: bytes.buffer, bytes, type: "" },
    { name: "a Uint8Array view of part of a buffer", body: new Uint8Array(bytes.buffer, 10, 20), bytes: bytes.slice(10, 30), type: "" },
    { name: "a Uint16Array", body: words, bytes: new Uint8Array(words.buffer), type: "" },
    { name: "a DataView", body: new DataView(bytes.buffer, 250, 12), bytes: bytes.slice(250, 262), type: "" },
    { name: "a Blob with a type", body: new Blob([bytes, "\u2603"], { type: "Application/X-Test" }), bytes: concat(bytes, [0xe2, 0x98, 0x83]), type: "application/x-test" },
    { name: "a Blob without a type", body: new Blob([bytes]), bytes, type: "" },
    { name: "URLSearchParams", body: new URLSearchParams([["a b", "\u00e9&="], ["c", "1"]]), bytes: ascii("a+b=%C3%A9%26%3D&c=1"), type: "application/x-www-form-urlencoded;charset=UTF-8" },
  ];
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function ascii(s) {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

// UTF-8 by hand: jsprof has no TextEncoder, and the tests must not trust the engine's own.
class TextEncoderLite {
  encode(s) {
    const out = [];
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Uint8Array(out);
  }
}
