function decl(a) {}
const named = function inner() {};
const anon = function () {};
let arrow = (x) => x;
assigned = function () {};
obj.prop = function () {};
const o = { m() {}, p: function () {}, get x() { return 1; }, set x(v) {}, q: () => {} };
class K { constructor() {} method() {} get g() {} set s(v) {} static st() {} }
const C = class { run() {} };
[1].map(function () {});
const wrapped = (function () {});
