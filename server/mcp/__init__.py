"""The MCP server: four tools over the facade, their route table and advertised schemas."""
