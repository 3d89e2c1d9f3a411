"""``python -m fact_ledger.server`` runs the ``ledger`` CLI (the same entry point as the console script)."""

from fact_ledger.server.cli.main import main

main()
