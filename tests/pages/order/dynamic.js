export const y = "dyn";
