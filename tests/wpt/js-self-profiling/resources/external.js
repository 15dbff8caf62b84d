function externalSpin(ms) {
  return ProfilingUtils.spin(ms);
}
