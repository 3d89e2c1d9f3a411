"""Meaning (a service of the facade): the model, the vectors worker, hybrid find, reembed and notices.

The model is loaded lazily (a ``remember`` from the command line never pays for it) and never
runs on the write path: a write commits with full text only, then pokes the worker thread that
``ledger serve`` starts (:meth:`Semantic.start_vector_worker`), which embeds on its own
connection and writes vectors in short transactions (:mod:`projections.indexer`). A missing or
broken model (or a missing sqlite-vec) never fails anything: ``find`` falls back to full text,
and ``status``, ``doctor`` and one reply notice say why.

Search modes, best first: ``vector+fts`` (a model is loaded and the stored vectors are its
own), ``fts``, ``like`` (this SQLite has no FTS5; ``find`` scans with LIKE).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fact_ledger.ledger import clock
from fact_ledger.ledger.disagree import DISAGREEMENTS, NOTICE_STATES
from fact_ledger.ledger.errors import InvalidInput, NotFound, Unavailable
from fact_ledger.ledger.facts import check_authorized
from fact_ledger.ledger.log.events import NoticeReviewed
from fact_ledger.projections import knn, memories, notices, vectors
from fact_ledger.projections.hybrid import hybrid_search
from fact_ledger.projections.indexer import Indexer, VecUnavailable
from fact_ledger.projections.runtime.model_file import (
    EmbedderUnavailable,
    ModelFile,
    ModelFileError,
    check_file,
    inspect_model,
)
from fact_ledger.projections.search.queries import Hit, SearchFilters, search
from fact_ledger.server.app import credentials
from fact_ledger.server.app.model_lender import ModelLender, borrow_query_vector
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.storage import BackedUp, storage_call
from fact_ledger.server.app.views_file import another_connection
from fact_ledger.server.doctor import Check, check

if TYPE_CHECKING:
    from fact_ledger.server.config import Settings

log = logging.getLogger("fact_ledger.semantic")

Progress = Callable[[int, int], None]
QUERY_CACHE = 256  # query embeddings kept (an agent repeats its questions)
WORKER_IDLE_S = 2.0  # the worker looks for missed writes this often when nobody pokes it
VECTOR_LAG_WARNING = 1000  # events not yet embedded before doctor warns


class Semantic(Service):
    """The embedding model, hybrid search, the vector worker and semantic notices."""

    _model: Any | None = None
    _model_tried = False  # a load finished (or failed) in this process
    _loading: threading.Event | None = None  # set once a background load is over (ledger serve)
    _closed = False
    _configured: tuple[ModelFile | None, str | None] | None = None
    _semantic_problem: str | None = None
    _model_was_configured = False  # when the load was tried: a problem then is worth saying
    _worker: _VectorWorker | None = None
    _lender: ModelLender | None = None
    _announced_problem = False
    _announced_notice = 0

    # -- the model -----------------------------------------------------------------------------
    @storage_call
    def embedding_model(self) -> Any | None:
        """The loaded model, loading it on first use; None (and a reason) when there is none, and
        while ``ledger serve`` is still loading it in the background (full text meanwhile)."""
        if not self._model_tried:
            if self._loading is not None:
                if not self._loading.is_set():
                    return None
            else:
                self._take(*_load_model(self.settings))
        if self._model is not None and not vectors.load_vec(self.conn):
            self._semantic_problem = vectors.vec_problem()
            return None
        return self._model

    def _take(self, model: Any | None, problem: str | None) -> None:
        # Thread-safe (one llama.cpp call at a time, one passage per call): the worker and
        # find share it, and a query waits for at most one passage.
        self._query_vectors: OrderedDict[str, bytes] = OrderedDict()
        self._model, self._semantic_problem = model, problem
        # Decided with the attempt it is about, once: every reply asks, and asking again would
        # look the default model file up on disk each time.
        self._model_was_configured = _model_configured(self.settings)
        self._model_tried = True

    @functools.cached_property
    def _file_problem(self) -> str | None:
        """Why the configured model file cannot load, read from the file alone (once)."""
        if not _model_configured(self.settings):
            return None
        try:
            check_file(self.settings.embedding_model_path or "")
        except ModelFileError as exc:
            return str(exc)[:200]
        return None

    def model_broke(self, problem: str) -> None:
        """The loaded model failed on a text (a vector that is not a number): meaning is off for
        this process, full text answers, and ``status`` and ``doctor`` say why."""
        self._semantic_problem, self._model = problem[:200], None
        self._query_vectors.clear()

    @property
    def model_loading(self) -> bool:
        return self._loading is not None and not self._loading.is_set()

    def load_model_in_background(self) -> threading.Event:
        """Load the model in a thread (``ledger serve`` answers its client at once; ``find`` uses
        full text until the model is ready); the event is set when the load is over, loaded or
        not. Nothing is loaded for an unusable database."""
        if self._loading is not None:
            return self._loading
        done = self._loading = threading.Event()
        if self._model_tried or self.storage.shadow:
            done.set()
            return done

        def load() -> None:
            try:
                model, problem = _load_model(self.settings)
                if self._closed:  # the server stopped while the model loaded
                    if model is not None:
                        model.close()
                    return
                self._take(model, problem)
            except Exception as exc:  # never leave find waiting on a load that died
                self._take(None, f"the embedding model could not be loaded ({type(exc).__name__}: {exc})"[:200])
                log.warning("loading the embedding model failed", exc_info=True)
            finally:
                done.set()

        threading.Thread(target=load, name="model-load", daemon=True).start()
        return done

    def _configured_model(self) -> tuple[ModelFile | None, str | None]:
        """The configured model as its file says (identity, dimension) without loading it, or why
        there is none usable: what ``status`` reports (a model load takes seconds)."""
        if self._configured is None:
            self._configured = _inspect_configured(self.settings)
        return self._configured

    def _target_model_id(self) -> str | None:
        """The id of the model ``find`` embeds queries with: the loaded one; none while it loads or
        when it failed; in a process that has not loaded it (a CLI call), the configured file's."""
        if self._model_tried or self._loading is not None:
            model = self._model if self._model_tried else None
            return model.model_id if model is not None else None
        found, _problem = self._configured_model()
        return found.model_id if found is not None else None

    @storage_call
    def semantic_problem(self) -> str | None:
        """Why meaning is off (loading the model to find out); None while it loads in the background."""
        if self.model_loading:
            return None
        self.embedding_model()
        return self._semantic_problem

    @storage_call
    def search_mode(self) -> str:
        """What ``find`` uses, without loading a model (``status`` must stay fast): vectors when
        the stored ones are the model's that embeds the query (see :meth:`_target_model_id`)."""
        if not _has_fts5():
            return "like"
        model_id = self._target_model_id()
        if model_id is None or not self._vec_usable():
            return "fts"
        state = vectors.state(self.conn)
        return "vector+fts" if state is not None and state.model_id == model_id else "fts"

    def _vec_usable(self) -> bool:
        """sqlite-vec loads into this connection; where no model was loaded (a CLI ``status``),
        whether it is installed: its package imports numpy (~0.3 s), and find loads it anyway."""
        if self._model_tried or self._loading is not None:
            return vectors.load_vec(self.conn)
        return importlib.util.find_spec("sqlite_vec") is not None

    def _query_vector(self, model: Any, query: str) -> bytes:
        cached = self._query_vectors.get(query)
        if cached is None:
            cached = self._query_vectors[query] = model.embed_query(vectors.query_text(query))
            while len(self._query_vectors) > QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        else:
            self._query_vectors.move_to_end(query)
        return cached

    # -- find ----------------------------------------------------------------------------------
    def search_hits(
        self,
        query: str,
        filters: SearchFilters,
        limit: int,
        boost: tuple[str, ...] | None,
        page: int | None = None,
        base: int | None = None,
    ) -> tuple[list[Hit], int]:
        """Hybrid when vectors are live, else full text (called inside find's read snapshot);
        ``page``: how many of the ``limit`` hits are shown (see ``search``); ``base``: the first
        page's ``page``, whose candidates a later hybrid page ranks (see ``hybrid_search``)."""
        borrowed = self._borrowed_query_vector(query) if query.strip() else None
        if borrowed is not None:
            return hybrid_search(
                self.conn, query, filters, limit, borrowed, boost_workspace=boost, page=page, base=base
            )
        model = self.embedding_model() if query.strip() else None
        if model is not None and self.search_mode() == "vector+fts":
            try:
                vector = self._query_vector(model, query)
            except Exception as exc:  # a model that fails at run time: full text answers
                self.model_broke(f"embedding failed ({type(exc).__name__}: {exc})")
                log.warning("query embedding failed; full text only: %s", exc)
            else:
                return hybrid_search(
                    self.conn, query, filters, limit, vector, boost_workspace=boost, page=page, base=base
                )
        return search(self.conn, query, filters, limit, boost_workspace=boost, page=page)

    def _borrowed_query_vector(self, query: str) -> bytes | None:
        """The query's embedding from a ``ledger serve`` on this database, in a process that has
        not loaded the model (a CLI call): its model must be the configured one, whose vectors
        are stored (:mod:`server.app.model_lender`). None: load the model here."""
        if self._model_tried or self._loading is not None or self.search_mode() != "vector+fts":
            return None
        if not vectors.load_vec(self.conn):
            return None
        found = self._configured_model()[0]
        answer = borrow_query_vector(self.storage.views_path, query)
        if found is None or answer is None or answer[0] != found.model_id:
            return None
        return answer[1]

    # -- vectors upkeep ------------------------------------------------------------------------
    @storage_call
    def reembed(self, progress: Progress | None = None, rebuild: bool = False) -> dict[str, Any]:
        """Fill missing vectors (or move them all to the configured model): batched, resumable."""
        model = self.embedding_model()
        if model is None and self.model_loading:
            raise Unavailable("the embedding model is still loading; try again in a moment", field="task")
        if model is None:
            raise Unavailable(f"no embedding model: {self._semantic_problem}", field="task")
        t0 = time.perf_counter()
        try:
            result = Indexer(self.store, model, thresholds=self._thresholds()).run(progress, rebuild=rebuild)
        except VecUnavailable as exc:
            raise Unavailable(str(exc), field="task") from None
        except EmbedderUnavailable as exc:  # the model failed on a passage: off, and said so in status
            self.model_broke(str(exc))
            raise Unavailable(f"no embedding model: {self._semantic_problem}", field="task") from None
        seconds = time.perf_counter() - t0
        texts = result["embedded"] + result["context_embedded"]
        return {
            "ok": True,
            "model": model.model_id,
            **result,
            "seconds": round(seconds, 3),
            "texts_per_s": round(texts / seconds, 1) if texts and seconds else None,
        }

    def _thresholds(self) -> notices.Thresholds:
        return notices.Thresholds(
            similarity=self.settings.embedding.notice_similarity,
            duplicate_similarity=self.settings.embedding.duplicate_similarity,
        )

    @storage_call
    def vectors_status(self, scope: tuple[str, ...] | None = None) -> dict[str, Any]:
        """The vectors read model, and what is going on with it, without loading a model:
        ``pending`` memories await (re)embedding by the configured model (None: no model to do
        it), ``loading`` while ``ledger serve`` loads the model in the background. With
        ``scope`` (strict isolation) every count covers those workspaces only."""
        state = vectors.state(self.conn)
        position = vectors.checkpoint(self.conn)
        loading = self.model_loading
        if loading:  # the vectors will be the configured model's
            found, problem = self._configured_model()[0], None
            target_id = found.model_id if found is not None else None
        else:
            target_id = self._target_model_id()
            if self._model_tried:
                problem = self._semantic_problem
            else:
                problem = self._configured_model()[1] or (
                    None if self._vec_usable() else vectors.vec_problem() or "sqlite-vec is not installed"
                )
        counted, held = vectors.counts(self.conn, scope), knn.held(self.conn)
        return {
            "model": state.model_id if state else None,
            "position": position,
            "lag": self.store.last_position() - position,
            **counted,
            # The index holds every vector once loaded: strict isolation counts only the caller's.
            "index_memories": held if scope is None or not held else counted["vectors"],
            "pending": _pending(self.conn, state, position, target_id, scope),
            "loading": loading,
            "configured": _model_configured(self.settings),
            "problem": problem,
        }

    @storage_call
    def warm_search(self) -> bool:
        """Load the nearest-neighbour index now rather than in the first hybrid ``find``
        (``ledger serve`` does it at start: ~1 s at 100k memories, reading every vector); False
        when vectors are not live or the database is unusable (nothing is loaded then)."""
        if self.storage.shadow:
            return False
        with self.storage.snapshot():
            if self.search_mode() != "vector+fts":  # no model, or vectors of another
                return False
            knn.index_for(self.conn, contexts=True)
        return True

    @storage_call
    def start_vector_worker(self) -> bool:
        """Keep vectors following the log in a thread of this process (``ledger serve``); none
        while the database is unusable (the model is not even loaded then)."""
        if self._worker is not None or self.storage.shadow or self.storage.read_only:  # nowhere to write vectors
            return False
        model = self.embedding_model()
        if model is None:
            return False
        self._worker = _VectorWorker(
            self.settings, self.storage.views_path, model, self._thresholds(), on_broken=self.model_broke
        )
        self._worker.start()
        return True

    def lend_model(self) -> bool:
        """Answer query embeddings for CLI calls on this database (``ledger serve``, once the model
        is loaded: :mod:`server.app.model_lender`); False when there is nothing or nowhere to lend."""
        model = self._model if self._model_tried else None
        if model is None or self._lender is not None or self.storage.shadow or self.storage.read_only:
            return False
        lender = ModelLender(self.storage.views_path, model, vectors.query_text)
        if not lender.start():
            return False
        self._lender = lender
        return True

    @storage_call
    def stop_vector_worker(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        self._closed = True
        if self._lender is not None:
            self._lender.stop()
            self._lender = None
        self.stop_vector_worker()
        model, self._model = self._model, None
        if model is not None and hasattr(model, "close"):
            model.close()

    def poke_worker(self) -> None:
        """After a commit: the worker has something to embed."""
        if self._worker is not None:
            self._worker.poke()

    # -- notices -------------------------------------------------------------------------------
    @storage_call
    def notices(
        self, state: str = "open", limit: int = 20, cursor: int | None = None, kind: str | None = None
    ) -> dict[str, Any]:
        """Semantic notices for review (advice, never conflicts), newest first; the defaults are
        the facade's (``LedgerApp.notices``)."""
        scope, _ = self._find_scope(None)
        kinds = DISAGREEMENTS if kind == "disagreement" else (kind,) if kind else ()
        with self.storage.snapshot():
            rows = notices.listing(
                self.conn, state=state, kinds=kinds, limit=limit + 1, before=cursor, workspaces=scope
            )
        more = len(rows) > limit
        return {
            "ok": True,
            "notices": rows[:limit],
            "has_more": more,
            "next_cursor": rows[limit - 1]["notice_id"] if more else None,
        }

    @storage_call
    def review_notice(self, notice_id: int, state: str, reason: str = "", authorization: str = "") -> dict[str, Any]:
        """Dismiss or resolve a notice (or open it again): an event, so it survives rebuilds. A
        governed action: every entry point (MCP, CLI, console) passes the caller's authorisation,
        and it is checked here, once."""
        check_authorized(authorization)
        credentials.refuse_in_note("reason", reason)
        if state not in NOTICE_STATES:
            raise InvalidInput(f"state must be one of {', '.join(NOTICE_STATES)}", field="state")

        def decide() -> tuple[Any, str, str]:
            found = notices.load(self.conn, notice_id)
            if found is None:
                raise NotFound(f"no notice {notice_id}", field="notice_id")
            self._check_workspace(found["workspace"], field="notice_id")
            streams = memories.streams_of(self.conn, [found["left"]["memory_id"], found["right"]["memory_id"]])
            event = NoticeReviewed(
                left=streams[found["left"]["memory_id"]],
                right=streams[found["right"]["memory_id"]],
                state=state,
                reason=reason,
            )
            return [(f"notice:{event.left}:{event.right}", event)], clock.now(), found["workspace"]

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        with self.storage.snapshot():
            return {"ok": True, "notice": notices.load(self.conn, notice_id)}

    @storage_call
    def semantic_notice(self) -> str | None:
        """At most one short line for a reply: why meaning is off (once), or a new notice."""
        problem = self.semantic_problem()  # None while the model loads in the background
        if problem is None and self.model_loading and not self._announced_problem:
            problem = self._file_problem  # a missing or broken file: said on the first reply already
            if problem:
                self._announced_problem = True
                return f"semantic search off ({problem}); find uses full text"
        if problem and self._model_was_configured and not self._announced_problem:  # a set model fails
            self._announced_problem = True
            return f"semantic search off ({problem}); find uses full text"
        # No snapshot: one line from one read needs no consistent view, and every MCP reply
        # asks this (a BEGIN and a ROLLBACK around it were two of a find's statements).
        scope = self._find_scope(None)[0]
        rows = notices.listing(self.conn, kinds=DISAGREEMENTS, limit=1, workspaces=scope)
        if rows and rows[0]["notice_id"] > self._announced_notice:
            n = rows[0]
            self._announced_notice = n["notice_id"]
            return (
                f"notice {n['notice_id']}: memories {n['left']['memory_id']} and {n['right']['memory_id']} "
                f"differ ({notices.summary(n)}); memory_review notices"
            )
        return None


class _VectorWorker:
    """A thread with its own connection that keeps the vectors caught up with the log."""

    def __init__(
        self,
        settings: Settings,
        views_path: str,
        model: Any,
        thresholds: notices.Thresholds,
        on_broken: Callable[[str], None],
    ) -> None:
        self.settings, self.views_path, self.model, self.thresholds = settings, views_path, model, thresholds
        self.on_broken = on_broken  # the model failed on a passage: the worker stops, the service says why
        self._poked = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vectors", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        self._poked.set()

    def stop(self) -> None:
        self._stop.set()
        self._poked.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        store = another_connection(self.views_path, busy_timeout_ms=self.settings.busy_timeout_ms)
        try:
            indexer = Indexer(store, self.model, thresholds=self.thresholds)
            while not self._stop.is_set():
                try:
                    indexer.run(stop=self._stop)
                except EmbedderUnavailable as exc:  # it will not get better by retrying
                    log.warning("vectors worker stopped: %s", exc)
                    self.on_broken(str(exc))
                    return
                except Exception:  # a busy database: try again on the next poke
                    log.warning("vectors worker: catch-up failed; will retry", exc_info=True)
                self._poked.wait(WORKER_IDLE_S)
                self._poked.clear()
        except VecUnavailable as exc:
            log.warning("vectors worker not started: %s", exc)
        finally:
            store.close()


def _model_configured(settings: Settings) -> bool:
    return bool(settings.embedding_enabled and settings.embedding_model_path)


def _unusable(settings: Settings) -> str | None:
    """Why there is no model to load, from the configuration alone."""
    if not settings.embedding_enabled:
        return "disabled by configuration (embedding.enabled = false)"
    if not settings.embedding_model_path:
        return "no embedding model installed (ledger model install)"
    return None


def _digests() -> str:
    """Where model files' sha256 and header facts are kept between commands
    (:func:`projections.runtime.model_file.inspect_model`)."""
    from fact_ledger.server.config import models_dir

    return str(models_dir() / "digests.json")


def _inspect_configured(settings: Settings) -> tuple[ModelFile | None, str | None]:
    """The configured model's file, read but not loaded (no numpy, no llama.cpp), or why not."""
    problem = _unusable(settings)
    if problem:
        return None, problem
    missing = [name for name in ("numpy", "llama_cpp") if importlib.util.find_spec(name) is None]
    if missing:
        return None, f"the [semantic] extra is not installed (no module named {missing[0]!r})"
    try:
        return inspect_model(settings.embedding_model_path or "", digests=_digests(), reread=False), None
    except ModelFileError as exc:
        return None, str(exc)[:200]


def _load_model(settings: Settings) -> tuple[Any | None, str | None]:
    problem = _unusable(settings)
    if problem:
        return None, problem
    try:  # numpy and llama-cpp-python come with the [semantic] extra
        from fact_ledger.projections.runtime.embedding import load_embedder
    except ImportError as exc:
        return None, f"the [semantic] extra is not installed ({exc})"
    try:
        model = load_embedder(
            settings.embedding_model_path or "", threads=settings.embedding.threads, digests=_digests()
        )
    except EmbedderUnavailable as exc:
        return None, str(exc)[:200] or "the embedding model could not be loaded"
    return model, None


def _pending(
    conn: Any, state: vectors.State | None, position: int, target_id: str | None, scope: tuple[str, ...] | None = None
) -> int | None:
    """Memories the model ``target_id`` has yet to embed: all of them when the stored vectors
    are another model's (or none), else those changed after the vectors' checkpoint (of the
    ``scope`` workspaces only, when given)."""
    if target_id is None:
        return None
    if state is None or state.model_id != target_id:
        position = 0
    return vectors.awaiting(conn, position, scope)


@functools.cache
def _has_fts5() -> bool:
    """Whether this process's SQLite library has FTS5 (one library per process)."""
    import apsw

    return "ENABLE_FTS5" in apsw.compile_options


@check
def check_semantic_search(app: Any) -> Check:
    """Is meaning part of recall? Off by choice is fine; a configured model that fails is not."""
    if app.vectors_status()["loading"]:  # ledger serve, just started
        return Check(severity="info", message="search: fts while the embedding model loads in the background")
    problem = app.semantic_problem()  # loads the model: doctor checks that it really runs
    mode = app.search_mode()
    configured = _model_configured(app.settings)
    if mode == "vector+fts":
        lag = app.vectors_status()["lag"]
        if lag > VECTOR_LAG_WARNING:
            return Check(
                severity="warning",
                message=f"vectors are {lag} events behind the log; run ledger reembed (or keep ledger serve running)",
                count=lag,
            )
        return Check(severity="ok", message=f"search: vector+fts ({lag} events not yet embedded)", count=lag)
    if configured and problem is None:  # the model runs; its vectors are not there yet (a one-shot CLI embeds none)
        lag = app.vectors_status()["lag"]
        return Check(
            severity="warning",
            message=f"search: {mode} only until the model's vectors are built ({lag} events not yet embedded); "
            "run ledger reembed (or keep ledger serve running)",
            count=lag,
        )
    if configured:
        return Check(severity="warning", message=f"search: {mode} only: {problem}")
    return Check(severity="info", message=f"search: {mode} ({problem})" if problem else f"search: {mode}")
