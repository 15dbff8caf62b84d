function hiddenSpin(ms) {
  return ProfilingUtils.spin(ms);
}
