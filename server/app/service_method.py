"""A facade name that is its service's method: each operation is declared once, where it is built.

``LedgerApp.confirm = ServiceMethod("governance", Governance.confirm)`` gives the facade the
service's own method (its signature, its docstring, its defaults), so the MCP routes, the CLI and
the console call ``app.confirm`` while the operation's parameters are written only on
``Governance.confirm``. ``storage_call=True`` answers through :meth:`Storage.call` as a facade
method marked ``@storage_call`` does (degraded mode, ``unavailable``, a backed-up write), for the
services that do not mark their own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class ServiceMethod:
    def __init__(self, service: str, function: Callable[..., Any], *, storage_call: bool = False) -> None:
        self.service = service
        self.function = function
        self.storage_call = storage_call
        self.name = function.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.function.__name__:  # one name from the service to every entry point
            raise TypeError(f"{owner.__name__}.{name} would answer {self.function.__qualname__}: name them alike")
        self.name = name

    def __get__(self, app: Any, owner: type | None = None) -> Callable[..., Any]:
        if app is None:  # on the class: the service's function, for the routes' signature checks
            return self.function
        method: Callable[..., Any] = getattr(getattr(app, self.service), self.name)
        if not self.storage_call:
            return method
        storage, name = app.storage, self.name

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            return storage.call(name, lambda: method(*args, **kwargs), request=(args, kwargs))

        return call
