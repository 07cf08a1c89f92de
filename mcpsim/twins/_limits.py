"""The bounds of a recording (`mcpsim record`'s `calls.jsonl`). A recording is untrusted data: it is
read from disk by `gen --from-mcp --recording` and `fidelity`, and whoever wrote the file (or the
server it recorded) chose every byte. `mcpsim.twins.recordings._reading` reads one within these
limits and refuses it past one with the file, the line, the limit's name and its value. A world
spec's own bounds are in `mcpsim.specs._limits`; docs/security.md lists both. Real recordings (the
three servers of docs/twins.md) are a few kilobytes with lines under 20 KB, 8 levels deep."""

from __future__ import annotations

MAX_RECORDING_BYTES = 64 * 1024 * 1024  # one recording file
MAX_TWIN_BYTES = 16 * 1024 * 1024  # one twin spec file (`gen --from-mcp` writes them; a few hundred KB each)
MAX_RECORDING_LINE = 8 * 1024 * 1024  # one line: one exchange (a request and its response)
MAX_RECORDING_LINES = 200_000  # lines of one file
MAX_RECORDING_DEPTH = 64  # levels of nesting of one line's JSON
MAX_RECORDING_CALLS = 20_000  # tools/call exchanges of one file
MAX_RECORDING_TOOLS = 1_000  # tools in one tools/list answer
MAX_TEMPLATE_VALUES = 64  # argument texts a recorded message is searched for, when it becomes a template
