// META: title=Frame names follow the function's ECMAScript name
// META: script=resources/profiling-utils.js
"use strict";

function declared() { return ProfilingUtils.spin(150); }
const namedExpr = function namedExpression() { return ProfilingUtils.spin(150); };
const anonymous = function () { return ProfilingUtils.spin(150); };
class Shape {
  area() { return ProfilingUtils.spin(150); }
  get size() { return ProfilingUtils.spin(150); }
  set size(v) { ProfilingUtils.spin(150); }
}

const names = (trace) => trace.frames.map((f) => f.name);

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => declared());
  assert_true(names(trace).includes("declared"), names(trace).join());
}, "a function declaration");

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => namedExpr());
  assert_true(names(trace).includes("namedExpression"), names(trace).join());
}, "a named function expression has its own name");

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => anonymous());
  assert_true(names(trace).includes("anonymous"), names(trace).join());
}, "an anonymous function expression takes the name it is bound to");

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => [1].forEach(() => ProfilingUtils.spin(150)));
  assert_true(names(trace).includes(""), names(trace).join());
}, "an arrow function passed as an argument is named ''");

promise_test(async () => {
  const s = new Shape();
  const trace = await ProfilingUtils.profile(() => s.area());
  assert_true(names(trace).includes("area"), names(trace).join());
}, "a class method");

promise_test(async () => {
  const s = new Shape();
  const bound = s.area.bind(s);
  const trace = await ProfilingUtils.profile(() => bound());
  assert_true(names(trace).includes("area"), names(trace).join());
  assert_false(names(trace).some((n) => n.startsWith("bound")), names(trace).join());
}, "a class method called through bind has the method's name");

promise_test(async () => {
  const s = new Shape();
  const trace = await ProfilingUtils.profile(() => void s.size);
  assert_true(names(trace).includes("get size"), names(trace).join());
}, "a getter is named 'get x'");

promise_test(async () => {
  const s = new Shape();
  const trace = await ProfilingUtils.profile(() => { s.size = 1; });
  assert_true(names(trace).includes("set size"), names(trace).join());
}, "a setter is named 'set x'");
