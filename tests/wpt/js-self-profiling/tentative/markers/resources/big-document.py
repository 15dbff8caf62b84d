# A document large enough that parsing it takes a good fraction of a second: `n` elements,
# with the isolation headers its cross-origin-isolated parent requires of it.
def main(request, response):
    n = int(request.GET.first(b"n", b"100000"))
    rows = "".join(f"<div class=r{i}>row {i}</div>\n" for i in range(n))
    headers = [
        ("Content-Type", "text/html"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Embedder-Policy", "require-corp"),
    ]
    return headers, f"<!doctype html><title>big</title>\n{rows}"
