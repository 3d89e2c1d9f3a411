"""Mutants of one module: small AST changes, each a plausible slip of a programmer.

A mutant is found by walking the module's syntax tree in a fixed order, so "the k-th mutation
point of this file" names the same change every time: :func:`points` lists them and
:func:`apply` rewrites the source with one of them (``ast.unparse``, so comments and layout are
lost — harmless, the mutant only has to run). Annotations, docstrings and ``TYPE_CHECKING``
blocks are never mutated: a change there changes nothing.

The operators:

- comparisons: ``==``/``!=``, ``<``/``<=``, ``>``/``>=``, ``in``/``not in``, ``is``/``is not``;
- ``and``/``or``; ``not x`` → ``x``;
- arithmetic ``+``/``-`` and ``*``/``/``;
- constants ``True``/``False``, an integer ``n`` → ``n + 1``;
- a call statement, a ``raise`` or a ``continue``/``break`` replaced by ``pass``;
- ``return x`` → ``return None``;
- a keyword argument given a variable → given ``None`` (a filter forgotten on its way down), and
  an argument named for a workspace scope (``scope``, ``filters.workspaces``), positional or
  keyword, → ``None``;
- in sequences named ``ordered`` (see :mod:`tools.mutation.targets`): two neighbours swapped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
}
_SYMBOL = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True)
class Point:
    """One mutation: where (line, enclosing qualified name) and what, by its index in the walk."""

    index: int
    line: int
    scope: str
    description: str
    end_line: int = 0  # the last line of the mutated node (a call spread over several lines)


class _Walker:
    """Walks a module in a fixed order, yielding (node, scope, description, change) per mutation."""

    def __init__(self, only: tuple[str, ...], ordered: tuple[str, ...]) -> None:
        self.only = only
        self.ordered = ordered

    def wanted(self, scope: str) -> bool:
        return not self.only or any(scope == o or scope.startswith(o + ".") for o in self.only)

    def module(self, tree: ast.Module) -> Iterator[tuple[ast.AST, str, str, object]]:
        yield from self.body(tree.body, "")

    def body(self, stmts: list[ast.stmt], scope: str) -> Iterator[tuple[ast.AST, str, str, object]]:
        for i, stmt in enumerate(stmts):
            if (
                i == 0
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                continue  # a docstring
            yield from self.stmt(stmt, scope)

    def stmt(self, node: ast.stmt, scope: str) -> Iterator[tuple[ast.AST, str, str, object]]:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            inner = f"{scope}.{node.name}" if scope else node.name
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for default in [*node.args.defaults, *node.args.kw_defaults]:
                    if default is not None and self.wanted(inner):
                        yield from self.expr(default, inner)
            yield from self.body(node.body, inner)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            return
        name = _assigned_name(node)
        here = scope or name or ""
        if not self.wanted(here):
            # A module-level statement outside ``only``; a function inside it may still be wanted.
            for child in _child_bodies(node):
                yield from self.body(child, scope)
            return
        if (
            name in self.ordered
            and isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(node.value, ast.Tuple | ast.List)
        ):
            for i in range(len(node.value.elts) - 1):
                yield node, here, f"swap elements {i} and {i + 1} of {name}", ("swap", i)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
            yield node, here, f"remove the call {_short(node.value)}", "pass"
        elif isinstance(node, ast.Raise):
            yield node, here, "remove the raise", "pass"
        elif isinstance(node, ast.Continue | ast.Break):
            yield node, here, f"remove the {type(node).__name__.lower()}", "pass"
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            yield node, here, f"return None instead of {_short(node.value)}", "return-none"
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns", "type_comment"):
                continue
            if isinstance(value, ast.expr):
                yield from self.expr(value, here)
            elif isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    yield from self.body(value, scope)
                else:
                    for item in value:
                        if isinstance(item, ast.expr):
                            yield from self.expr(item, here)
                        elif isinstance(item, ast.excepthandler | ast.match_case):
                            yield from self.body(item.body, scope)
                        elif isinstance(item, ast.withitem):
                            yield from self.expr(item.context_expr, here)
                        elif isinstance(item, ast.comprehension):
                            yield from self.expr(item.iter, here)
                            for cond in item.ifs:
                                yield from self.expr(cond, here)

    def expr(self, node: ast.expr, scope: str) -> Iterator[tuple[ast.AST, str, str, object]]:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                swap = _COMPARE_SWAP.get(type(op))
                if swap:
                    yield node, scope, f"{_SYMBOL[type(op)]} → {_SYMBOL[swap]}", ("cmp", i, swap)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield node, scope, f"{_SYMBOL[type(node.op)]} → {_SYMBOL[other]}", ("bool", other)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, scope, f"drop the not in not {_short(node.operand)}", "drop-not"
        elif (
            isinstance(node, ast.BinOp)
            and type(node.op) in _BINOP_SWAP
            and not _is_string(node.left)
            and not _is_string(node.right)
        ):
            swap = _BINOP_SWAP[type(node.op)]
            yield node, scope, f"{_SYMBOL[type(node.op)]} → {_SYMBOL[swap]}", ("binop", swap)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                yield node, scope, f"{node.value} → {not node.value}", ("const", not node.value)
            elif isinstance(node.value, int):
                yield node, scope, f"{node.value} → {node.value + 1}", ("const", node.value + 1)
        elif isinstance(node, ast.Call):
            for i, kw in enumerate(node.keywords):
                if kw.arg and (isinstance(kw.value, ast.Name) or _names_a_scope(kw.value)):
                    yield node, scope, f"{kw.arg}={ast.unparse(kw.value)} → {kw.arg}=None", ("kw-none", i)
            for i, arg in enumerate(node.args):
                if _names_a_scope(arg):
                    yield node, scope, f"argument {ast.unparse(arg)} → None", ("arg-none", i)
        elif isinstance(node, ast.JoinedStr):
            return  # f-strings: messages, not rules
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                yield from self.expr(child, scope)
            elif isinstance(child, ast.comprehension):
                yield from self.expr(child.iter, scope)
                for cond in child.ifs:
                    yield from self.expr(cond, scope)
            elif isinstance(child, ast.keyword):
                yield from self.expr(child.value, scope)


def points(source: str, *, only: tuple[str, ...] = (), ordered: tuple[str, ...] = ()) -> list[Point]:
    """Every mutation point of ``source`` (restricted to the names in ``only`` when given)."""
    tree = ast.parse(source)
    missing = [name for name in only if not _defines(tree, name)]
    if missing:
        raise LookupError(
            f"not defined in the module any more: {', '.join(missing)} (update tools/mutation/targets.py)"
        )
    walker = _Walker(only, ordered)
    return [
        Point(i, getattr(node, "lineno", 0), scope, description, getattr(node, "end_lineno", None) or 0)
        for i, (node, scope, description, _) in enumerate(walker.module(tree))
    ]


def apply(source: str, index: int, *, only: tuple[str, ...] = (), ordered: tuple[str, ...] = ()) -> str:
    """The source with mutation ``index`` applied."""
    tree = ast.parse(source)
    for i, (node, _, _, change) in enumerate(_Walker(only, ordered).module(tree)):
        if i == index:
            _change(tree, node, change)
            return ast.unparse(ast.fix_missing_locations(tree))
    raise IndexError(index)


def _change(tree: ast.Module, node: ast.AST, change: object) -> None:
    if change == "pass":
        _replace_stmt(tree, node, ast.Pass())
    elif change == "return-none":
        assert isinstance(node, ast.Return)
        node.value = ast.Constant(None)
    elif change == "drop-not":
        assert isinstance(node, ast.UnaryOp)
        _replace_expr(tree, node, node.operand)
    elif isinstance(change, tuple) and change[0] == "cmp":
        assert isinstance(node, ast.Compare)
        node.ops[change[1]] = change[2]()
    elif isinstance(change, tuple) and change[0] == "bool":
        assert isinstance(node, ast.BoolOp)
        node.op = change[1]()
    elif isinstance(change, tuple) and change[0] == "binop":
        assert isinstance(node, ast.BinOp)
        node.op = change[1]()
    elif isinstance(change, tuple) and change[0] == "const":
        assert isinstance(node, ast.Constant)
        node.value = change[1]
    elif isinstance(change, tuple) and change[0] == "kw-none":
        assert isinstance(node, ast.Call)
        node.keywords[change[1]].value = ast.Constant(None)
    elif isinstance(change, tuple) and change[0] == "arg-none":
        assert isinstance(node, ast.Call)
        node.args[change[1]] = ast.Constant(None)
    elif isinstance(change, tuple) and change[0] == "swap":
        assert isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Tuple | ast.List)
        elts, i = node.value.elts, change[1]
        elts[i], elts[i + 1] = elts[i + 1], elts[i]
    else:
        raise ValueError(change)


def _names_a_scope(node: ast.expr) -> bool:
    """A variable or attribute named for a workspace scope (``scope``, ``filters.workspaces``):
    passed as an argument, it is a filter that a slip can drop on its way down, positional or not."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "scope" in name or "workspace" in name


def _replace_stmt(tree: ast.Module, old: ast.AST, new: ast.stmt) -> None:
    for parent in ast.walk(tree):
        for _field, value in ast.iter_fields(parent):
            if isinstance(value, list) and any(v is old for v in value):
                value[next(i for i, v in enumerate(value) if v is old)] = ast.copy_location(new, old)
                return
    raise LookupError("statement not found")


def _replace_expr(tree: ast.Module, old: ast.expr, new: ast.expr) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[next(i for i, v in enumerate(value) if v is old)] = new
                return
    raise LookupError("expression not found")


def _assigned_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _child_bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    return [v for _, v in ast.iter_fields(node) if isinstance(v, list) and v and isinstance(v[0], ast.stmt)]


def _defines(tree: ast.Module, qualname: str) -> bool:
    scope: list[ast.stmt] = tree.body
    parts = qualname.split(".")
    for n, part in enumerate(parts):
        found = next((s for s in scope if getattr(s, "name", None) == part or _assigned_name(s) == part), None)
        if found is None:
            return False
        if n < len(parts) - 1:
            scope = getattr(found, "body", [])
    return True


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
