// A module the replaced-built-ins page imports.
export const answer = 42;
