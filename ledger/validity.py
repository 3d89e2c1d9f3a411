"""Until when a superseded value was in force: the rule both read models that answer "what was
true at event time T" hold (the memories' ``valid_to``, the time-travel states).

A supersession chain is every memory that reaches one head (the memory that is not superseded)
through ``superseded_by``. A loser was in force from its own event time until the next value of
its chain took over: the smallest start after its own among the values that were in force at all,
and at the latest its own winner's start. A value that arrives late, older than those already
there ("7070 since Nov 1" recorded after "8080 since Nov 10" and "9090 since Nov 20"), is
superseded by the head but was true only until Nov 10; one that lands between two (since Nov 15)
ends the earlier one (8080 until Nov 15). A loser whose winner is older than itself (the user
confirmed the older value) never was in force: its interval is empty, ending where it starts
(:func:`not_before`: an end before the start read as a bar drawn backwards, "valid from 13:54:59
until 13:54:57"), and it cuts no other value short.
"""

from __future__ import annotations

from collections.abc import Iterable

CHAIN_LIMIT = 512  # memories of one chain looked at by a projector, nearest its head first


def chain_ends(head: int, head_from: str, losers: Iterable[tuple[int, str, int | None]]) -> dict[int, str]:
    """``{loser: valid_to}`` for the chain under ``head`` (whose event time is ``head_from``);
    ``losers``: ``(memory, its event time, the memory that superseded it)``."""
    losers = list(losers)
    starts = {head: head_from, **{m: since for m, since, _ in losers}}
    winner_from = {m: starts.get(w, head_from) if w is not None else head_from for m, _, w in losers}
    in_force = sorted([head_from, *(starts[m] for m, w in winner_from.items() if w > starts[m])])
    ends: dict[int, str] = {}
    for memory, since, _ in losers:
        until = winner_from[memory]
        later = [v for v in in_force if v > since] if until > since else []
        ends[memory] = not_before(since, min(until, later[0]) if later else until)  # never past its winner's start
    return ends


def not_before(since: str, until: str) -> str:
    """A value's end as stored and shown: at the earliest its own start (an empty interval), for
    an end that came from an older winner, a retirement dated before it, or a start corrected later."""
    return max(since, until)
