"""Edge models: what the MCP tools and the CLI accept, validated before the facade is called."""
