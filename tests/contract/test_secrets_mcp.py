"""Secrets over the real transports: ``ledger serve`` through the mcp stdio client, and the CLI.

A credential in ``remember`` or ``update`` is refused with ``invalid_input`` naming its kind and
span, and the log does not move; ``on_secret: "mask"`` (``--on-secret mask``) stores the typed
placeholder. The bytes of the ledger's files never hold the secret.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer
from tests.test_secrets import SHAPES

# one shape of each kind the table holds (the first), enough to cross the wire
ONE_OF_EACH = list({kind: (kind, around, secret) for kind, around, secret in reversed(SHAPES)}.values())


def _bytes_of(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.iterdir()) if p.is_file() and p.suffix != ".log")


def test_remember_refuses_each_kind_over_stdio_and_writes_nothing(srv: LedgerServer) -> None:
    head = srv.events()
    for kind, around, secret in ONE_OF_EACH:
        reply = srv.memory("remember", {"content": around.format(secret), "subject": "ops"})
        start = around.index("{}")
        assert reply.code == "invalid_input", reply.body
        assert reply.error["field"] == "content"
        assert (reply.error["kind"], reply.error["start"], reply.error["end"]) == (kind, start, start + len(secret))
        assert reply.error["secrets"] == [
            {"field": "content", "kind": kind, "start": start, "end": start + len(secret)}
        ]
        assert secret not in json.dumps(reply.body, ensure_ascii=False)
    assert srv.events() == head
    stored = _bytes_of(srv.db)
    assert all(secret.encode() not in stored for _, _, secret in ONE_OF_EACH)


def test_mask_over_stdio_stores_the_placeholder(srv: LedgerServer) -> None:
    kind, around, secret = next(s for s in SHAPES if s[0] == "connection-password")
    reply = srv.memory("remember", {"content": around.format(secret), "on_secret": "mask"})
    assert reply.ok and reply["secrets_masked"][0]["kind"] == kind
    memory = srv.memory("read", {"memory_id": reply["memory_id"]})["memory"]
    assert memory["content"] == around.format("[secret:connection-password]")
    token = next(s[2] for s in SHAPES if s[0] == "slack-token")
    refused = srv.memory("update", {"memory_id": reply["memory_id"], "metadata": {"bot": token}})
    assert refused.code == "invalid_input" and refused.error["field"] == "metadata.bot"
    masked = srv.memory("update", {"memory_id": reply["memory_id"], "tags": [token], "on_secret": "mask"})
    assert masked.ok and masked["version"] == 2
    assert srv.memory("read", {"memory_id": reply["memory_id"]})["memory"]["tags"] == ["[secret:slack-token]"]
    assert srv.memory("remember", {"content": "x", "on_secret": "allow"}).code == "invalid_input"
    stored = _bytes_of(srv.db)
    assert secret.encode() not in stored and token.encode() not in stored


def test_the_cli_refuses_then_masks_with_on_secret(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    kind, around, secret = next(s for s in SHAPES if s[0] == "aws-access-key")
    text = around.format(secret)
    refused = ledger_cli("remember", text, "--db", db, "--json", env={"LEDGER_CREATE": "1"})
    assert refused.returncode == 1
    error = json.loads(refused.stdout or refused.stderr)["error"]
    assert (error["code"], error["kind"], error["field"]) == ("invalid_input", kind, "content")
    masked = ledger_cli("remember", text, "--on-secret", "mask", "--db", db, "--json", check=True)
    memory_id = json.loads(masked.stdout)["memory_id"]
    updated = ledger_cli("update", str(memory_id), f"rotated to {secret}", "--db", db, "--json")
    assert updated.returncode == 1
    ledger_cli("update", str(memory_id), f"rotated to {secret}", "--on-secret", "mask", "--db", db, check=True)
    read = json.loads(ledger_cli("read", str(memory_id), "--db", db, "--json", check=True).stdout)
    assert read["memory"]["content"] == "rotated to [secret:aws-access-key]"
    assert read["memory"]["version"] == 2
    assert secret.encode() not in _bytes_of(Path(db))


def test_a_session_id_or_workspace_that_holds_a_credential_is_refused(srv: LedgerServer) -> None:
    """A conversation's id and a workspace's name stay in the log for good (an erasure keeps
    both: they name the conversation and the project, not what was said), so a credential there
    could never be taken out again: refused, whatever ``on_secret`` says, and never repeated."""
    token = next(s[2] for s in SHAPES if s[0] == "github-token")
    note = srv.memory("remember", {"content": "trying port 8081", "tier": "working", "session_id": "chat-7"})
    fact = srv.memory("remember", {"content": "The build cache lives on disk 3"})
    assert note.ok and fact.ok, (note.body, fact.body)
    head = srv.events()
    calls = [
        ("remember", {"content": "The staging host is blue", "session_id": token, "turn": 1}),
        ("remember", {"content": "maybe port 8082", "tier": "working", "session_id": token, "on_secret": "mask"}),
        ("remember", {"content": "The staging host is green", "workspace": f"ops-{token}"}),
        ("update", {"memory_id": fact["memory_id"], "content": "The build cache lives on disk 4", "session_id": token}),
        ("reinforce", {"memory_id": note["memory_id"], "signal": "user_affirmed", "turn": 2, "session_id": token}),
    ]
    for action, data in calls:
        reply = srv.memory(action, data)
        field = "workspace" if "workspace" in data else "session_id"
        assert reply.code == "invalid_input", (action, reply.body)
        assert (reply.error["field"], reply.error["kind"]) == (field, "github-token"), reply.body
        assert token not in json.dumps(reply.body, ensure_ascii=False)
    assert srv.events() == head
    assert token.encode() not in _bytes_of(srv.db)


def test_an_alias_that_holds_a_credential_is_refused(srv: LedgerServer) -> None:
    """An alias and the name it stands for (of a workspace or of an entity) stay in the log for
    good, the alias also in its stream's id, and an erasure takes neither: a credential in either
    is refused before anything is decided, and never repeated."""
    token = next(s[2] for s in SHAPES if s[0] == "github-token")
    assert srv.memory("remember", {"content": "The build cache lives on disk 3", "workspace": "ops"}).ok
    head = srv.events()
    calls = [
        ("accept", {"alias": f"ops-{token}", "canonical": "ops"}, "alias"),
        ("reject", {"alias": "ops2", "canonical": token}, "canonical"),
        ("accept_alias", {"alias": f"Jon {token}", "canonical": "John"}, "alias"),
        ("reject_alias", {"alias": "Jon", "canonical": f"John {token}"}, "canonical"),
    ]
    for action, data, field in calls:
        reply = srv.call("memory_govern", action, {**data, "authorized": True})
        assert reply.code == "invalid_input", (action, reply.body)
        assert (reply.error["field"], reply.error["kind"]) == (field, "github-token"), reply.body
        assert token not in json.dumps(reply.body, ensure_ascii=False)
    assert srv.events() == head
    assert token.encode() not in _bytes_of(srv.db)
    # the same names without the credential are recorded
    assert srv.call("memory_govern", "accept", {"alias": "ops-team", "canonical": "ops", "authorized": True}).ok


def test_a_refusal_that_quotes_what_was_sent_never_repeats_a_credential(srv: LedgerServer, tmp_path: Path) -> None:
    """A bad time, an unknown type or action, an ignored field's name are quoted back in the
    answer; a credential pasted there (a token in the wrong field) was repeated whole. It is named
    by its kind, as a refused write's is."""
    token = next(s[2] for s in SHAPES if s[0] == "github-token")
    said = [
        srv.memory("remember", {"content": "The cache lives on disk 3", "event_time": token}),
        srv.memory("find", {"query": "cache", "as_of_recorded": token}),
        srv.call("memory_review", "audit", {"type": token}),
        srv.memory(token, {}),
    ]
    for reply in said:
        assert reply.code == "invalid_input", reply.body
        assert "[secret:github-token]" in reply.error["message"], reply.body
    # past the quote's length the cut fell inside the token and showed its head
    cut = srv.memory("find", {"query": "cache", "as_of_event_time": f"at {token}"})
    assert cut.code == "invalid_input" and cut.error["message"].endswith("'at…'"), cut.body
    aws = next(s[2] for s in SHAPES if s[0] == "aws-access-key")
    undo = srv.call("memory_govern", "undo", {"change_id": aws, "authorized": True})
    assert undo.code == "not_found" and "[secret:aws-access-key]" in undo.error["message"], undo.body
    assert aws.lower() not in json.dumps(undo.body)  # a change id is matched in lower case, never said so
    ignored = srv.memory("find", {"query": "cache", token: 1})
    assert ignored.ok and any("[secret:github-token]" in n for n in ignored["notices"]), ignored.body
    assert all(token[:12] not in json.dumps(reply.body, ensure_ascii=False) for reply in [*said, cut, ignored])

    db = str(tmp_path / "ledger.db")
    for fmt in ((), ("--json",)):
        done = ledger_cli("find", "cache", "--as-of-event-time", token, "--db", db, *fmt, env={"LEDGER_CREATE": "1"})
        assert done.returncode == 1 and "[secret:github-token]" in done.stdout + done.stderr, done
        assert token not in done.stdout + done.stderr
