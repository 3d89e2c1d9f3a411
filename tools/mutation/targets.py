"""What the mutation check mutates, and which tests must notice.

One entry per module. Edit this map when a rule moves or a new test file covers it:

- ``tests``: the test files run against each mutant of the module (only these, with ``-x``:
  the first failure kills the mutant). The first file runs alone first and the rest only for
  the mutants it misses: put the module's own fast unit tests first.
- ``only``: qualified names (``Class.method`` or a module-level name) to mutate; empty means
  the whole module, so functions added later are mutated without touching this map. A name
  listed here that the module no longer has is an error, never a silent skip.
- ``critical``: names where any surviving mutant fails the check whatever the score (workspace
  isolation, the arbitration rule order).
- ``fast``: part of the subset that CI runs (``--fast``); a tuple of names instead of ``True``
  mutates only those names there (a subset of ``only``), the full run mutates all of ``only``.
- ``fast_lines``: a regular expression; in ``--fast`` only the mutation points whose source
  (the mutated node's lines) matches it are run. ``SCOPE_LINES`` keeps the isolation modules'
  fast share to the statements that name a workspace scope; the full run mutates everything.
- ``ordered``: module-level sequences whose element order is a rule (each adjacent pair swapped).
- ``equivalent``: ``(name, mutation)`` pairs, as the report prints them, that change nothing a
  caller can see (say why in a comment); they are listed in the report, not run or counted. A
  third element, a fragment of the mutated source, narrows the pair to the mutations on lines
  holding it (when the same change elsewhere in the function is not equivalent).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    path: str
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()
    critical: tuple[str, ...] = ()
    ordered: tuple[str, ...] = ()
    equivalent: tuple[tuple[str, ...], ...] = ()
    fast: bool | tuple[str, ...] = False
    fast_lines: str = ""


_GOVERNANCE_TESTS = (
    "tests/test_governance.py",
    "tests/test_governance_conflicts.py",
    "tests/test_duplicates.py",
    "tests/test_governance_rebuild.py",
    "tests/test_ledger_decisions.py",
)
_CLAIM_TESTS = ("tests/test_claims.py", "tests/test_governance_conflicts.py", "tests/test_duplicates.py")
_TIME_TESTS = (
    "tests/test_workspaces.py",
    "tests/test_history_bounds.py",  # pages, limits and not_found at their edges, before the walk
    "tests/test_isolation_walk.py",
    "tests/test_strict_doors.py",  # another workspace's memory named by id under strict isolation
    "tests/test_timetravel.py",
    "tests/test_timetravel_property.py",
    "tests/test_paging.py",
)
_VIEW_TESTS = (
    "tests/test_workspaces.py",
    "tests/test_review_filters.py",  # the views' own filters and bounds, before the walk
    "tests/test_review_bounds.py",
    "tests/test_isolation_walk.py",
    "tests/test_paging.py",
    "tests/test_duplicates.py",
    "tests/test_governance.py",
)
SCOPE_LINES = r"scope|workspace|isolation|strict"
# The facade's isolation tests first (no model, seconds), the walk (a seeded ledger with the tiny
# embedding model) only for the mutants they miss.
_ISOLATION_TESTS = ("tests/test_workspaces.py", "tests/test_isolation_walk.py")
_SERVICE_CHECKS = (
    "Service._check_workspace",
    "Service.workspace_scope",
    "Service._find_scope",
    "Service._row",
    "Service._memory",
    "Service._conflict_row",
)

TARGETS: tuple[Target, ...] = (
    # Arbitration: the rule order and every rule's direction.
    Target(
        "ledger/arbiter.py",
        (
            "tests/test_arbiter.py",
            "tests/test_standing.py",
            "tests/test_claim_sets.py",
            "tests/test_governance_conflicts.py",
        ),
        critical=("_RULES", "_protection_rank", "arbitrate"),
        ordered=("_RULES",),
        fast=True,
        equivalent=(
            ("_protection_rank", "2 → 3"),  # only the order of the ranks 0 < 1 < 2 matters
            ("_RULES", "9 → 10"),  # confidences are given with far fewer digits
            ("arbitrate", "> → >="),
            # review asked or not, the rules' leader stays (as the verdict's suggestion)
            ("set_leaders", "False → True"),
            ("leaders_first_scored", "> → >="),  # an equal score taken is the same score
        ),
    ),  # compared only once the keys differ
    Target(
        "ledger/trust.py",
        (
            "tests/test_decide_edges.py",
            "tests/test_arbiter.py",
            "tests/test_governance.py",
            "tests/test_find_freshness.py",
        ),
    ),
    # The write decisions (command + state -> events) and governance.
    # The pure decisions' own edges first (milliseconds), then their effects through the facade.
    Target("ledger/decide.py", ("tests/test_decide_edges.py", *_GOVERNANCE_TESTS, "tests/test_retractions.py")),
    # remember's one decision from its state: which branch (sighting, restatement, new memory) and
    # whether the state's settling inputs settle.
    Target(
        "ledger/remember.py",
        ("tests/test_remember_state.py", *_GOVERNANCE_TESTS, "tests/test_retractions.py", "tests/test_settlement.py"),
    ),
    # update's one decision from its state: the new version, its collisions, the settlements.
    Target("ledger/update.py", ("tests/test_update_state.py", *_GOVERNANCE_TESTS, "tests/test_settlement.py")),
    Target("ledger/facts.py", ("tests/test_decide_edges.py", *_GOVERNANCE_TESTS)),
    Target(
        "ledger/govern.py",
        ("tests/test_govern_edges.py", *_GOVERNANCE_TESTS),
        # The placeholder id of the set decide_arbitrate builds in memory: settle reads its
        # state, values and stream, never the id, and no event carries it.
        equivalent=(("decide_arbitrate", "0 → 1", "conflict_id=0"),),
    ),
    Target(
        "ledger/settlement.py",
        ("tests/test_settlement_edges.py", "tests/test_settlement.py"),
        equivalent=(
            # facts is built from conflict.values: the zip's two sides always have one length.
            ("settle_by_policy", "True → False", "strict=True"),
            # The placeholder id of a set the decision opens: read by nothing (sets go by stream).
            ("_after", "0 → 1", "conflict_id=0"),
            # decide.settle skips a resolved set or one the member is not in: the wider list
            # this would pass on yields no event.
            ("_streams_of", "and → or"),
        ),
    ),
    Target("ledger/erasure.py", ("tests/test_erasure_chain.py", "tests/test_erasure.py")),
    # Which memory repeats another, which memories are archived, how a reply ranks its collisions.
    Target("ledger/duplicates.py", ("tests/test_ledger_rules.py", "tests/test_duplicates.py")),
    Target("ledger/retention.py", ("tests/test_ledger_rules.py", "tests/test_timetravel.py")),
    Target(
        "ledger/reply.py",
        ("tests/test_ledger_rules.py", "tests/test_settlement_edges.py", "tests/test_governance_conflicts.py"),
    ),
    # Which statement cancels which instruction; which hits state one fact (newest first in find).
    Target("ledger/cancellation.py", ("tests/test_retractions.py",)),
    Target("ledger/freshness.py", ("tests/test_find_freshness.py",)),
    # Normalisation and claim extraction.
    Target(
        "ledger/normalize.py",
        ("tests/test_normalize_edges.py", "tests/test_claims.py", "tests/test_duplicates.py", "tests/test_text.py"),
        # Two unit names match at one place only when one is the other's prefix, and reverse
        # alphabetical order already puts the longer first, as sorting by length does.
        equivalent=(("_UNIT_ALT", "key=len → key=None"),),
    ),
    Target(
        "ledger/normalize_when.py",
        ("tests/test_normalize_when.py", "tests/test_claims.py"),
        # Checked by running the module and each mutant over ~63,000 generated texts and 20,000
        # value pairs (identical output), or unreachable:
        equivalent=(
            ("_CN_SMALL", "10 → 11"),  # 十 is read by _small's own branches, never looked up whole
            # reverse alphabetical order already puts each name before its prefix (june, jun),
            # and \b after the weekdays backtracks a short form to the long one
            ("_MONTH_ALT", "key=len → key=None"),
            ("_WD_ALT", "key=len → key=None"),
            ("_WD_ALT", "True → False"),
            # the extra case looks up the empty string, whose default is the else branch's 0
            ("_small", "> → >=", "if len(text) > 1 else 0"),
            ("_small", "> → >=", "if len(text) > 2 else 0"),
            ("_small", "1 → 2", "_CN_SMALL.get(text, -1)"),  # every negative is refused alike
            ("_small", "1 → 2", 'return -1  # "十二三"'),
            ("parse_when", "< → <=", "while pos < len(text)"),  # one more turn at the end: no match
            ("parse_when", "> → >=", "match.end() > start"),  # no pattern matches an empty string
        ),
    ),
    Target(
        "ledger/claims.py",
        ("tests/test_claims_edges.py", *_CLAIM_TESTS),
        equivalent=(
            # The one caller only asks whether the qualifier is empty: None and "" read alike.
            ("_qualifier", "return None instead of ''"),
            # Only the text before the first separator is used (the pattern has no groups).
            ("_qualifier", "1 → 2", "maxsplit=1"),
        ),
    ),
    Target("ledger/claim_words.py", ("tests/test_claim_values_edges.py", *_CLAIM_TESTS)),
    Target(
        "ledger/claim_values.py",
        ("tests/test_claim_values_edges.py", *_CLAIM_TESTS),
        # More start positions than can fit the phrase: the slices are shorter than it, no match.
        equivalent=(("_as_written", "- → +"), ("_as_written", "1 → 2")),
    ),
    # The filters guarding workspace isolation: the rule (workspaces.py), and every module that
    # applies a workspace scope on a read or a by-id check (docs/testing.md). Each is critical;
    # tests/test_mutation_tool.py fails when a module applying a scope is missing here. CI's
    # --fast takes the rule, the continuity rule, the scans and time travel (tests with no seeded
    # ledger); the modules only the isolation walk covers (~50 s a mutant) run in the full check.
    Target(
        "server/app/workspaces.py",
        ("tests/test_workspaces.py", "tests/test_workspace_names.py"),
        only=(
            "Workspaces.check_workspace",
            "Workspaces.write_workspace",
            "Workspaces.find_scope",
            "Workspaces.workspaces",
        ),
        critical=(
            "Workspaces.check_workspace",
            "Workspaces.write_workspace",
            "Workspaces.find_scope",
            "Workspaces.workspaces",
        ),
        fast=True,
    ),
    # Erase checks the caller's workspace for each memory it would clear; what it clears: every
    # name of a workspace (its aliases), and what a promotion ties to it (a note and its memory).
    Target(
        "server/app/erasure.py",
        ("tests/test_erasure.py",),
        only=("erase", "erasable", "_targets", "_with_promotions", "_notes_of", "_promoted_from"),
        critical=("erase",),
    ),
    # The workspace rules every service applies, and the loaders every governing service shares
    # (a memory's and a claim set's facts, each with its workspace check).
    Target(  # _row: every write's and governance action's load, isolation checked (the writes' too)
        "server/app/service.py",
        (*_ISOLATION_TESTS, *(t for t in _VIEW_TESTS if t not in _ISOLATION_TESTS), "tests/test_review_bounds.py"),
        only=_SERVICE_CHECKS,
        critical=_SERVICE_CHECKS,
    ),
    Target(
        "server/app/views.py",
        (
            "tests/test_workspaces.py",
            "tests/test_find_filters.py",  # every filter of find, before the walk's seeded ledger
            "tests/test_find_pages.py",  # its pages, the working set's share, cold memories
            "tests/test_working_tier.py",
            "tests/test_find_freshness.py",
            "tests/test_isolation_walk.py",
            "tests/test_paging.py",
            "tests/test_timetravel.py",
            "tests/test_search.py",
        ),
        only=("Views.find", "Views.read"),
        critical=("Views.find", "Views.read"),
        equivalent=(
            # One more hit fetched past the page only tells that there is more, and the
            # standing window fetches 20 beyond it anyway: one fewer or one more changes nothing.
            ("Views.find", "1 → 2", "page = shown_through + 1"),
            ("Views.find", "+ → -", "page = shown_through + 1"),
            # A single hit's claim slots are read and not used (both orderings need two hits).
            ("Views.find", "> → >=", "if len(hits) > 1 else {}"),
            # Without a conversation no memory is in "its" conversation: the order stays.
            ("Views.find", "and → or", "if session_id and not session_only"),
        ),
    ),
    Target(
        "server/app/semantic.py",
        ("tests/test_semantic_bounds.py", *_ISOLATION_TESTS, "tests/test_notices.py", "tests/test_paging.py"),
        only=("Semantic.notices", "Semantic.review_notice", "Semantic.vectors_status", "_pending"),
        critical=("Semantic.notices", "Semantic.review_notice"),
        equivalent=(
            # One more row fetched past the page: it only tells that there is more.
            ("Semantic.notices", "1 → 2", "limit=limit + 1"),
            # Only without sqlite-vec, which the test environment always has: the message a
            # person sees then is vec_problem()'s or this one.
            ("Semantic.vectors_status", "or → and", "vectors.vec_problem() or"),
        ),
    ),
    Target(
        "server/app/governance_views.py",
        _VIEW_TESTS,
        only=("GovernanceViews.conflicts", "GovernanceViews.near_duplicates_of", "GovernanceViews.overview"),
        critical=("GovernanceViews.conflicts", "GovernanceViews.near_duplicates_of", "GovernanceViews.overview"),
        # One more row fetched past the page: it only tells that there is more.
        equivalent=(("GovernanceViews.conflicts", "1 → 2", "limit=limit + 1"),),
    ),
    Target(  # a cancellation without ref_id looks for its instruction in its own workspaces only
        "server/app/writes.py",
        ("tests/test_retractions.py", *_ISOLATION_TESTS),
        only=("Writes._cancellation_target",),
        critical=("Writes._cancellation_target",),
        # Reading two rows past the limit instead of one tells the same: there were more.
        equivalent=(("Writes._cancellation_target", "1 → 2", "limit=MAX_MATCHES + 1"),),
    ),
    Target(
        "server/app/facade.py",
        ("tests/test_semantic_bounds.py", *_ISOLATION_TESTS),
        only=("LedgerApp.status",),
        critical=("LedgerApp.status",),
    ),
    Target(
        "server/doctor.py",
        ("tests/test_review_bounds.py", "tests/test_isolation_walk.py", "tests/test_views_file.py"),
        only=(
            "_scope",
            "check_read_models_head",
            "check_agent_asserted_confirmations",
            "check_open_conflicts",
            "check_conflicts_with_inactive_members",
        ),
        critical=("_scope", "check_read_models_head"),
    ),
    Target(
        "projections/conflicts/queries.py",
        (
            "tests/test_workspaces.py",
            "tests/test_review_filters.py",
            "tests/test_review_bounds.py",
            "tests/test_isolation_walk.py",
        ),
        only=("page", "count_by_state", "count_unresolved_with_inactive_members"),
        critical=("page", "count_by_state", "count_unresolved_with_inactive_members"),
        # The SELECT names exactly COLUMNS: a zip that does not check the lengths sees the same.
        equivalent=(("page", "True → False", "strict=True"),),
    ),
    Target(
        "projections/notices.py",
        ("tests/test_semantic_bounds.py", *_ISOLATION_TESTS),
        only=("listing",),
        critical=("listing",),
    ),
    Target(
        "projections/memories.py",
        _ISOLATION_TESTS,
        only=("_scope_sql", "status_counts", "active_counts"),
        critical=("_scope_sql", "status_counts", "active_counts"),
    ),
    Target(
        "projections/search/queries.py",
        (
            "tests/test_workspaces.py",
            "tests/test_find_filters.py",
            "tests/test_review_bounds.py",
            "tests/test_isolation_walk.py",
        ),
        only=("SearchFilters.workspaces", "attribute_clauses"),
        critical=("SearchFilters.workspaces", "attribute_clauses"),
    ),
    Target(
        "projections/vectors.py",
        ("tests/test_semantic_bounds.py", *_ISOLATION_TESTS),
        only=("counts",),
        critical=("counts",),
    ),
    Target(
        "projections/confirmations.py",
        ("tests/test_semantic_bounds.py", *_ISOLATION_TESTS),
        only=("agent_asserted_confirmations",),
        critical=("agent_asserted_confirmations",),
    ),
    Target(
        "projections/audit.py",
        (
            "tests/test_workspaces.py",
            "tests/test_review_filters.py",
            "tests/test_review_bounds.py",
            "tests/test_isolation_walk.py",
        ),
        only=("_where",),
        critical=("_where",),
    ),
    # A strict workspace is never scored against another's vectors (the scans take the scope).
    Target(
        "projections/hybrid.py",
        ("tests/test_hybrid_scope.py",),
        only=("memories_near", "vector_candidates", "_in_context_in_scope", "_nearest_in_scope"),
        critical=("_in_context_in_scope", "_nearest_in_scope"),
        fast=("_in_context_in_scope", "_nearest_in_scope"),
        # Widening longer or further than needed: the scans do more work and may find nearer
        # hits, never a memory the filters reject (the tests pin where widening must happen).
        equivalent=(
            ("memories_near", "3 → 4"),
            ("memories_near", "or → and"),
            ("memories_near", ">= → >"),
            ("memories_near", "remove the break"),
            ("vector_candidates", "3 → 4"),
            ("vector_candidates", "or → and"),
            ("vector_candidates", ">= → >"),
            # A narrower exact re-scoring when a scan widens: the candidates' order is a little
            # less exact, no filtered memory gets through (speed against exactness only).
            ("vector_candidates", "* → /", "oversample = oversample * WIDEN"),
        ),
    ),
    Target(
        "projections/knn.py",
        ("tests/test_hybrid_scope.py", "tests/test_knn_index.py"),
        only=("BitIndex._closest",),
        critical=("BitIndex._closest",),
        fast=True,
        fast_lines=SCOPE_LINES,
        equivalent=(
            # Masking when every workspace is in scope masks nothing: the same rows, a little slower.
            ("BitIndex._closest", "< → <="),
            # "far" only has to exceed every real distance (words * 64), and the lookup and the
            # histogram only have to be long enough: larger ones change no answer.
            ("BitIndex._closest", "64 → 65", "far = self.words * 64 + 1"),
            ("BitIndex._closest", "1 → 2", "far = self.words * 64 + 1"),
            ("BitIndex._closest", "1 → 2", "np.zeros(len(self.codes) + 1"),
            ("BitIndex._closest", "1 → 2", "minlength=far + 1"),
            ("BitIndex._closest", "+ → -", "minlength=far + 1"),
        ),
    ),
    # The read models never run ahead of their log: set aside at open, refused by verify.
    Target(
        "server/app/views_file.py",
        ("tests/test_views_file.py",),
        only=("_continuing", "_mismatch", "event_at"),
        critical=("_continuing", "_mismatch", "event_at"),
        fast=True,
        equivalent=(
            # The first event read is the one at the position either way; only more rows are read.
            ("event_at", "until=position → until=None"),
            # The connection on a file about to be set aside is dropped right after; closing it
            # first frees it sooner (POSIX renames an open file alike).
            ("_continuing", "remove the call copy.close()"),
        ),
    ),
    # The after-commit fold: which projectors trail, how a reader finds another process's writes,
    # and the fold itself (a survivor here is a read that misses a write the log holds).
    Target(
        "projections/runner.py",
        ("tests/test_after_commit.py",),
        only=(
            "folds_after_commit",
            "ProjectionRunner.unsettled",
            "ProjectionRunner.settle_in_transaction",
            "ProjectionRunner._catch_up",
            "ProjectionRunner._erased_after",
            "ProjectionRunner.project",
        ),
        critical=(
            "ProjectionRunner.unsettled",
            "ProjectionRunner.settle_in_transaction",
            "ProjectionRunner._catch_up",
        ),
        equivalent=(
            # Every projector has a checkpoint once the runner has opened (catch-up, rebuild).
            ("ProjectionRunner._catch_up", "0 → 1", "checkpoints.get(p.name, 0)"),
            # Nothing read after the lowest checkpoint: every checkpoint folded is that one (a
            # higher one would have events between), so setting them to it changes nothing.
            ("ProjectionRunner._catch_up", "> → >=", "if last > start"),
            # Only the count of events awaiting the fold (one more: one more harmless fold), or
            # a start that only an empty batch would keep (project is never given one).
            ("ProjectionRunner.project", "0 → 1", "last, count = 0, 0"),
        ),
    ),
    Target(
        "server/app/storage.py",
        ("tests/test_views_file.py",),
        only=("Storage.verify_log", "Storage.views_ahead"),
        critical=("Storage.verify_log", "Storage.views_ahead"),
        fast=True,
    ),
    # ... and time travel (as-of find and read, history, timeline and audit, the validity rules
    # they apply); every scope they apply is critical.
    Target(
        "server/app/timetravel.py",
        _TIME_TESTS,
        only=(
            "History._point",
            "History.find_as_of",
            "History.read_as_of",
            "History.history",
            "History.timeline",
            "History.audit",
        ),
        critical=("History.read_as_of", "History.history", "History.timeline", "History.audit"),
        equivalent=(  # one more row fetched past the page, none shown: it only tells "more"
            ("History.find_as_of", "1 → 2"),
            ("History.timeline", "1 → 2", "wanted = offset + limit + 1"),
            ("History.audit", "1 → 2", "audit_events(conn, query, limit + 1)"),
        ),
        fast=("History.read_as_of", "History.history", "History.timeline", "History.audit"),
        fast_lines=SCOPE_LINES,
    ),
    Target(
        "projections/timeline/asof.py",
        _TIME_TESTS,
        only=("_where", "status_at", "state_at", "position_at", "subject_at"),
        critical=("_where", "subject_at"),
        fast=("_where", "subject_at"),
        fast_lines=SCOPE_LINES,
    ),
    # The working tier: a conversation's working set, and the service that answers it, keep
    # another workspace's notes out under strict isolation.
    Target(
        "projections/conversations.py",
        ("tests/test_working_bounds.py", "tests/test_working_tier.py", "tests/test_working_set.py"),
        only=("working_set",),
        critical=("working_set",),
    ),
    Target(
        "server/app/conversations.py",
        ("tests/test_working_bounds.py", "tests/test_working_tier.py", "tests/contract/test_working_tier.py"),
        only=(
            "Conversations.note",
            "Conversations.working",
            "Conversations.working_hits",
            "Conversations._working_row",
            "Conversations.read",
        ),
        critical=(
            "Conversations.working",
            "Conversations.working_hits",
            "Conversations._working_row",
            "Conversations.read",
        ),
        # A write that went to the backup answers with the backup's receipt in Storage.call,
        # whatever the service returns (the service must only stop there).
        equivalent=(("Conversations.note", "return None instead of outcome.result"),),
    ),
    # This machine's pending (backed-up) writes shown to find: only the caller's scope.
    Target(
        "server/app/pending_reads.py",
        ("tests/test_working_bounds.py", "tests/test_pending_reads.py"),
        only=("pending_finds",),
        critical=("pending_finds",),
    ),
    # Hindsight: the health report, its changes and undo stay inside the caller's workspaces.
    Target(
        "projections/health.py",
        ("tests/test_health.py", "tests/contract/test_hindsight.py"),
        only=("_scope",),
        critical=("_scope",),
    ),
    Target(
        "projections/changes.py",
        ("tests/test_review_bounds.py", "tests/test_health.py", "tests/contract/test_hindsight.py"),
        only=("recent",),
        critical=("recent",),
        equivalent=(("recent", "True → False", "strict=True"),),  # as conflicts.page's zip
    ),
    Target(
        "server/app/hindsight.py",
        (
            "tests/test_health.py",
            "tests/test_review_filters.py",
            "tests/test_review_bounds.py",
            "tests/contract/test_hindsight.py",
        ),
        only=("Hindsight._scope", "Hindsight.undo"),
        critical=("Hindsight._scope", "Hindsight.undo"),
        equivalent=(
            # A change names memories that have rows (nothing deletes one; archive and erasure
            # change a status): the skip is defensive, unreachable.
            ("Hindsight.undo.decide", "remove the continue"),
            # Undo reaches the set only resolved (only undo reopens one, and a change is undone
            # once), so "exists and resolved" and "exists or resolved" agree.
            ("Hindsight.undo.decide", "and → or", 'conflict is not None and conflict["state"] == "resolved"'),
            # A backed-up write answers with the backup's receipt in Storage.call, whatever the
            # service returns.
            ("Hindsight.undo", "return None instead of outcome.result"),
        ),
    ),
)
