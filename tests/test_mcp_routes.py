"""The route table against the facade: every advertised action, view and task is bound when the
server starts, to a method that takes every field its edge model validates."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.routes import TOOLS, Route, bind, unaccepted
from fact_ledger.server.mcp.tool_schemas import tool_schemas

ROUTES = [
    (spec.name, name, route)
    for spec in TOOLS.values()
    for name, route in spec.routes.items()
    if route.method is not None
]


@pytest.fixture(scope="module")
def facade(tmp_path_factory: pytest.TempPathFactory) -> Any:
    app = LedgerApp(Settings(db=str(tmp_path_factory.mktemp("routes") / "r.db"), client="test"))
    yield app
    app.close()


@pytest.mark.parametrize(("tool", "name", "route"), ROUTES, ids=[f"{t}.{n}" for t, n, _ in ROUTES])
def test_every_route_has_a_method_that_takes_every_field(tool: str, name: str, route: Route) -> None:
    method = getattr(LedgerApp, route.method or "", None)
    assert method is not None, f"{tool} {name}: LedgerApp has no {route.method}"
    assert unaccepted(method, route) == []
    params = inspect.signature(method).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        assert route.keywords() <= set(params)


def test_the_facade_binds_every_advertised_name(facade: LedgerApp) -> None:
    """What tools/list advertises (each tool's enum of names) is exactly what is bound, plus help."""
    bound = bind(facade)
    for spec in TOOLS.values():
        advertised = tool_schemas(spec)[0]["enum"]
        assert set(advertised) == set(spec.routes)
        assert {n for n in advertised if (spec.name, n) not in bound} == {"help"}


def test_long_tasks_take_a_progress_callback(facade: LedgerApp) -> None:
    bound = bind(facade)
    long_tasks = {(t, n) for t, n, r in ROUTES if r.progress}
    assert long_tasks and all(bound[key].progress for key in long_tasks)
    assert not any(b.progress for key, b in bound.items() if key not in long_tasks)


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    class Older:
        settings = Settings(db=str(tmp_path / "x.db"))

        def remember(self, content: str, subject: str = "") -> dict[str, Any]:
            return {"ok": True}

    with pytest.raises(TypeError) as info:
        bind(Older())
    message = str(info.value)
    assert message.startswith("Older.remember (memory remember) does not accept authorization, claims, confidence")
    assert "content," not in message and "subject," not in message


def test_governed_models_hand_over_authorization_not_authorized() -> None:
    confirm = TOOLS["memory_govern"].routes["confirm"]
    assert "authorized" in confirm.model.model_fields
    assert confirm.keywords() == {"memory_id", "authorization"}
    status = TOOLS["memory"].routes["status"]
    assert status.keywords() == set()


def test_schemas_go_through_the_sdk_public_api() -> None:
    """No reach into the SDK's private tool manager (its layout may change in any release)."""
    root = Path(__file__).resolve().parent.parent / "server"
    users = [p.name for p in root.rglob("*.py") if "_tool_manager" in p.read_text(encoding="utf-8")]
    assert users == []
