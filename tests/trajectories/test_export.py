"""Exporters, read back the way their consumers read them: OpenAI's fine-tuning chat shape, TRL
conversations, verifiers rollout results, parquet through pyarrow."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from mcpsim.trajectories import _export as export_module
from mcpsim.trajectories._export import ExportError, export
from mcpsim.trajectories._records import CallLog, FunctionCall, Message, ToolCall, ToolDef, Trajectory, Usage

GOOD_ARGS = '{"account_id": "acc_1"}'
BAD_ARGS = '{"account_id": '  # a model's garbage: not JSON at all
NOT_AN_OBJECT = '["acc_1"]'  # JSON, but not an arguments object

TOOLS = [
    ToolDef(
        function={
            "name": "get_account",
            "description": "Read one account.",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        }
    ),
    ToolDef(
        function={
            "name": "close_account",
            "description": "Close an account.",
            "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}},
        }
    ),
]


def call(id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=id, function=FunctionCall(name=name, arguments=arguments))


# Which episode a trajectory is: its fields, and the `info` the verifiers export gives it.
IDENTITY = {
    "world": "ledger",
    "world_version": "v1",
    "task_id": "close-acc",
    "trial": 0,
    "seed": 7,
    "agent": "scripted",
}


def trajectory(episode: str, **fields: Any) -> Trajectory:
    """A completed, graded episode: one valid and one garbage call in a turn, both answered."""
    base: dict[str, Any] = {
        "run_id": "run1",
        "episode_id": episode,
        **IDENTITY,
        "status": "completed",
        "termination": "answered",
        "messages": [
            Message(role="system", content="You are a bank clerk."),
            Message(role="user", content="Close account acc_1."),
            Message(
                role="assistant",
                tool_calls=[call("c1", "get_account", GOOD_ARGS), call("c2", "close_account", BAD_ARGS)],
            ),
            Message(role="tool", tool_call_id="c1", name="get_account", content='{"id": "acc_1"}'),
            Message(role="tool", tool_call_id="c2", name="close_account", content="Error: invalid arguments"),
            Message(role="assistant", content="Let me retry.", tool_calls=[call("c3", "close_account", GOOD_ARGS)]),
            Message(role="tool", tool_call_id="c3", name="close_account", content='{"closed": true}'),
            Message(role="assistant", content="Account acc_1 is closed."),
        ],
        "tools": TOOLS,
        "calls": [
            CallLog(index=0, tool="get_account", arguments={"account_id": "acc_1"}, ok=True, tool_call_id="c1"),
            CallLog(
                index=1,
                tool="close_account",
                arguments=BAD_ARGS,
                ok=False,
                error="invalid arguments",
                tool_call_id="c2",
            ),
            CallLog(index=2, tool="close_account", arguments={"account_id": "acc_1"}, ok=True, tool_call_id="c3"),
        ],
        "verdict": {
            "task_id": "close-acc",
            "passed": True,
            "reward": 1.0,
            "partial_reward": 1.0,
            "failure": None,
            "checks": [
                {
                    "type": "row",
                    "requirement": "acc_1 is closed",
                    "weight": 1.0,
                    "noop_passes": False,
                    "passed": True,
                    "reason": "closed",
                }
            ],
        },
        "reward": 1.0,
        "partial_reward": 1.0,
        "state_hash": "abc123",
        "usage": Usage(prompt_tokens=300, completion_tokens=40, total_tokens=340, model_calls=3),
        "started_at": "2026-01-01T00:00:00Z",
        "duration_s": 2.5,
    }
    base.update(fields)
    return Trajectory(**base)


def truncated() -> Trajectory:
    """Cut by the step limit after the model called a tool that never answered; graded as a fail."""
    return trajectory(
        "ep-trunc",
        task_id="refund",
        trial=1,
        termination="step_limit",
        reward=0.0,
        partial_reward=0.5,
        verdict={
            "task_id": "refund",
            "passed": False,
            "reward": 0.0,
            "partial_reward": 0.5,
            "failure": None,
            "checks": [
                {
                    "type": "row",
                    "requirement": "refund issued",
                    "weight": 1.0,
                    "noop_passes": False,
                    "passed": False,
                    "reason": "no refund row",
                },
                {
                    "type": "answer",
                    "requirement": "says the amount",
                    "weight": 1.0,
                    "noop_passes": False,
                    "passed": True,
                    "reason": "stated",
                },
            ],
        },
        messages=[
            Message(role="system", content="You are a bank clerk."),
            Message(role="user", content="Refund my fee."),
            Message(role="assistant", tool_calls=[call("t1", "get_account", NOT_AN_OBJECT)]),
            Message(role="tool", tool_call_id="t1", name="get_account", content="Error: bad arguments"),
            Message(role="assistant", content="Checking.", tool_calls=[call("t2", "get_account", GOOD_ARGS)]),
        ],
        calls=[CallLog(index=0, tool="get_account", arguments=NOT_AN_OBJECT, ok=False, error="bad arguments")],
    )


def write_run(run: Path, *trajectories: Trajectory, tail: str = "") -> Path:
    run.mkdir(parents=True, exist_ok=True)
    lines = "".join(t.model_dump_json() + "\n" for t in trajectories)
    (run / "trajectories.jsonl").write_text(lines + tail, encoding="utf-8")
    return run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Two completed episodes, a cancelled one, an errored one, and a last line cut short by a crash."""
    return write_run(
        tmp_path / "run",
        trajectory("ep-ok"),
        truncated(),
        trajectory(
            "ep-cancelled",
            task_id="later",
            status="cancelled",
            termination="cancelled",
            reward=None,
            verdict=None,
            snapshot="/tmp/x.sqlite",
        ),
        trajectory(
            "ep-error",
            task_id="boom",
            status="error",
            termination="server_error",
            reward=0.0,
            error="ConnectError: refused",
        ),
        tail='{"world": "ledger", "world_version": "v1", "messages": [{"role": "us',
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check_openai_line(row: dict[str, Any], source: Trajectory) -> None:
    """What OpenAI's chat fine-tuning accepts, checked key by key."""
    assert set(row) == {"messages", "tools"}
    for tool in row["tools"]:
        assert set(tool) == {"type", "function"} and tool["type"] == "function"
        assert isinstance(tool["function"]["name"], str) and isinstance(tool["function"]["parameters"], dict)
        assert set(tool["function"]) <= {"name", "description", "parameters", "strict"}
    originals = {c.id: c.function.arguments for m in source.messages for c in m.tool_calls or []}
    called: set[str] = set()
    for m in row["messages"]:
        assert None not in m.values()
        if m["role"] == "assistant":
            assert set(m) <= {"role", "content", "tool_calls", "name", "weight"}
            assert "content" in m or m.get("tool_calls")
            for c in m.get("tool_calls", []):
                assert set(c) == {"id", "type", "function"} and c["type"] == "function"
                assert set(c["function"]) == {"name", "arguments"} and isinstance(c["function"]["name"], str)
                assert c["function"]["arguments"] == originals[c["id"]]  # the model's string, verbatim
                if export_module._arguments_object(originals[c["id"]]) is not None:
                    assert isinstance(json.loads(c["function"]["arguments"]), dict)
                called.add(c["id"])
        elif m["role"] == "tool":
            assert set(m) == {"role", "tool_call_id", "content"} and isinstance(m["content"], str)
            assert m["tool_call_id"] in called  # answers a call made before it
        else:
            assert m["role"] in ("system", "user") and isinstance(m["content"], str)


def test_openai_lines_are_exactly_messages_and_tools_in_openai_chat_shape(run, tmp_path):
    report = export(run, "openai", tmp_path / "out.jsonl")
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert report.written == len(rows) == 2
    for row, source in zip(rows, [trajectory("ep-ok"), truncated()], strict=True):
        check_openai_line(row, source)


def test_openai_omits_content_on_a_message_that_only_calls_tools_and_keeps_it_otherwise(run, tmp_path):
    export(run, "openai", tmp_path / "out.jsonl")
    assistant = [m for m in read_jsonl(tmp_path / "out.jsonl")[0]["messages"] if m["role"] == "assistant"]
    assert "content" not in assistant[0]
    assert assistant[1]["content"] == "Let me retry." and assistant[1]["tool_calls"][0]["id"] == "c3"
    assert assistant[2] == {"role": "assistant", "content": "Account acc_1 is closed."}


def test_openai_keeps_invalid_arguments_verbatim_and_weights_that_turn_zero(run, tmp_path):
    report = export(run, "openai", tmp_path / "out.jsonl")
    first, second = read_jsonl(tmp_path / "out.jsonl")
    garbage_turn, retry_turn = (m for m in first["messages"] if m.get("tool_calls"))
    assert garbage_turn["tool_calls"][1]["function"]["arguments"] == BAD_ARGS
    assert garbage_turn["weight"] == 0 and "weight" not in retry_turn
    assert second["messages"][2]["tool_calls"][0]["function"]["arguments"] == NOT_AN_OBJECT
    assert second["messages"][2]["weight"] == 0
    assert report.invalid_arguments == 2


def test_chat_formats_end_before_a_final_tool_call_that_never_got_a_result(run, tmp_path):
    for fmt in ("openai", "trl"):
        export(run, fmt, tmp_path / f"{fmt}.jsonl")
        messages = read_jsonl(tmp_path / f"{fmt}.jsonl")[1]["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
        assert all(c["id"] != "t2" for m in messages for c in m.get("tool_calls", []))


def test_an_episode_whose_tool_result_answers_no_call_is_skipped_as_unusable(tmp_path):
    orphan = trajectory(
        "ep-orphan",
        messages=[
            Message(role="user", content="hi"),
            Message(role="tool", tool_call_id="nope", content="?"),
            Message(role="assistant", content="hello"),
        ],
    )
    silent = trajectory("ep-silent", messages=[Message(role="system", content="s"), Message(role="user", content="hi")])
    source = write_run(tmp_path / "run", orphan, silent, trajectory("ep-ok"))
    with capture_logs() as logs:
        report = export(source, "openai", tmp_path / "out.jsonl")
    assert (report.written, report.skipped_unusable) == (1, 2)
    reasons = [e["reason"] for e in logs if e["event"] == "skipping an episode the format cannot hold"]
    assert reasons == ["a tool result answers no earlier call ('nope')", "no assistant message"]
    # verifiers and parquet are records, not chat templates: they keep both
    assert export(source, "verifiers", tmp_path / "v.jsonl").written == 3


def test_trl_gives_arguments_as_objects_and_wraps_invalid_ones_in_raw(run, tmp_path):
    export(run, "trl", tmp_path / "out.jsonl")
    first, second = read_jsonl(tmp_path / "out.jsonl")
    assert set(first) == {"messages", "tools", "reward", "task_id"}
    assert (first["reward"], first["task_id"], second["reward"], second["task_id"]) == (1.0, "close-acc", 0.0, "refund")
    calls = [c for row in (first, second) for m in row["messages"] for c in m.get("tool_calls", [])]
    assert all(isinstance(c["function"]["arguments"], dict) and c["type"] == "function" for c in calls)
    assert [c["function"]["arguments"] for c in calls] == [
        {"account_id": "acc_1"},
        {"_raw": BAD_ARGS},
        {"account_id": "acc_1"},
        {"_raw": NOT_AN_OBJECT},
    ]
    tool = first["messages"][3]
    assert tool == {"role": "tool", "content": '{"id": "acc_1"}', "tool_call_id": "c1", "name": "get_account"}
    assert all(isinstance(m["content"], str) for row in (first, second) for m in row["messages"])
    assert first["tools"][0]["function"]["name"] == "get_account"


VERIFIERS_TYPES = {
    "example_id": int,
    "prompt": list,
    "completion": list,
    "reward": float,
    "timing": dict,
    "is_completed": bool,
    "is_truncated": bool,
    "metrics": dict,
    "info": dict,
    "error": (str, type(None)),
    "stop_condition": str,
    "tool_defs": list,
    "token_usage": dict,
}


def test_verifiers_lines_have_exactly_the_rollout_fields_with_their_types(run, tmp_path):
    export(run, "verifiers", tmp_path / "out.jsonl")
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert len(rows) == 2
    for row in rows:
        assert set(row) == set(VERIFIERS_TYPES)
        for field, kind in VERIFIERS_TYPES.items():
            assert isinstance(row[field], kind), field
        assert 0 <= row["example_id"] < 2**53
        assert set(row["metrics"]) == {"partial_reward", "tool_calls", "tool_errors"}
        assert all(isinstance(v, (int, float)) for v in row["metrics"].values())
        assert set(row["token_usage"]) == {"input_tokens", "output_tokens"}
        assert set(row["timing"]) == {"duration_s"}
        for tool in row["tool_defs"]:
            assert set(tool) == {"name", "description", "parameters"}
        for m in row["prompt"] + row["completion"]:
            assert isinstance(m["content"], str)
            for c in m.get("tool_calls", []):
                assert set(c) == {"id", "name", "arguments"} and isinstance(c["arguments"], str)
    ok, trunc = rows
    assert [m["role"] for m in ok["prompt"]] == ["system", "user"]
    assert ok["completion"][0]["tool_calls"][1] == {"id": "c2", "name": "close_account", "arguments": BAD_ARGS}
    assert (ok["reward"], ok["is_completed"], ok["is_truncated"], ok["stop_condition"]) == (
        1.0,
        True,
        False,
        "answered",
    )
    assert ok["metrics"] == {"partial_reward": 1.0, "tool_calls": 3, "tool_errors": 1}
    assert ok["token_usage"] == {"input_tokens": 300, "output_tokens": 40}
    assert ok["timing"] == {"duration_s": 2.5}
    assert ok["info"] == {
        **IDENTITY,
        "episode_id": "ep-ok",
        "verdict": {
            "passed": True,
            "failure": None,
            "checks_passed": 1,
            "checks_total": 1,
            "failed_checks": [],
            "failed_check_ids": [],
        },
    }
    assert (trunc["is_truncated"], trunc["stop_condition"], trunc["reward"]) == (True, "step_limit", 0.0)
    assert trunc["info"]["verdict"]["failed_checks"] == ["refund issued"]
    assert trunc["completion"][-1]["tool_calls"][0]["id"] == "t2"  # a record keeps the unanswered call


def test_verifiers_gives_every_episode_of_a_task_the_same_example_id(tmp_path):
    source = write_run(
        tmp_path / "run", trajectory("a", trial=0), trajectory("b", trial=1), trajectory("c", task_id="other")
    )
    export(source, "verifiers", tmp_path / "out.jsonl")
    ids = [row["example_id"] for row in read_jsonl(tmp_path / "out.jsonl")]
    assert ids[0] == ids[1] != ids[2]


def test_verifiers_prompt_of_a_recorded_episode_without_a_user_is_its_system_messages(tmp_path):
    recorded = trajectory(
        "rec",
        termination="recorded",
        messages=[
            Message(role="system", content="policy"),
            Message(role="assistant", tool_calls=[call("call_0", "get_account", GOOD_ARGS)]),
            Message(role="tool", tool_call_id="call_0", name="get_account", content="{}"),
        ],
    )
    export(write_run(tmp_path / "run", recorded), "verifiers", tmp_path / "out.jsonl")
    row = read_jsonl(tmp_path / "out.jsonl")[0]
    assert [m["role"] for m in row["prompt"]] == ["system"]
    assert [m["role"] for m in row["completion"]] == ["assistant", "tool"]


PARQUET_COLUMNS = [
    "episode_id",
    "world",
    "world_version",
    "task_id",
    "trial",
    "seed",
    "agent",
    "status",
    "termination",
    "reward",
    "partial_reward",
    "state_hash",
    "num_messages",
    "num_tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "messages_json",
    "tools_json",
    "verdict_json",
]


def test_parquet_reads_back_with_the_listed_columns_one_row_per_episode(run, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    report = export(run, "parquet", tmp_path / "out.parquet")
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == PARQUET_COLUMNS
    assert table.num_rows == report.written == 2
    rows = table.to_pylist()
    assert [r["episode_id"] for r in rows] == ["ep-ok", "ep-trunc"]
    assert (rows[0]["num_messages"], rows[0]["num_tool_calls"], rows[0]["prompt_tokens"]) == (8, 3, 300)
    assert (rows[1]["termination"], rows[1]["reward"], rows[1]["partial_reward"]) == ("step_limit", 0.0, 0.5)
    messages = json.loads(rows[0]["messages_json"])
    assert [Message.model_validate(m) for m in messages] == trajectory("ep-ok").messages
    assert json.loads(rows[0]["tools_json"])[1]["function"]["name"] == "close_account"
    assert json.loads(rows[0]["verdict_json"])["passed"] is True


def test_parquet_with_no_episodes_is_refused_and_writes_no_file(tmp_path):
    pytest.importorskip("pyarrow.parquet")
    source = write_run(tmp_path / "run", trajectory("x", status="error", termination="agent_error"))
    with pytest.raises(ExportError, match=r"skipped 1 error\); only completed episodes are exported"):
        export(source, "parquet", tmp_path / "out.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize("fmt", ["openai", "trl", "verifiers", "parquet"])
def test_only_completed_episodes_are_exported_and_the_rest_are_counted(run, tmp_path, fmt):
    report = export(run, fmt, tmp_path / f"out.{fmt}")
    assert report.written == 2
    assert report.skipped_status == {"cancelled": 1, "error": 1}
    assert (report.skipped_reward, report.skipped_unusable, report.bad_lines) == (0, 0, 1)
    assert report.source == run / "trajectories.jsonl"
    assert report.summary() == (
        f"wrote 2 episodes to {tmp_path / f'out.{fmt}'} ({fmt}); skipped 1 cancelled, "
        "1 error, 1 bad line; 2 tool calls with invalid arguments kept"
    )


def test_min_reward_keeps_episodes_at_or_above_it_and_skips_ungraded_ones(tmp_path):
    source = write_run(
        tmp_path / "run",
        trajectory("pass"),
        trajectory("half", reward=0.5),
        trajectory("fail", reward=0.0),
        trajectory("ungraded", reward=None, verdict=None),
    )
    report = export(source, "trl", tmp_path / "out.jsonl", min_reward=0.5)
    assert (report.written, report.skipped_reward) == (2, 2)
    assert [r["reward"] for r in read_jsonl(tmp_path / "out.jsonl")] == [1.0, 0.5]
    everything = export(source, "trl", tmp_path / "all.jsonl")
    assert (everything.written, everything.skipped_reward) == (4, 0)


def test_a_line_cut_short_by_a_crash_is_skipped_with_a_logged_warning(run, tmp_path):
    with capture_logs() as logs:
        report = export(run, "openai", tmp_path / "out.jsonl")
    assert report.bad_lines == 1 and report.written == 2
    [bad] = [e for e in logs if e["event"] == "skipping a line that is not a trajectory"]
    assert bad["log_level"] == "warning" and bad["line"] == 5 and bad["cut_short"] is True
    assert "Invalid JSON" in bad["error"] or "EOF" in bad["error"]


def test_a_complete_line_that_is_not_a_trajectory_is_skipped_and_counted(tmp_path):
    source = tmp_path / "t.jsonl"
    source.write_text('{"world": "ledger"}\n\n' + trajectory("ok").model_dump_json() + "\n", encoding="utf-8")
    with capture_logs() as logs:
        report = export(source, "verifiers", tmp_path / "out.jsonl")
    assert (report.written, report.bad_lines) == (1, 1)
    [bad] = [e for e in logs if e["event"] == "skipping a line that is not a trajectory"]
    assert bad["line"] == 1 and bad["cut_short"] is False and bad["error"].startswith("world_version")


def test_a_run_directory_and_its_trajectories_file_export_the_same(run, tmp_path):
    export(run, "openai", tmp_path / "a.jsonl")
    export(run / "trajectories.jsonl", "openai", tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_the_export_never_modifies_its_source(run, tmp_path):
    before = (run / "trajectories.jsonl").read_bytes()
    export(run, "openai", tmp_path / "out.jsonl")
    assert (run / "trajectories.jsonl").read_bytes() == before


def test_a_failed_export_leaves_the_previous_destination_and_no_temporary_file(run, tmp_path, monkeypatch):
    dest = tmp_path / "out.jsonl"
    dest.write_text("previous export\n", encoding="utf-8")

    def broken(t: Trajectory) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(export_module._RECORDS, "openai", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        export(run, "openai", dest)
    assert dest.read_text(encoding="utf-8") == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "run"]


def test_an_export_replaces_an_existing_destination(run, tmp_path):
    dest = tmp_path / "out.jsonl"
    dest.write_text("stale\n", encoding="utf-8")
    export(run, "openai", dest)
    assert len(read_jsonl(dest)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "run"]


def test_a_missing_source_is_named_in_the_error(tmp_path):
    with pytest.raises(ExportError, match=r"source .*nowhere does not exist"):
        export(tmp_path / "nowhere", "openai", tmp_path / "out.jsonl")


def test_a_directory_without_trajectories_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ExportError, match=r"empty is a directory without trajectories\.jsonl"):
        export(tmp_path / "empty", "openai", tmp_path / "out.jsonl")


def test_an_unknown_format_is_refused_with_the_known_ones(run, tmp_path):
    with pytest.raises(
        ExportError, match=r"unknown export format 'csv': choose one of openai, trl, verifiers, parquet"
    ):
        export(run, "csv", tmp_path / "out.csv")  # type: ignore[arg-type]
    assert not (tmp_path / "out.csv").exists()


def test_a_destination_whose_directory_does_not_exist_is_refused(run, tmp_path):
    with pytest.raises(ExportError, match=r"destination directory .*missing does not exist"):
        export(run, "openai", tmp_path / "missing" / "out.jsonl")


def test_a_destination_that_is_a_directory_or_the_source_is_refused(run, tmp_path):
    with pytest.raises(ExportError, match="is a directory: give a file path"):
        export(run, "openai", tmp_path)
    with pytest.raises(ExportError, match="is the source file"):
        export(run, "openai", run / "trajectories.jsonl")


def test_parquet_without_pyarrow_says_how_to_install_it(run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` raise ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ExportError, match=r"pip install 'mcpsim\[parquet\]'"):
        export(run, "parquet", tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_an_export_that_keeps_no_episode_raises_with_the_reason_and_writes_nothing(tmp_path):
    source = write_run(
        tmp_path / "run", trajectory("fail", reward=0.0), trajectory("ungraded", reward=None, verdict=None)
    )
    dest = tmp_path / "out.jsonl"
    with pytest.raises(ExportError, match=r"skipped 2 below min_reward\); no completed episode .* --min-reward 0.5"):
        export(source, "trl", dest, min_reward=0.5)
    assert not dest.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ExportError, match="holds no episodes") as refused:
        export(empty, "openai", dest)
    assert refused.value.report is not None and refused.value.report.written == 0
