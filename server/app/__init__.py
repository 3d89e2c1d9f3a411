"""The application: the facade every entry point calls (:mod:`server.app.facade`) and the
services behind it (writes, governance, views, history and time travel, backup, vectors)."""
