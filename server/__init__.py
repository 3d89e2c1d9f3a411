"""The application layer: facade, MCP server, CLI, configuration."""
