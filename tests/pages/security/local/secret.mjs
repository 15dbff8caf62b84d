export const secret = "TOP-SECRET-LOCAL-MODULE";
