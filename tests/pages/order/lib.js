export const x = "lib";
