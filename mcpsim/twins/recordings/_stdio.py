"""Record and replay: a stdio proxy that stands between an MCP client and a real server and writes
every request and response (with timing and errors) to JSONL; what a twin learns from recordings
(the data the server started with, its answers and error messages, the error kinds it showed as a
fault profile); and the fidelity of a twin, measured by replaying a recording's calls against it.

The proxy passes bytes through untouched, line by line (stdio MCP is one JSON-RPC message per
line), so any client and any protocol version work; it parses a copy of each line to record it.
`mcpsim.twins.recordings._http` is its streamable HTTP counterpart, writing the same records."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpsim.engine import Episode, FaultProfile, TemplateCache
from mcpsim.serve import SDK_ERROR_PREFIX, build_server
from mcpsim.twins import _limits as lim
from mcpsim.twins._operations import texts_in
from mcpsim.twins._schemas import first_option, inline_refs, object_items, properties_of
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import WRITES, RecordedAnswer, TwinSpec, TwinTool
from mcpsim.twins._world import compile_twin
from mcpsim.twins.recordings._reading import CALLS_FILE, Call, Recording, load_recording  # noqa: F401 (re-exported)

EXIT_GRACE_S = 30  # how long a server may run on after its client hung up
META_FILE = "meta.json"

# -- the proxy --------------------------------------------------------------------------------


class Recorder:
    """Pairs each request with its response and appends one JSON line per exchange (and one per
    notification) to `DIR/calls.jsonl`, flushed as it goes.

    Over stdio there is one stream each way. Over HTTP (`mcpsim.twins.recordings._http`) a client's
    request is answered within the HTTP exchange that carried it, and a server's request is
    answered by a later POST of the same session: `exchange` and `session` say where a message
    travelled, and each record of an HTTP message also names its session and the HTTP status."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.file = (out / CALLS_FILE).open("a", encoding="utf-8")
        self.lock = threading.Lock()
        self.pending: dict[tuple[str, str | None, str], dict[str, Any]] = {}
        self.seq = 0

    def _write(self, record: dict[str, Any]) -> None:
        self.seq += 1
        self.file.write(json.dumps({"seq": self.seq, **record}, ensure_ascii=False) + "\n")
        self.file.flush()

    def see(
        self,
        sender: str,
        line: bytes,
        *,
        exchange: str | None = None,
        session: str | None = None,
        status: int | None = None,
    ) -> None:
        """A line (or an HTTP body, or an SSE event's data) one side sent (`client` or `server`);
        over HTTP, the exchange that carried it, the session and the HTTP status."""
        http = {k: v for k, v in (("session", session), ("http_status", status)) if v is not None}
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's limit: kept as text
            with self.lock:
                self._write({"from": sender, "unparsed": line.decode("utf-8", "replace").rstrip("\n"), **http})
            return
        for one in message if isinstance(message, list) else [message]:
            if isinstance(one, dict):
                self._message(sender, one, exchange, session, http)

    def _message(
        self, sender: str, message: dict[str, Any], exchange: str | None, session: str | None, http: dict[str, Any]
    ) -> None:
        now = time.monotonic()
        is_request = "method" in message and "id" in message
        is_response = "method" not in message
        # the client's requests and their responses travel in one exchange; the server's in a session
        scope = exchange if (sender == "client") == is_request else session
        with self.lock:
            if is_request:  # wait for its response
                self.pending[(sender, scope, json.dumps(message["id"]))] = {
                    "from": sender,
                    "id": message["id"],
                    "method": message["method"],
                    "params": message.get("params"),
                    "started": datetime.now(UTC).isoformat(),
                    **http,
                    "_t": now,
                }
            elif not is_response:
                self._write({"from": sender, "method": message["method"], "params": message.get("params"), **http})
            else:  # a response goes back to the other side's request
                other = "client" if sender == "server" else "server"
                request = self._pop(other, scope, json.dumps(message.get("id")))
                if request is None:
                    self._write({"from": sender, "orphan_response": message, **http})
                    return
                started = request.pop("_t")
                request["duration_ms"] = round((now - started) * 1000, 3)
                request |= {k: message[k] for k in ("result", "error") if k in message}
                self._write(request | http)

    def _pop(self, requester: str, scope: str | None, id_: str) -> dict[str, Any] | None:
        """The pending request a response answers: in its own scope, else (an answer that came
        back another way, such as a resumed HTTP stream) the oldest with that id."""
        found = self.pending.pop((requester, scope, id_), None)
        if found is None:
            key = next((k for k in self.pending if k[0] == requester and k[2] == id_), None)
            found = self.pending.pop(key) if key is not None else None
        return found

    def fail(self, exchange: str, message: str, status: int | None = None, code: int | None = None) -> None:
        """The client's requests still waiting in an HTTP exchange that ended without their
        responses (the server unreachable, or an HTTP error without a JSON-RPC answer to them;
        `code` is the JSON-RPC error code the server gave, if it gave one)."""
        with self.lock:
            for key in [k for k in self.pending if k[0] == "client" and k[1] == exchange]:
                request = self.pending.pop(key)
                started = request.pop("_t")
                request["duration_ms"] = round((time.monotonic() - started) * 1000, 3)
                http = {"http_status": status} if status is not None else {}
                self._write(request | http | {"error": {"code": code, "message": message}})

    def close(self) -> None:
        with self.lock:
            for request in self.pending.values():  # never answered
                request.pop("_t", None)
                self._write(request | {"error": {"code": None, "message": "no response before the session ended"}})
            self.pending.clear()
            self.file.close()


def _pump(source: IO[bytes], sink: IO[bytes], sender: str, recorder: Recorder) -> None:
    try:
        for line in iter(source.readline, b""):
            recorder.see(sender, line)  # first: the answer to a request may come back before this returns
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError):
                break
    finally:
        try:
            sink.close()
        except (BrokenPipeError, OSError):
            pass


def record(command: list[str], out: Path, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Run the real server `command`, pass our stdin to it and its stdout to ours, and record
    the traffic in `out`. Returns the server's exit code."""
    if not command:
        raise ValueError("no server command given: put it after --")
    out.mkdir(parents=True, exist_ok=True)
    meta = {"command": command, "started": datetime.now(UTC).isoformat(), "transport": "stdio"}
    (out / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    recorder = Recorder(out)
    assert server.stdin is not None and server.stdout is not None
    client_in = stdin or sys.stdin.buffer
    client_out = stdout or sys.stdout.buffer
    up = threading.Thread(target=_pump, args=(client_in, server.stdin, "client", recorder), daemon=True)
    down = threading.Thread(target=_pump, args=(server.stdout, client_out, "server", recorder), daemon=True)
    up.start()
    down.start()
    left_at: float | None = None
    while down.is_alive():  # until the server closes its output
        down.join(timeout=0.5)
        if not up.is_alive() and left_at is None:
            left_at = time.monotonic()  # the client hung up; the server should follow
        if left_at is not None and time.monotonic() - left_at > EXIT_GRACE_S and server.poll() is None:
            server.terminate()
    try:
        code = server.wait(timeout=EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        server.kill()
        code = server.wait()
    server.stdout.close()
    if not up.is_alive():  # else the client is still connected to a server that has gone: it sees EOF
        server.stdin.close()
    recorder.close()
    return code


# Reading recordings, within their bounds: `mcpsim.twins.recordings._reading`.


# -- learning from recordings ------------------------------------------------------------------

FAULT_PATTERNS = {
    "timeout": re.compile(r"timed? ?out|timeout|ETIMEDOUT|deadline exceeded", re.I),
    "rate_limit": re.compile(r"rate.?limit|too many requests|\b429\b|quota", re.I),
    "transient": re.compile(r"ECONNRESET|ECONNREFUSED|EAI_AGAIN|unavailable|\b50[234]\b|temporar|try again", re.I),
}


def fault_kind(text: str) -> str | None:
    """The fault kind an error message shows (timeout, rate_limit, transient), or None for a
    business error."""
    for kind, pattern in FAULT_PATTERNS.items():
        if pattern.search(text):
            return kind
    return None


def template(text: str, arguments: dict[str, Any]) -> str:
    """A message with the call's arguments replaced by placeholders: top-level text arguments
    by `{args.NAME}`, text inside lists and objects by `{key}`."""
    found: list[tuple[str, str]] = [(v, f"{{args.{k}}}") for k, v in arguments.items() if isinstance(v, str)]
    nested = [v for k, v in arguments.items() if not isinstance(v, str)]
    found += [(t, "{key}") for t in texts_in(nested)]
    # each value is one pass over the text: a call with thousands of texts in its arguments is
    # searched for its longest MAX_TEMPLATE_VALUES only
    longest = sorted((p for p in found if len(p[0]) >= 2), key=lambda p: -len(p[0]))
    for value, placeholder in longest[: lim.MAX_TEMPLATE_VALUES]:
        text = text.replace(value, placeholder)
    return text


def _rows_in(spec: TwinSpec, tool: TwinTool, call: Call) -> list[tuple[str, dict[str, Any]]]:
    """(entity, record) for each record a successful read or list answer shows."""
    found: list[tuple[str, dict[str, Any]]] = []
    op = tool.operation
    if op.kind not in ("read", "list"):
        return found
    if isinstance(call.structured, dict):
        for name, schema in properties_of(inline_refs(tool.output_schema or {})).items():
            items = object_items(first_option(schema))
            for entity_name, e in spec.entities.items():
                if items is not None and set(e.key) <= set(items["properties"]) <= set(e.properties):
                    found += [(entity_name, dict(r)) for r in call.structured.get(name) or [] if isinstance(r, dict)]
    key = call.arguments.get(op.keys or "")
    if op.kind == "read" and op.entity and isinstance(key, str) and not found:
        e = spec.entities[op.entity]
        fields = [f for f in e.properties if f not in e.key]
        if isinstance(call.structured, dict):
            values = {f: call.structured[f] for f in fields if f in call.structured}
        else:
            values = {fields[0]: call.text} if len(fields) == 1 else {}
        if values:
            found.append((op.entity, {e.key[0]: key, **values}))
    return found


def _written_keys(spec: TwinSpec, tool: TwinTool, call: Call) -> list[tuple[str, str]]:
    op = tool.operation
    if op.kind not in ("create", "upsert", "rename") or not op.entity:
        return []
    e = spec.entities[op.entity]
    if op.kind == "rename":
        return [(op.entity, str(call.arguments.get(op.target or "")))]
    records = call.arguments.get(op.items) if op.items else [call.arguments]
    return [(op.entity, k) for r in records or [] if isinstance(r, dict) and (k := key_of(e, r)) is not None]


def learn(spec: TwinSpec, recordings: list[Recording]) -> TwinSpec:
    """The twin seeded from recordings: the records the server held before each session (seen in
    reads, not written earlier in the session), the answers of tools it cannot simulate, message
    templates for writes and missing records, and a fault profile of the error kinds seen."""
    tools = {t.name: t for t in spec.tools}
    seeds: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in spec.entities}
    answers: dict[str, list[RecordedAnswer]] = {}
    oks: dict[str, Counter[str]] = {}
    errors: dict[str, Counter[str]] = {}
    kinds: dict[str, Counter[str]] = {}
    totals: Counter[str] = Counter()
    for recording in recordings:
        written: set[tuple[str, str]] = set()
        for call in recording.calls:
            tool = tools.get(call.tool)
            if tool is None:
                continue
            totals[call.tool] += 1
            kind = fault_kind(call.text) if call.is_error else None
            if kind is not None:
                kinds.setdefault(call.tool, Counter())[kind] += 1
                continue
            if call.is_error:  # as the real server's tool wrote it: a twin's SDK adds its own prefix
                call = replace(call, text=SDK_ERROR_PREFIX.sub("", call.text))
            if tool.operation.kind == "call":
                answers.setdefault(call.tool, []).append(
                    RecordedAnswer(
                        arguments=call.arguments, is_error=call.is_error, text=call.text, structured=call.structured
                    )
                )
            if call.is_error:
                errors.setdefault(call.tool, Counter())[template(call.text, call.arguments)] += 1
                continue
            for entity, row in _rows_in(spec, tool, call):
                key = key_of(spec.entities[entity], row)
                if key is not None and (entity, key) not in written:
                    seeds[entity].setdefault(key, row)
            written.update(_written_keys(spec, tool, call))
            if tool.operation.kind in WRITES:
                oks.setdefault(call.tool, Counter())[template(call.message, call.arguments)] += 1
    learned = []
    for tool in spec.tools:
        update: dict[str, Any] = {"errors": [t for t, _ in errors.get(tool.name, Counter()).most_common()]}
        seen_ok = oks.get(tool.name, Counter())
        if len(seen_ok) == 1 and _is_message_tool(tool):
            update["ok_message"] = next(iter(seen_ok))
        keyed = [t for t in update["errors"] if "{key}" in t or f"{{args.{tool.operation.keys}}}" in t]
        if keyed and tool.operation.kind != "call":
            update["not_found"] = keyed[0].replace(f"{{args.{tool.operation.keys}}}", "{key}")
        learned.append(tool.model_copy(update=update))
    return spec.model_copy(
        update={
            "tools": learned,
            "seed_rows": {e: list(rows.values()) for e, rows in seeds.items() if rows},
            "synthetic_rows": 0,
            "answers": answers,
            "faults": _fault_profile(spec.name, kinds, totals),
        }
    )


def _is_message_tool(tool: TwinTool) -> bool:
    """A write whose answer is a message (text, or an object with one text field), not records."""
    props = properties_of(tool.output_schema)
    return tool.output_schema is None or sum(1 for s in props.values() if first_option(s).get("type") == "string") == 1


def _fault_profile(name: str, kinds: dict[str, Counter[str]], totals: Counter[str]) -> dict[str, Any] | None:
    rules = [
        {"tools": tool, "rates": {kind: round(n / totals[tool], 4) for kind, n in seen.items()}}
        for tool, seen in sorted(kinds.items())
    ]
    if not rules:
        return None
    profile = FaultProfile.model_validate({"name": f"{name}-recorded"[:41], "rules": rules})
    return profile.model_dump(mode="json", exclude_defaults=True) | {"name": profile.name}


# -- fidelity ---------------------------------------------------------------------------------


def shape(value: Any) -> Any:
    """The structure of a value without its data: types, keys, and the shapes of list items."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in value:
            if (s := shape(item)) not in shapes:
                shapes.append(s)
        return ["list", *shapes] if shapes else ["list"]
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    return "text"


def _answer_shape(is_error: bool, structured: Any, text: str) -> Any:
    if is_error:
        return "error"
    if structured is not None:
        return shape(structured)
    try:
        return shape(json.loads(text))
    except ValueError:
        return "text"


def _same_values(recorded: Call, is_error: bool, structured: Any, text: str) -> bool:
    """Structured answers compare as data; texts with whitespace runs as one space, and errors
    without the prefix the Python MCP SDK writes before every tool error (a twin's answers go
    through it; a real server written with it has it too)."""
    if recorded.structured is not None and not recorded.is_error:
        return bool(recorded.structured == structured)
    if is_error and recorded.is_error:
        text, expected = SDK_ERROR_PREFIX.sub("", text), SDK_ERROR_PREFIX.sub("", recorded.text)
        return " ".join(expected.split()) == " ".join(text.split())
    return " ".join(recorded.text.split()) == " ".join(text.split())


FIDELITY_COUNTS = ("calls", "same_outcome", "same_shape", "same_values")  # what a replay counts


@dataclass
class FidelityReport:
    """A replay's counts (`FIDELITY_COUNTS`: the calls, and how many of them gave the same
    outcome, shape and values), in all and per tool, and the first calls whose values differed."""

    totals: Counter[str] = field(default_factory=Counter)
    per_tool: dict[str, Counter[str]] = field(default_factory=dict)
    differences: list[dict[str, Any]] = field(default_factory=list)

    def count(self, tool: str, *same: bool) -> None:
        """One call of `tool`, and whether it gave the same outcome, shape and values."""
        counts = dict(zip(FIDELITY_COUNTS, (1, *map(int, same)), strict=True))
        self.totals.update(counts)
        self.per_tool.setdefault(tool, Counter()).update(counts)

    def to_json(self) -> dict[str, Any]:
        calls = self.totals["calls"]
        return {
            "calls": calls,
            **{key: round(self.totals[key] / calls, 4) if calls else 0.0 for key in FIDELITY_COUNTS[1:]},
            "per_tool": {t: dict(c) for t, c in sorted(self.per_tool.items())},
            "differences": self.differences[:20],
        }


async def fidelity(spec: TwinSpec, recording: Recording, seed: int = 0) -> FidelityReport:
    """Replay a recording's tool calls, in order, against a fresh episode of the twin (served to
    the SDK's client in memory) and compare each answer with the recorded one: the same success
    or error, the same shape, the same values."""
    world = compile_twin(spec)
    episode = Episode.create(world, seed, "default", templates=TemplateCache(None))
    report = FidelityReport()
    async with Client(build_server(world, lambda _id: episode)) as client:
        for call in recording.calls:
            try:
                result = await client.call_tool(call.tool, call.arguments)
                is_error, structured = result.is_error, result.structured_content
                text = "\n".join(getattr(c, "text", "") for c in result.content)
            except MCPError as exc:
                is_error, structured, text = True, None, str(exc)
            outcome = is_error == call.is_error
            same_shape = _answer_shape(is_error, structured, text) == _answer_shape(
                call.is_error, call.structured, call.text
            )
            values = outcome and _same_values(call, is_error, structured, text)
            report.count(call.tool, outcome, same_shape, values)
            if not values:
                report.differences.append(
                    {
                        "tool": call.tool,
                        "arguments": call.arguments,
                        "recorded": (call.structured if call.structured is not None else call.text),
                        "twin": (structured if structured is not None else text),
                        "recorded_error": call.is_error,
                        "twin_error": is_error,
                    }
                )
    episode.close()
    return report
