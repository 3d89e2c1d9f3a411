"""``python -m server`` runs the ``ledger`` CLI (the same entry point as the console script)."""

from server.cli.main import main

main()
