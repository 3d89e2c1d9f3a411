"""The ``ledger`` command line: :mod:`server.cli.main` is the group, the other modules its commands.

Every command takes ``--db`` and ``--json``. ``--json`` prints one JSON document with the same keys
as the MCP results; otherwise output is for people (rich, :mod:`server.cli.output`), with progress
bars on long work. Exit codes are one table (:mod:`server.cli.exit_codes`, printed in docs/cli.md);
errors never print a traceback.

Only the default database is created implicitly: an explicit ``--db`` (or ``LEDGER_DB``) path
with no ledger is refused unless the caller runs ``ledger init`` or passes ``--create``.
"""
