"""The two planes a server exposes: `mcp` (the data plane: a World as an MCP server, the only
module importing the SDK's server side), `control` (the control plane's routes), `app` (both in
one Starlette app, ServeConfig), `access` (tokens, Host/Origin, public URL, verdict detail) and
`host` (many episodes: ids, caps, expiry)."""
