import { x } from "./lib.js";
console.log("module", x, document.readyState);
import("./dynamic.js").then((m) => console.log("dynamic", m.y));
