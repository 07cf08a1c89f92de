"""Reading a recording (`calls.jsonl`, one JSON object a line) as untrusted data, within the bounds
of `mcpsim.twins._limits`: the file is read line by line, no line further than its limit; each line
is parsed as strict JSON (no NaN, no number Python cannot convert), walked without recursion for
its depth, and every part a twin uses is checked for its type before it is used. A recording past
a bound, or with a line that is not what `mcpsim record` writes, is a `RecordingError` naming the
file, the line and the limit or the part: `calls.jsonl:7: params.arguments is a JSON object, got
list`. Only a last line without its newline (cut short by a crash) is skipped when it is not JSON."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcpsim.twins import _limits as lim

CALLS_FILE = "calls.jsonl"


class RecordingError(ValueError):
    """A recording that cannot be read: the file, the line and what is wrong with it."""


@dataclass
class Call:
    """One recorded tools/call."""

    tool: str
    arguments: dict[str, Any]
    is_error: bool
    text: str
    structured: Any
    duration_ms: float | None
    protocol_error: dict[str, Any] | None = None

    @property
    def message(self) -> str:
        """The answer as a message: a structured answer's only text, else the text content."""
        if isinstance(self.structured, dict):
            texts = [v for v in self.structured.values() if isinstance(v, str)]
            if len(texts) == 1 and len(self.structured) <= 2:
                return texts[0]
        return self.text


@dataclass
class Recording:
    path: Path
    calls: list[Call] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)  # the last tools/list answer
    server: dict[str, Any] = field(default_factory=dict)  # serverInfo from initialize


def _limit(where: str, what: str, limit: str) -> RecordingError:
    return RecordingError(f"{where}: {what}, the limit is {getattr(lim, limit):,} ({limit})")


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "text", bool: "true or false", type(None): "null"}.get(
        type(value), "a number"
    )


class _Line:
    """One parsed line, and the checks of its parts, each error naming the line and the part."""

    def __init__(self, where: str, record: dict[str, Any]) -> None:
        self.where, self.record = where, record

    def wrong(self, part: str, expected: str, value: Any) -> RecordingError:
        return RecordingError(f"{self.where}: {part} is {expected}, got {_type_name(value)}")

    def obj(self, value: Any, part: str) -> dict[str, Any]:
        """An object, or {} for a missing one."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.wrong(part, "a JSON object", value)
        return value

    def objects(self, value: Any, part: str) -> list[dict[str, Any]]:
        """A list of objects, or [] for a missing one."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.wrong(part, "a list", value)
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.wrong(f"{part}[{i}]", "a JSON object", item)
        return value

    def text(self, value: Any, part: str) -> str:
        if not isinstance(value, str):
            raise self.wrong(part, "text", value)
        return value

    def call(self) -> Call:
        params = self.obj(self.record.get("params"), "params")
        error = self.obj(self.record.get("error"), "error") or None
        result = self.obj(self.record.get("result"), "result")
        content = self.objects(result.get("content"), "result.content")
        texts = [
            self.text(c.get("text", ""), f"result.content[{i}].text")
            for i, c in enumerate(content)
            if c.get("type") == "text"
        ]
        duration = self.record.get("duration_ms")
        if duration is not None and (isinstance(duration, bool) or not isinstance(duration, int | float)):
            raise self.wrong("duration_ms", "a number", duration)
        return Call(
            tool=self.text(params.get("name"), "params.name"),
            arguments=self.obj(params.get("arguments"), "params.arguments"),
            is_error=bool(error) or bool(result.get("isError")),
            text=self.text(error.get("message", ""), "error.message") if error else "\n".join(texts),
            structured=result.get("structuredContent"),
            duration_ms=duration,
            protocol_error=error,
        )


def _lines(handle: IO[bytes], file: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(number, bytes, last) for each line, none read past its limit nor the file past its own."""
    total = 0
    line = handle.readline(lim.MAX_RECORDING_LINE + 1)
    n = 0
    while line:
        n += 1
        if len(line) > lim.MAX_RECORDING_LINE:
            raise _limit(f"{file}:{n}", f"a line of more than {lim.MAX_RECORDING_LINE:,} bytes", "MAX_RECORDING_LINE")
        if n > lim.MAX_RECORDING_LINES:
            raise _limit(str(file), f"more than {lim.MAX_RECORDING_LINES:,} lines", "MAX_RECORDING_LINES")
        total += len(line)
        if total > lim.MAX_RECORDING_BYTES:
            raise _limit(str(file), f"more than {lim.MAX_RECORDING_BYTES:,} bytes", "MAX_RECORDING_BYTES")
        following = handle.readline(lim.MAX_RECORDING_LINE + 1)
        yield n, line, not following and not line.endswith(b"\n")
        line = following


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse(raw: bytes, where: str) -> Any:
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _limit(where, "nested too deeply", "MAX_RECORDING_DEPTH") from None
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # NaN, or an integer of more digits than Python converts
        raise RecordingError(f"{where}: an unreadable value ({str(exc)[:120]})") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:  # bounded by the line's size
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > lim.MAX_RECORDING_DEPTH:
                raise _limit(where, "nested too deeply", "MAX_RECORDING_DEPTH")
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return value


def load_recording(path: str | Path) -> Recording:
    """A recording (its directory, or its `calls.jsonl`), read within the bounds: every tools/call
    exchange, the last tools/list answer and the server's info."""
    path = Path(path)
    file = path / CALLS_FILE if path.is_dir() else path
    found = Recording(path)
    try:
        handle = file.open("rb")
    except OSError as exc:
        raise RecordingError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    with handle:
        if (size := os.fstat(handle.fileno()).st_size) > lim.MAX_RECORDING_BYTES:  # before reading a byte
            raise _limit(str(file), f"{size:,} bytes", "MAX_RECORDING_BYTES")
        for n, raw, last in _lines(handle, file):
            if not raw.strip():
                continue
            where = f"{file}:{n}"
            try:
                record = _parse(raw, where)
            except RecordingError:
                if last:
                    break  # a last line cut short by a crash
                raise
            if not isinstance(record, dict):
                raise RecordingError(f"{where}: a line is a JSON object, got {_type_name(record)}")
            _read(_Line(where, record), found)
    return found


def _read(line: _Line, found: Recording) -> None:
    method = line.record.get("method")
    if method in ("initialize", "server/discover") and isinstance(line.record.get("result"), dict):
        result = line.record["result"]  # legacy, 2026-07-28
        meta = line.obj(result.get("_meta"), "result._meta")
        info = result.get("serverInfo") or meta.get("io.modelcontextprotocol/serverInfo")
        found.server = dict(line.obj(info, "result.serverInfo"))
    elif method == "tools/list" and isinstance(line.record.get("result"), dict):
        tools = line.objects(line.record["result"].get("tools"), "result.tools")
        if len(tools) > lim.MAX_RECORDING_TOOLS:
            raise _limit(line.where, f"{len(tools):,} tools", "MAX_RECORDING_TOOLS")
        found.tools = list(tools)
    elif method == "tools/call":
        if len(found.calls) >= lim.MAX_RECORDING_CALLS:
            raise _limit(line.where, f"more than {lim.MAX_RECORDING_CALLS:,} tool calls", "MAX_RECORDING_CALLS")
        found.calls.append(line.call())
