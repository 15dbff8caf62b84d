// META: title=A .sub. script served over HTTPS: substitutions made for the script's own request
"use strict";

test(() => {
  assert_equals(location.protocol, "https:");
  assert_equals("{{location[scheme]}}", "https");
  assert_equals("{{location[server]}}", location.origin);
  assert_equals("{{location[host]}}", location.host);
  assert_equals("{{location[port]}}", "8443");
  assert_equals("{{location[pathname]}}", location.pathname.replace(/\.html$/, ".js"));
  assert_equals("{{location[query]}}", "?", "the script's URL has no query");
}, "location[...] is the script's URL");

test(() => {
  assert_array_equals(["{{ports[http][0]}}", "{{ports[http][1]}}", "{{ports[https][0]}}", "{{ports[https][1]}}"],
    ["8000", "8001", "8443", "8444"]);
  assert_equals("{{hosts[alt][www]}}", "www.not-web-platform.test");
}, "ports and hosts over HTTPS");
