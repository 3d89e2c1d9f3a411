"""Who may talk to the console: the per-run token, the Host check, same-origin and CSRF.

The console listens on 127.0.0.1 only, but that alone does not keep out other local users (who
can guess the port), a web page in the person's own browser (which can send requests to any
port) or DNS rebinding (a hostile name that resolves to 127.0.0.1). So, as Jupyter does:

- a random token per run, printed in the URL at start; the first request that carries it gets
  it back as an HttpOnly, SameSite=Strict cookie and is redirected to the same URL without it
  (so a shared link carries the view, never the key);
- the Host header must be the console's own loopback address and port (DNS rebinding);
  ``localhost:PORT`` is accepted and sent on to ``127.0.0.1:PORT``, where the key cookie is;
- a request that a browser marks as coming from another site (``Sec-Fetch-Site``) or whose
  ``Origin`` is not the console's own is refused;
- every POST carries a per-run CSRF token in its form.

The decisions are pure functions over headers so they are tested without a server.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

LOOPBACK_NAMES = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class Guard:
    """The secrets of one console run and the address it answers on."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def cookie_name(self) -> str:
        return f"ledger_console_{self.port}"  # two consoles on two ports keep their own key

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(f"http://{name}:{self.port}" for name in LOOPBACK_NAMES)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}?token={self.token}"

    def host_refusal(self, host: str | None) -> str | None:
        """The Host header must name this console: another name may be a rebinding attack."""
        if host not in {f"{name}:{self.port}" for name in LOOPBACK_NAMES}:
            return f"Host {host!r} is not this console's address"
        return None

    def canonical(self, host: str | None, method: str, path: str, query: str) -> str | None:
        """Where a page asked for by another of the console's names (``localhost:PORT``) lives.

        The key cookie belongs to the address the token was opened on, and a browser keeps
        cookies per host name: at ``localhost`` it has none for ``127.0.0.1``. So a GET at
        ``localhost:PORT`` goes to the same path at ``127.0.0.1:PORT`` (the printed address),
        where the key is — or, with ``?token=``, where it will be set. The Host check has passed
        already: no other name gets here."""
        if host is None or host == f"{LOOPBACK_NAMES[0]}:{self.port}" or method not in ("GET", "HEAD"):
            return None
        return f"http://{LOOPBACK_NAMES[0]}:{self.port}{path}" + (f"?{query}" if query else "")

    def origin_refusal(self, origin: str | None, fetch_site: str | None) -> str | None:
        """Refuse what a browser says came from another site or origin."""
        if fetch_site is not None and fetch_site not in ("same-origin", "none"):
            return f"cross-site request refused (Sec-Fetch-Site: {fetch_site})"
        if origin is not None and origin not in self.origins:
            return f"cross-origin request refused (Origin: {origin})"
        return None

    def token_ok(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    def csrf_ok(self, presented: Any) -> bool:
        return isinstance(presented, str) and hmac.compare_digest(presented.encode(), self.csrf.encode())


def without_token(path: str, query: str) -> str:
    """The same URL with the ``token`` parameter removed (where the first visit is redirected)."""
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "token"]
    return path + ("?" + urlencode(kept) if kept else "")


SECURITY_HEADERS = {
    # Scripts and styles from the console only; never framed; the token never leaks as a referrer.
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # no-referrer would make POSTs send Origin: null
    "cache-control": "no-store",
}
