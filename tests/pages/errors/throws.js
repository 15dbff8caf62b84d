// An external script: positions count from its own first line.
function f() {
  return missing.prop;
}
f();
