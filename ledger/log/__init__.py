"""The log: the event schema (``events``), its rows and hash chain (``chain``), the two backends
(``store`` on SQLite, ``pg_store`` on PostgreSQL) and the one protocol they share (``protocol``),
copying a log between them (``copy``), the export envelope (``envelope``), the SQLite file's
checkpoints and sidecars (``checkpoint``, ``dbfiles``). The rest of ``ledger/`` is the pure rules."""
