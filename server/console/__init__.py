"""The local web console (``ledger console``): see and govern the ledger in a browser.

Modules: :mod:`.guard` (who may connect), :mod:`.web` (app, middleware, rendering),
:mod:`.pages` (lists and health), :mod:`.detail` (a memory, a conflict), :mod:`.records`
(timeline, audit, export), :mod:`.actions` (governance), :mod:`.views` (pure shaping),
:mod:`.i18n` (English and Chinese), :mod:`.serve` (the command). Every read and write goes
through :class:`server.app.facade.LedgerApp`, the facade the MCP tools and the CLI use.
"""
