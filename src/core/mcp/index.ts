/** The MCP server (docs/mcp.md): yard's commands as tools and resources. */
export * from './server.js'
