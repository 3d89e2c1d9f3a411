"""Event payloads as agents see them: every id one they can pass back to a tool.

Events name what they touch by stream (a UUID: ``"memory": "01a2…"``), which no tool accepts.
``history`` and ``audit`` show payloads with those references as the ids the tools take
(``memory_id``, ``conflict_id``, ``judgment_id``; a retraction's ``ref_id`` and ``by_id``; a
promotion's ``long_term_id`` and a promoted memory's ``promoted_from_id``; a change's ``superseded_ids``;
judgment ``pins`` keyed by memory id; a set's opening ``verdict`` with ``leader_id``), and
each audited event names the memory (a working note's too) or conflict its stream belongs to. A stream that no read
model knows (it cannot happen on a consistent ledger) keeps its original key and value.
"""

from __future__ import annotations

import re
from typing import Any

from fact_ledger.projections.audit import stream_owner

# a promotion's long-term memory (``long_term``) and the note a promoted memory came from
# (``promoted_from``) are memories too: shown as ``long_term_id`` and ``promoted_from_id``
MEMORY_KEYS = ("memory", "loser", "winner", "left", "right", "member", "by", "ref", "long_term", "promoted_from")
WRITER = re.compile(r"#0\b")  # how a set's opening verdict names the writer, which had no id yet


class StreamIds:
    """Stream UUID → ``(kind, id)`` for one answer, looked up once per stream."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._known: dict[str, tuple[str, int] | None] = {}

    def of(self, stream: Any) -> tuple[str, int] | None:
        if not isinstance(stream, str):
            return None
        if stream not in self._known:
            self._known[stream] = stream_owner(self.conn, stream)
        return self._known[stream]

    def payload(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload with stream references replaced by passable ids."""
        out: dict[str, Any] = {}
        for key, value in payload.items():
            found = self.of(value) if key in (*MEMORY_KEYS, "conflict", "judgment") else None
            if found is not None:
                out[f"{key}_id"] = found[1]
            elif key == "members" and isinstance(value, (list, tuple)):  # a claim set's members and their values
                out[key] = [self.payload(m) if isinstance(m, dict) else m for m in value]
            elif key == "superseded" and isinstance(value, (list, tuple)):  # the memories a change superseded
                found_all = [self.of(s) for s in value]
                if all(f is not None for f in found_all):
                    out["superseded_ids"] = [f[1] for f in found_all if f is not None]
                else:
                    out[key] = value
            elif key == "pins" and isinstance(value, dict):
                out[key] = {str(k[1]) if (k := self.of(s)) else s: v for s, v in value.items()}
            elif key == "verdict" and isinstance(value, dict):
                out[key] = self.verdict(value, payload.get("members"))
            else:
                out[key] = value
        return out

    def verdict(self, verdict: dict[str, Any], members: Any) -> dict[str, Any]:
        """A claim set's opening verdict: its ``leader`` stream as ``leader_id``, and the writer
        (the last member; ``#0`` in the reasons: it had no id when the verdict was taken) by its id."""
        out = dict(verdict)
        if "leader" in out:
            found = self.of(out.pop("leader"))
            out["leader_id"] = found[1] if found else None
        last = members[-1] if isinstance(members, (list, tuple)) and members else None
        found = self.of(last.get("memory")) if isinstance(last, dict) else None
        if found is not None and isinstance(out.get("reasons"), list):
            out["reasons"] = [WRITER.sub(f"#{found[1]}", r) if isinstance(r, str) else r for r in out["reasons"]]
        return out

    def owner(self, stream: str) -> dict[str, int]:
        """``{"memory_id": …}`` or ``{"conflict_id": …}`` for an event's own stream."""
        found = self.of(stream)
        return {found[0]: found[1]} if found else {}
