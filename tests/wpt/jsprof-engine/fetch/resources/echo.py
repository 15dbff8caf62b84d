# Echoes a request back, and plays the server's side of a CORS exchange as its query says:
#
#   acao=VALUE       Access-Control-Allow-Origin: VALUE ("origin": the request's Origin)
#   acac             Access-Control-Allow-Credentials: true
#   methods=M,...    Access-Control-Allow-Methods on OPTIONS
#   headers=H,...    Access-Control-Allow-Headers on OPTIONS
#   max_age=N        Access-Control-Max-Age on OPTIONS
#   preflight_status=N   the status of the OPTIONS answer (200)
#   preflight_redirect   OPTIONS is answered with a 302 to this same URL
#   redirect=N&to=URL    any other method is answered with a redirect
#   delay=MS         any other method is answered after MS milliseconds
#   token=UUID       preflights (OPTIONS with Access-Control-Request-Method) are counted in the stash; the count and the last one's
#                    Access-Control-Request-Method/-Headers come back as X-Preflights, X-ACRM
#                    and X-ACRH
#
# Any other request gets its own body back, with X-Method, X-Content-Type, X-Origin, X-Accept
# and X-Body-Hex (the body's bytes in hex) saying what came (all exposed to CORS).
import time

EXPOSED = b"X-Method, X-Content-Type, X-Origin, X-Accept, X-Body-Hex, X-Preflights, X-ACRM, X-ACRH"


def main(request, response):
    q = request.GET
    origin = request.headers.get(b"Origin")
    headers = []
    acao = q.first(b"acao", None)
    if acao is not None:
        headers.append((b"Access-Control-Allow-Origin", (origin or b"") if acao == b"origin" else acao))
    if b"acac" in q:
        headers.append((b"Access-Control-Allow-Credentials", b"true"))
    token = q.first(b"token", None)
    stash = request.server.stash

    if request.method == "OPTIONS" and b"Access-Control-Request-Method" in request.headers:
        if token is not None:
            record = stash.take(token) or {"count": 0}
            record["count"] += 1
            record["acrm"] = request.headers.get(b"Access-Control-Request-Method", b"")
            record["acrh"] = request.headers.get(b"Access-Control-Request-Headers", b"")
            stash.put(token, record)
        if b"preflight_redirect" in q:
            headers.append((b"Location", request.url.encode("utf-8")))
            return 302, headers, b""
        for param, name in ((b"methods", b"Access-Control-Allow-Methods"),
                            (b"headers", b"Access-Control-Allow-Headers"),
                            (b"max_age", b"Access-Control-Max-Age")):
            if param in q:
                headers.append((name, q.first(param)))
        return int(q.first(b"preflight_status", b"200")), headers, b""

    if b"redirect" in q:
        headers.append((b"Location", q.first(b"to")))
        return int(q.first(b"redirect")), headers, b""

    if b"delay" in q:
        time.sleep(int(q.first(b"delay")) / 1000)

    record = {"count": 0, "acrm": b"", "acrh": b""}
    if token is not None:
        stored = stash.take(token)
        if stored is not None:
            record = stored
            stash.put(token, stored)
    headers += [
        (b"Content-Type", b"application/octet-stream"),
        (b"X-Method", request.method.encode("ascii")),
        (b"X-Content-Type", request.headers.get(b"Content-Type", b"")),
        (b"X-Origin", origin or b""),
        (b"X-Accept", request.headers.get(b"Accept", b"")),
        # (Bodies of up to 4 KiB: a header is no place for more.)
        (b"X-Body-Hex", request.body.hex().encode("ascii") if len(request.body) <= 4096 else b"too long"),
        (b"X-Preflights", str(record["count"]).encode("ascii")),
        (b"X-ACRM", record.get("acrm", b"")),
        (b"X-ACRH", record.get("acrh", b"")),
        (b"Access-Control-Expose-Headers", EXPOSED),
    ]
    return 200, headers, request.body
