"""A running ``ledger serve`` lends its loaded model to CLI calls on the same database.

Loading the model takes seconds (e5: ~2 s on an idle host, 10 s on a busy one), so a CLI
``find`` that loaded it would take that long every time. Once ``ledger serve`` has its model it
listens on a Unix socket named after its read models' file (:class:`ModelLender`), and ``find``
from the CLI asks it for the query's embedding (:func:`borrow_query_vector`: one line of JSON
each way, a few milliseconds) instead of loading the model; it still searches on its own
connection. No serve running, one that does not answer in time, or one with another model: the
CLI loads the model itself, as before.

The socket lives in a directory only this user can enter (``$XDG_RUNTIME_DIR``, else the temp
dir, then ``fact-ledger-<uid>``), so no other user can connect; it embeds query texts and never
touches the database. Several servers on one database: the first one to start lends.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

from fact_ledger.server.config import runtime_base

log = logging.getLogger("fact_ledger.model_lender")

MAX_REQUEST = 1 << 20  # bytes of one request line (a query is far shorter)
ANSWER_TIMEOUT_S = 2.0  # a CLI waits this long for an embedding before it loads the model itself


def socket_path(views_path: str) -> Path | None:
    """The socket for the read models at ``views_path`` (None: in memory, or no private directory)."""
    if not views_path or views_path == ":memory:":
        return None
    folder = runtime_base() / f"fact-ledger-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # not ours alone: lend nothing, borrow nothing
    key = hashlib.sha256(os.path.realpath(views_path).encode("utf-8")).hexdigest()[:24]
    return folder / f"{key}.sock"


def borrow_query_vector(views_path: str, query: str) -> tuple[str, bytes] | None:
    """``(model_id, embedding)`` of ``query`` (as :func:`projections.vectors.query_text` makes
    it) from a serve on the same read models, or None when none answers."""
    path = socket_path(views_path)
    if path is None or not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(ANSWER_TIMEOUT_S)
            conn.connect(str(path))
            conn.sendall(json.dumps({"query": query}).encode("utf-8") + b"\n")
            answer = json.loads(_read_line(conn))
        return str(answer["model_id"]), base64.b64decode(answer["vector"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_line(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_REQUEST:
            break
    return b"".join(chunks)


class ModelLender:
    """A thread answering query embeddings on the socket of ``views_path`` with ``model``."""

    def __init__(self, views_path: str, model: Any, query_text: Any) -> None:
        self.model, self.query_text = model, query_text
        self.path = socket_path(views_path)
        self._server: socket.socket | None = None
        self._inode: int | None = None

    def start(self) -> bool:
        """Listen (False: no private directory, or another live server lends already)."""
        if self.path is None:
            return False
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if self.path.exists():
                if _answers(self.path):
                    server.close()
                    return False
                self.path.unlink()  # left by a server that died
            server.bind(str(self.path))
            server.listen(8)
            self._inode = self.path.stat().st_ino
        except OSError as exc:
            server.close()
            log.debug("model lender not started: %s", exc)
            return False
        self._server = server
        threading.Thread(target=self._serve, name="model-lender", daemon=True).start()
        return True

    def _serve(self) -> None:
        server = self._server
        while server is not None:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the server stops
                return
            with conn:
                try:
                    conn.settimeout(ANSWER_TIMEOUT_S)
                    request = json.loads(_read_line(conn))
                    vector = self.model.embed_query(self.query_text(str(request["query"])))
                    answer = {"model_id": self.model.model_id, "vector": base64.b64encode(vector).decode("ascii")}
                    conn.sendall(json.dumps(answer).encode("utf-8") + b"\n")
                except Exception:  # a bad request or a model hiccup: that caller loads its own model
                    log.debug("model lender: request failed", exc_info=True)

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None or self.path is None:
            return
        with contextlib.suppress(OSError):  # only our own socket: another server may have taken the name
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the lender's thread
        server.close()


def _answers(path: Path) -> bool:
    """Whether a server answers connections on ``path``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(ANSWER_TIMEOUT_S)
            conn.connect(str(path))
        return True
    except OSError:
        return False
