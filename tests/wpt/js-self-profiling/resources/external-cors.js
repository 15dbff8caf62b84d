function corsSpin(ms) {
  return ProfilingUtils.spin(ms);
}
