export function half(n) { return n / 2; }
