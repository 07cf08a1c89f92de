"""Hostile recordings (issue 29, item 5): a recording is untrusted data, so a crafted one (huge,
deep, malformed, of the wrong types, with code-looking strings or regex bombs in its messages, with
too many tools or calls) is refused with an error naming the file, the line and the limit or the
part, after bounded work; and a twin's input schema cannot make an agent's argument backtrack.
Each test fails on the code before these bounds (a traceback, a hang or silent acceptance) unless
its docstring says it only guards."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.engine._episode import Episode
from mcpsim.twins import _limits as lim
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._world import compile_twin
from mcpsim.twins.recordings._reading import RecordingError, load_recording
from mcpsim.twins.recordings._stdio import Recorder, learn, template
from tests.twins.test_twin import SURFACE

ROOT = Path(__file__).parents[2]
READ = {"method": "tools/call", "params": {"name": "notes_read_note", "arguments": {"title": "Ghost"}}}


def write(folder: Path, *lines: object) -> Path:
    file = folder / "calls.jsonl"
    file.write_bytes(b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines))
    return file


def refused(path: Path) -> str:
    with pytest.raises(RecordingError) as caught:
        load_recording(path)
    return str(caught.value)


def answer(text: str, *, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def nested(depth: int) -> bytes:
    return (
        b'{"method": "tools/call", "params": {"name": "t", "arguments": {"a": ' + b"[" * depth + b"]" * depth + b"}}}"
    )


# -- size, lines, nesting --------------------------------------------------------------------


def test_a_file_past_its_size_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(lim, "MAX_RECORDING_BYTES", 10_000)
    file = write(tmp_path, *[READ | {"result": answer("x" * 100)}] * 100)
    assert refused(tmp_path) == f"{file}: {file.stat().st_size:,} bytes, the limit is 10,000 (MAX_RECORDING_BYTES)"


def test_a_line_past_its_limit_is_refused_with_its_number(tmp_path, monkeypatch):
    monkeypatch.setattr(lim, "MAX_RECORDING_LINE", 1_000)
    file = write(tmp_path, READ | {"result": answer("ok")}, READ | {"result": answer("x" * 5_000)})
    assert refused(file) == f"{file}:2: a line of more than 1,000 bytes, the limit is 1,000 (MAX_RECORDING_LINE)"


def test_too_many_lines_tools_and_calls_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(lim, "MAX_RECORDING_CALLS", 100)
    write(tmp_path, *[READ | {"result": answer("ok")}] * 101)
    assert refused(tmp_path).endswith(":101: more than 100 tool calls, the limit is 100 (MAX_RECORDING_CALLS)")
    tools = [SURFACE.tools[0] | {"name": f"t{i}"} for i in range(lim.MAX_RECORDING_TOOLS + 1)]
    write(tmp_path, {"method": "tools/list", "result": {"tools": tools}})
    assert refused(tmp_path).endswith(":1: 1,001 tools, the limit is 1,000 (MAX_RECORDING_TOOLS)")
    monkeypatch.setattr(lim, "MAX_RECORDING_LINES", 50)
    write(tmp_path, *[{"method": "notifications/progress"}] * 51)
    assert refused(tmp_path).endswith(": more than 50 lines, the limit is 50 (MAX_RECORDING_LINES)")


def test_deep_nesting_is_refused_never_a_recursion_error(tmp_path):
    """Past Python's own limit (a RecursionError before) and within it but past the recording's
    (accepted before, then walked by recursive code)."""
    for depth in (100_000, lim.MAX_RECORDING_DEPTH + 10):
        file = write(tmp_path, READ | {"result": answer("ok")}, nested(depth), READ | {"result": answer("ok")})
        message = refused(tmp_path)
        assert message == f"{file}:2: nested too deeply, the limit is 64 (MAX_RECORDING_DEPTH)"


# -- malformed lines and wrong types ---------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"\xff\xfe not text", "not UTF-8 text (invalid start byte at byte 0)"),
        (b'{"method": "tools/call", "duration_ms": NaN}', "an unreadable value (NaN is not a JSON number)"),
        (b'{"method": "tools/call", "id": ' + b"9" * 5_000 + b"}", "an unreadable value (Exceeds the limit"),
        (b'["tools/call"]', "a line is a JSON object, got list"),
        (b'"tools/call"', "a line is a JSON object, got text"),
    ],
)
def test_a_malformed_line_names_its_file_and_line(tmp_path, line, expected):
    file = write(tmp_path, READ | {"result": answer("ok")}, line, READ | {"result": answer("ok")})
    assert refused(tmp_path).startswith(f"{file}:2: {expected}")


def test_a_line_that_is_not_json_names_its_line_and_a_torn_last_line_is_dropped(tmp_path):
    """A last line that ends with its newline was written whole: one that is not JSON is refused
    (before, any last line was dropped); one without its newline was cut short by a crash."""
    file = write(tmp_path, READ | {"result": answer("ok")}, b'{"method": "tools/call", "params": {"name"')
    assert refused(tmp_path) == f"{file}:2: not JSON (Expecting ':' delimiter at column 43)"
    file.write_bytes(file.read_bytes().rstrip(b"\n"))  # cut short by a crash: no newline
    assert len(load_recording(tmp_path).calls) == 1


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"params": "notes_read_note"}, "params is a JSON object, got text"),
        ({"params": {"name": "t", "arguments": [1, 2]}}, "params.arguments is a JSON object, got list"),
        ({"params": {"arguments": {}}}, "params.name is text, got null"),
        ({"params": {"name": ["t"]}}, "params.name is text, got list"),
        (READ | {"error": "boom"}, "error is a JSON object, got text"),
        (READ | {"error": {"message": {"nested": 1}}}, "error.message is text, got object"),
        (READ | {"result": "ok"}, "result is a JSON object, got text"),
        (READ | {"result": {"content": 7}}, "result.content is a list, got a number"),
        (READ | {"result": {"content": ["ok"]}}, "result.content[0] is a JSON object, got text"),
        (READ | {"result": {"content": [{"type": "text", "text": 7}]}}, "result.content[0].text is text, got a number"),
        (READ | {"duration_ms": "soon"}, "duration_ms is a number, got text"),
    ],
)
def test_a_part_of_the_wrong_type_is_named(tmp_path, record, expected):
    file = write(tmp_path, {"method": "tools/call"} | record)
    assert refused(tmp_path) == f"{file}:1: {expected}"


def test_a_server_info_or_tool_list_of_the_wrong_type_is_named(tmp_path):
    file = write(tmp_path, {"method": "initialize", "result": {"serverInfo": "evil"}})
    assert refused(tmp_path) == f"{file}:1: result.serverInfo is a JSON object, got text"
    file = write(tmp_path, {"method": "tools/list", "result": {"tools": "abc"}})
    assert refused(tmp_path) == f"{file}:1: result.tools is a list, got text"


def test_the_cli_reports_a_bad_recording_without_a_traceback(tmp_path):
    twin = tmp_path / "notes.twin.json"
    twin.write_text(infer_twin(SURFACE).model_dump_json())
    write(tmp_path, nested(100_000))
    result = CliRunner().invoke(main, ["fidelity", str(twin), str(tmp_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"Error: {tmp_path / 'calls.jsonl'}:1: nested too deeply" in result.output


def test_the_proxy_keeps_a_message_nested_past_pythons_limit_as_text(tmp_path):
    """A server's message nested past Python's limit stopped the recorder (a RecursionError in
    its thread); it is recorded as an unparsed line and the recording reads back."""
    recorder = Recorder(tmp_path)
    recorder.see("server", b"[" * 100_000 + b"]" * 100_000 + b"\n")
    recorder.close()
    line = json.loads((tmp_path / "calls.jsonl").read_text())
    assert line["from"] == "server" and len(line["unparsed"]) == 200_000
    assert load_recording(tmp_path).calls == []


# -- what a twin learns: code-looking strings, regex bombs, many values ----------------------

CODE_LIKE = [
    "__import__('os').system('touch PWNED')",
    "{{7*7}}",
    "${7*7}",
    "#{7*7}",
    "{args.__class__.__mro__}",
    "{key.__init__.__globals__}",
    "%s%s%n",
    "(a+)+$",
    "{key}{key}{key}{key}{key}{key}{key}{key}{key}",
]


def test_code_looking_strings_and_regex_bombs_stay_data(tmp_path, monkeypatch):
    """Only guards: recorded messages become templates filled by plain substitution, never
    evaluated nor compiled to a pattern; each is replayed as the real server said it."""
    monkeypatch.chdir(tmp_path)
    lines = [
        READ
        | {"params": {"name": "notes_read_note", "arguments": {"title": f"T{i}"}}, "result": answer(text, error=True)}
        for i, text in enumerate(CODE_LIKE)
    ]
    lines += [
        {"method": "tools/call", "params": {"name": "notes_sync", "arguments": {"force": True}}, "result": answer(text)}
        for text in CODE_LIKE
    ]
    write(tmp_path, *lines)
    spec = learn(infer_twin(SURFACE), [load_recording(tmp_path)])
    assert set(spec.tool("notes_read_note").errors) == set(CODE_LIKE)
    episode = Episode.create(compile_twin(spec), 0, "default")
    assert [
        episode.call("notes_sync", {"force": True}).value for _ in CODE_LIKE
    ] == CODE_LIKE  # the n-th call, the n-th answer
    missing = episode.call("notes_read_note", {"title": "a" * 40 + "!"})
    assert missing.error == ("a" * 40 + "!") * 9  # the keyed message, filled by plain substitution
    assert not (tmp_path / "PWNED").exists()


def test_a_message_is_searched_for_a_bounded_number_of_argument_values():
    """A call with thousands of texts in its arguments made each one a pass over its message (20,000
    values and a 2 MB message took 40 s): the longest MAX_TEMPLATE_VALUES are searched for."""
    values = [f"v{i:05d}" for i in range(20_000)]
    longest = "L" * 10
    message = f"failed on {longest} and {values[-1]}"
    assert template(message, {"ids": [*values, longest]}) == f"failed on {{key}} and {values[-1]}"
    few = {"ids": values[: lim.MAX_TEMPLATE_VALUES]}
    assert template(f"failed on {values[3]}", few) == "failed on {key}"


# -- a twin's input schema: patterns matched in linear time ----------------------------------


def run_bounded(code: str) -> str:
    """Run `code` in a child (a backtracking match holds the interpreter lock, so no thread can
    stop it) and give its output; a generous wall limit turns a hang into a failure."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    return done.stdout.strip().splitlines()[-1]  # after the engine's log lines


def test_a_twins_backtracking_pattern_cannot_hold_an_agents_call():
    """`(a+)+$` in a real server's input schema, checked with `jsonschema`'s `re.search`, took
    2^40 steps on a 40-character argument: the twin's validator matches it in linear time."""
    said = run_bounded(
        """
        import dataclasses
        import json
        from mcpsim.engine._episode import Episode
        from mcpsim.twins._infer import infer_twin
        from mcpsim.twins._world import compile_twin
        from tests.twins.test_twin import SURFACE, tool

        bomb = {"type": "string", "pattern": "(a+)+$"}
        hostile = tool("notes_rename", {"title": bomb}, ["title"])
        keys = tool("notes_tag", {"tags": {"type": "object", "patternProperties": {"^(a+)+$": {"type": "string"}},
                                           "additionalProperties": False}}, ["tags"])
        surface = dataclasses.replace(SURFACE, tools=[*SURFACE.tools, hostile, keys])
        episode = Episode.create(compile_twin(infer_twin(surface)), 0, "default")
        argument = "a" * 40 + "!"
        print(json.dumps([episode.call("notes_rename", {"title": argument}).error,
                          episode.call("notes_tag", {"tags": {argument: "x"}}).error,
                          episode.call("notes_rename", {"title": "aaaa"}).is_error]))
        """
    )
    rename, tag, valid_refused = json.loads(said)
    assert "does not match '(a+)+$'" in rename
    assert "does not match any of the regexes" in tag
    assert valid_refused is False


def test_a_pattern_the_linear_engine_cannot_run_refuses_the_value_with_the_reason():
    from mcpsim.twins._schemas import schema_validator

    validator = schema_validator({"type": "object", "properties": {"x": {"type": "string", "pattern": "^(?!a)"}}})
    errors = [e.message for e in validator.iter_errors({"x": "b"})]
    assert errors == [
        "the schema's pattern '^(?!a)' cannot be checked in linear time: "
        "look-around, including look-ahead and look-behind, is not supported"
    ]
