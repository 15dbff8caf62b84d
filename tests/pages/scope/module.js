import { half } from "./lib.js";
spin(half(4));
done("module");
