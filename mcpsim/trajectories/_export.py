"""Exporters: a run's trajectories as training and evaluation data.

`export(source, fmt, dest)` reads a run directory's `trajectories.jsonl` (or such a file given
directly) and writes one of five formats, atomically (a temporary file beside `dest`, then
`os.replace`: a failed export leaves whatever `dest` held before):

- `openai`: chat fine-tuning JSONL, `{"messages", "tools"}` per episode and nothing else.
- `trl`: the same conversation with tool-call `arguments` as objects, which chat templates
  expect, plus `reward` and `task_id`.
- `verifiers`: one rollout result per line, shaped like verifiers' `RolloutOutput`.
- `parquet`: one row per episode with flat columns, for analysis; needs pyarrow.
- `tokens`: for RL without re-tokenising: per episode, each assistant turn's exact prompt token
  ids, sampled token ids and their log-probabilities, as the model endpoint returned them
  (`mcpsim run --token-ids`), with the rewards, the policy version per turn when the endpoint
  reported it, and the turns merged into one sequence with a loss mask when each prompt extends
  the previous prompt and completion (`_tokens.merge_turns`; else `template_breaks` says where).
  An episode with an assistant message that has no token record (the endpoint returned none) is
  skipped as unusable.

Which episodes: only `completed` ones are data. Cancelled and errored episodes are skipped and
counted, and so are episodes below `min_reward` (an ungraded episode never reaches a
`min_reward`). A line that is not a trajectory is skipped, logged as a warning and counted.
Usually it is the last line, cut short by a crash during the write. The source is never modified.
An export that would write no episode at all (an empty source, a filter that keeps nothing, a
run without token ids exported as `tokens`) raises `ExportError` saying why, and writes nothing:
a pipeline must not train on an empty file.

Decisions a training user should know:
- Null content (openai): an assistant message that only calls tools has no `content` key, as
  in OpenAI's fine-tuning examples. Any other missing content becomes `""`. Tool messages
  carry exactly `role`, `tool_call_id` and `content`, because OpenAI's tool message has no
  `name`.
- Invalid arguments: a model may write arguments that are not a JSON object. openai keeps the
  string verbatim, because that is what the model said. It also marks that assistant message
  `"weight": 0`: fine-tuning keeps the message as context but does not learn to repeat it. trl
  must give an object, so the string becomes `{"_raw": "<the string>"}`. Drop those rows, or
  use `min_reward`, if a model must not learn from such calls. verifiers and parquet keep the
  string as recorded. `ExportReport.invalid_arguments` counts these calls.
- Unanswered tool calls (openai, trl): the chat format needs a result for every call. An
  episode cut off after the model called tools, but before the results came back, therefore
  ends before that assistant message. Some episodes still cannot be represented: no assistant
  message is left, or a tool result answers no call. These are skipped (`skipped_unusable`).
- verifiers: `example_id` must be an int. It is a stable 48-bit hash of the task id, so every
  episode of a task gets the same id, in every run. Tool calls and tool definitions use
  verifiers' flat shapes: `{"id", "name", "arguments"}` and `{"name", "description",
  "parameters"}`. `token_usage` uses verifiers' `input_tokens`/`output_tokens` keys. An
  ungraded episode gets reward 0.0. `is_truncated` means the step limit or the time limit ended
  the episode.
- trl and `datasets.load_dataset("json")`: Arrow merges the argument objects of all rows into
  one struct type, so a call can come back with the other tools' keys set to null.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args

import structlog
from pydantic import BaseModel, ValidationError

from mcpsim.trajectories._journal import first_error, iter_trajectories
from mcpsim.trajectories._records import Message, TokenTurn, ToolCall, ToolDef, Trajectory
from mcpsim.trajectories._tokens import merge_turns

__all__ = ["FORMATS", "ExportError", "ExportReport", "Format", "export"]

log = structlog.get_logger("mcpsim.trajectories._export")

Format = Literal["openai", "trl", "verifiers", "parquet", "tokens"]
FORMATS: tuple[str, ...] = get_args(Format)
TRAJECTORIES = "trajectories.jsonl"
TRUNCATING = ("step_limit", "timeout")  # terminations that cut the episode short


class ExportError(Exception):
    """The export cannot start (a missing source, an unknown format, an unusable destination) or
    would write no episode (`report` then says what was skipped)."""

    def __init__(self, message: str, report: ExportReport | None = None) -> None:
        super().__init__(message)
        self.report = report


class ExportReport(BaseModel):
    format: str
    source: Path  # the trajectories file read
    dest: Path
    written: int = 0
    skipped_status: dict[str, int] = {}  # status -> episodes skipped (only completed ones are data)
    skipped_reward: int = 0  # below min_reward, or ungraded while min_reward was given
    skipped_unusable: int = 0  # the format cannot represent the conversation (see the module doc)
    bad_lines: int = 0  # lines that are not a trajectory, such as a last line cut short by a crash
    invalid_arguments: int = 0  # tool calls in written episodes whose arguments are not a JSON object
    unusable_reason: str | None = None  # why the first unusable episode could not be written

    def skipped(self) -> list[str]:
        """What was skipped, one phrase per reason ("2 cancelled", "1 below min_reward")."""
        skipped = [f"{n} {status}" for status, n in sorted(self.skipped_status.items())]
        if self.skipped_reward:
            skipped.append(f"{self.skipped_reward} below min_reward")
        if self.skipped_unusable:
            skipped.append(f"{self.skipped_unusable} unusable as {self.format}")
        if self.bad_lines:
            skipped.append(f"{self.bad_lines} bad line{'s' if self.bad_lines != 1 else ''}")
        return skipped

    def summary(self) -> str:
        skipped = self.skipped()
        text = f"wrote {self.written} episodes to {self.dest} ({self.format})"
        if skipped:
            text += "; skipped " + ", ".join(skipped)
        if self.invalid_arguments:
            text += f"; {self.invalid_arguments} tool calls with invalid arguments kept"
        return text


class _Unusable(Exception):
    """This episode cannot be written in this format; the message says why."""


def export(source: Path, fmt: Format, dest: Path, *, min_reward: float | None = None) -> ExportReport:
    """Write the completed episodes of `source` (a run directory or a trajectories .jsonl file) to
    `dest` in format `fmt`, keeping only those with reward >= `min_reward` when it is given."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")
    path = _source_file(Path(source))
    dest = Path(dest)
    _check_dest(dest, path)
    write = _write_parquet(_pyarrow()) if fmt == "parquet" else _write_jsonl(_RECORDS[fmt])
    report = ExportReport(format=fmt, source=path, dest=dest)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        write(_episodes(path, min_reward, report), tmp, report)
        if not report.written:
            raise ExportError(_nothing_written(report, min_reward), report)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("trajectories exported", **report.model_dump(mode="json"))
    return report


def _nothing_written(report: ExportReport, min_reward: float | None) -> str:
    """Why an export wrote no episode: what the source held and what was skipped."""
    text = f"nothing to export: {report.source} "
    skipped = report.skipped()
    if not skipped:
        return text + "holds no episodes"
    text += f"holds no episode to write as {report.format} (skipped " + ", ".join(skipped) + ")"
    if report.skipped_reward and min_reward is not None:
        text += f"; no completed episode has a reward of at least --min-reward {min_reward:g}"
    if report.skipped_status and not report.skipped_reward and not report.skipped_unusable:
        text += "; only completed episodes are exported"
    if report.unusable_reason:
        text += f"; {report.unusable_reason}"
    return text


# --- reading and choosing episodes ---------------------------------------------------------------


def _source_file(source: Path) -> Path:
    if not source.exists():
        raise ExportError(f"source {source} does not exist")
    if source.is_dir():
        path = source / TRAJECTORIES
        if not path.is_file():
            raise ExportError(f"{source} is a directory without {TRAJECTORIES}: give a run directory or a .jsonl file")
        return path
    return source


def _check_dest(dest: Path, source: Path) -> None:
    if not dest.parent.is_dir():
        raise ExportError(f"destination directory {dest.parent} does not exist")
    if dest.is_dir():
        raise ExportError(f"destination {dest} is a directory: give a file path")
    if dest.exists() and dest.resolve() == source.resolve():
        raise ExportError(f"destination {dest} is the source file: choose another path")


def _read(path: Path, report: ExportReport) -> Iterator[Trajectory]:
    """Each trajectory in the file (read by the journal); a line that is not one is counted,
    logged and skipped."""

    def bad(number: int, line: bytes, exc: ValidationError) -> None:
        report.bad_lines += 1
        log.warning(
            "skipping a line that is not a trajectory",
            path=str(path),
            line=number,
            cut_short=not line.endswith(b"\n"),
            error=first_error(exc),
        )

    return iter_trajectories(path, on_bad=bad)


def _episodes(path: Path, min_reward: float | None, report: ExportReport) -> Iterator[Trajectory]:
    for t in _read(path, report):
        if t.status != "completed":
            report.skipped_status[t.status] = report.skipped_status.get(t.status, 0) + 1
        elif min_reward is not None and (t.reward is None or t.reward < min_reward):
            report.skipped_reward += 1
        else:
            yield t


# --- shared pieces ---------------------------------------------------------------------------------


def _arguments_object(raw: str) -> dict[str, Any] | None:
    """The arguments as a dict, or None if they are not a JSON object."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _invalid_calls(t: Trajectory) -> int:
    return sum(_arguments_object(c.function.arguments) is None for m in t.messages for c in m.tool_calls or [])


def _content(m: Message) -> str:
    return "" if m.content is None else m.content


def _function(tool: ToolDef) -> dict[str, Any]:
    """A tool's name, description, parameters (and strict flag), with nulls dropped."""
    f = tool.function
    if not f.get("name"):
        raise _Unusable("a tool definition has no name")
    out: dict[str, Any] = {"name": f["name"]}
    if f.get("description") is not None:
        out["description"] = f["description"]
    out["parameters"] = f.get("parameters") or {"type": "object", "properties": {}}
    if f.get("strict") is not None:
        out["strict"] = f["strict"]
    return out


def _conversation(t: Trajectory) -> list[Message]:
    """The messages as a chat format can hold them: every tool call answered, every result
    answering an earlier call. A final assistant turn whose calls got no result is dropped."""
    messages = list(t.messages)
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    final_calls = messages[last].tool_calls if last is not None else None
    if last is not None and final_calls and all(m.role == "tool" for m in messages[last + 1 :]):
        answered = {m.tool_call_id for m in messages[last + 1 :]}
        if any(c.id not in answered for c in final_calls):
            messages = messages[:last]
    called: set[str] = set()
    answered = set()
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            called.update(c.id for c in m.tool_calls)
        elif m.role == "tool":
            if m.tool_call_id not in called:
                raise _Unusable(f"a tool result answers no earlier call ({m.tool_call_id!r})")
            answered.add(m.tool_call_id)
    if called - answered:
        raise _Unusable(f"tool call {min(called - answered)!r} has no result")
    if not any(m.role == "assistant" for m in messages):
        raise _Unusable("no assistant message")
    return messages


# --- openai ----------------------------------------------------------------------------------------


def _openai_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": _content(m)}
    out: dict[str, Any] = {"role": m.role}
    if m.content is not None or not m.tool_calls:
        out["content"] = _content(m)
    if m.name is not None:
        out["name"] = m.name
    if m.tool_calls:
        out["tool_calls"] = [c.model_dump() for c in m.tool_calls]
        if any(_arguments_object(c.function.arguments) is None for c in m.tool_calls):
            out["weight"] = 0  # keep it as context, do not learn to write it
    return out


def _openai_record(t: Trajectory) -> dict[str, Any]:
    return {
        "messages": [_openai_message(m) for m in _conversation(t)],
        "tools": [{"type": "function", "function": _function(d)} for d in t.tools],
    }


# --- trl -------------------------------------------------------------------------------------------


def _trl_call(c: ToolCall) -> dict[str, Any]:
    arguments = _arguments_object(c.function.arguments)
    return {
        "id": c.id,
        "type": "function",
        "function": {
            "name": c.function.name,
            "arguments": arguments if arguments is not None else {"_raw": c.function.arguments},
        },
    }


def _trl_message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": _content(m)}
    if m.tool_calls:
        out["tool_calls"] = [_trl_call(c) for c in m.tool_calls]
    if m.role == "tool":
        out["tool_call_id"] = m.tool_call_id
        if m.name is not None:
            out["name"] = m.name
    return out


def _trl_record(t: Trajectory) -> dict[str, Any]:
    return {
        "messages": [_trl_message(m) for m in _conversation(t)],
        "tools": [{"type": "function", "function": _function(d)} for d in t.tools],
        "reward": t.reward,
        "task_id": t.task_id,
    }


# --- verifiers -------------------------------------------------------------------------------------


def _verifiers_message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": _content(m)}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in m.tool_calls
        ]
    if m.role == "tool":
        out["tool_call_id"] = m.tool_call_id or ""
        if m.name is not None:
            out["name"] = m.name
    return out


def _example_id(t: Trajectory) -> int:
    """A stable int per task (verifiers groups rollouts by it); 48 bits stay exact in JSON."""
    key = t.task_id if t.task_id is not None else f"episode:{t.episode_id}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:6], "big")


_IDENTITY = ("world", "world_version", "task_id", "trial", "seed", "agent")
_OUTCOME = ("status", "termination", "reward", "partial_reward", "state_hash")  # how an episode ended


def _identity(t: Trajectory) -> dict[str, Any]:
    """Which episode a record comes from: its world, task, trial, seed and agent."""
    return {name: getattr(t, name) for name in _IDENTITY}


def _verdict_summary(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    checks = verdict.get("checks") or []
    return {
        "passed": verdict.get("passed"),
        "failure": verdict.get("failure"),
        "checks_passed": sum(bool(c.get("passed")) for c in checks),
        "checks_total": len(checks),
        "failed_checks": [c.get("requirement") for c in checks if not c.get("passed")],
        "failed_check_ids": [c.get("id", "") for c in checks if not c.get("passed")],
    }


def _verifiers_record(t: Trajectory) -> dict[str, Any]:
    messages = [_verifiers_message(m) for m in t.messages]
    first_user = next((i for i, m in enumerate(t.messages) if m.role == "user"), None)
    if first_user is not None:
        split = first_user + 1
    else:  # recorded episodes have no user message: the prompt is the leading system messages
        split = next((i for i, m in enumerate(t.messages) if m.role != "system"), len(messages))
    return {
        "example_id": _example_id(t),
        "prompt": messages[:split],
        "completion": messages[split:],
        "reward": float(t.reward or 0.0),
        "timing": {"duration_s": float(t.duration_s or 0.0)},
        "is_completed": t.status == "completed",
        "is_truncated": t.termination in TRUNCATING,
        "metrics": {
            "partial_reward": float(t.partial_reward or 0.0),
            "tool_calls": len(t.calls),
            "tool_errors": sum(not c.ok for c in t.calls),
        },
        "info": {
            **_identity(t),
            "episode_id": t.episode_id,
            "verdict": _verdict_summary(t.verdict),
        },
        "error": t.error,
        "stop_condition": t.termination,
        "tool_defs": [_function(d) for d in t.tools],
        "token_usage": {"input_tokens": t.usage.prompt_tokens, "output_tokens": t.usage.completion_tokens},
    }


def _tokens_record(t: Trajectory) -> dict[str, Any]:
    turns = {turn.message_index: turn for turn in t.usage.tokens or []}
    if not turns:
        raise _Unusable("no token ids were recorded (the endpoint returned none; run with --token-ids)")
    assistant = [i for i, m in enumerate(t.messages) if m.role == "assistant"]
    if missing := [i for i in assistant if i not in turns]:
        raise _Unusable(f"assistant messages {missing} have no token ids")
    if stray := sorted(set(turns) - set(assistant)):
        raise _Unusable(f"token records {stray} point at no assistant message")
    ordered = [turns[i] for i in assistant]
    if uneven := [u.message_index for u in ordered if u.logprobs is not None and len(u.logprobs) != len(u.token_ids)]:
        raise _Unusable(f"token records {uneven} have not one log-probability per completion token")
    return {
        "episode_id": t.episode_id,
        **_identity(t),
        "reward": t.reward,
        "partial_reward": t.partial_reward,
        "termination": t.termination,
        "turns": [_token_turn(u) for u in ordered],
        **merge_turns(ordered),
    }


def _token_turn(turn: TokenTurn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "message_index": turn.message_index,
        "prompt_token_ids": turn.prompt_token_ids,
        "completion_token_ids": turn.token_ids,
        "completion_logprobs": turn.logprobs,
        "finish_reason": turn.finish_reason,
    }
    if turn.policy_version is not None:
        out["policy_version"] = turn.policy_version
    return out


_RECORDS: dict[str, Callable[[Trajectory], dict[str, Any]]] = {
    "openai": _openai_record,
    "trl": _trl_record,
    "verifiers": _verifiers_record,
    "tokens": _tokens_record,
}

Writer = Callable[[Iterator[Trajectory], Path, ExportReport], None]


def _write_jsonl(record: Callable[[Trajectory], dict[str, Any]]) -> Writer:
    def write(episodes: Iterator[Trajectory], tmp: Path, report: ExportReport) -> None:
        with tmp.open("w", encoding="utf-8") as f:
            for t in episodes:
                try:
                    line = json.dumps(record(t), ensure_ascii=False)
                except _Unusable as exc:
                    report.skipped_unusable += 1
                    report.unusable_reason = report.unusable_reason or str(exc)
                    log.warning(
                        "skipping an episode the format cannot hold",
                        format=report.format,
                        episode=t.episode_id,
                        task=t.task_id,
                        trial=t.trial,
                        reason=str(exc),
                    )
                    continue
                f.write(line + "\n")
                report.written += 1
                report.invalid_arguments += _invalid_calls(t)

    return write


# --- parquet ---------------------------------------------------------------------------------------


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # a submodule: imported so that pyarrow.parquet resolves
    except ImportError:
        raise ExportError("the parquet format needs pyarrow: pip install 'mcpsim[parquet]'") from None
    return pyarrow


def _parquet_row(t: Trajectory) -> dict[str, Any]:
    return {
        "episode_id": t.episode_id,
        **_identity(t),
        **{name: getattr(t, name) for name in _OUTCOME},
        "num_messages": len(t.messages),
        "num_tool_calls": len(t.calls),
        "prompt_tokens": t.usage.prompt_tokens,
        "completion_tokens": t.usage.completion_tokens,
        "messages_json": json.dumps(
            [m.model_dump(mode="json", exclude_none=True) for m in t.messages], ensure_ascii=False
        ),
        "tools_json": json.dumps([d.model_dump(mode="json") for d in t.tools], ensure_ascii=False),
        "verdict_json": json.dumps(t.verdict, ensure_ascii=False) if t.verdict is not None else None,
    }


def _write_parquet(pa: Any, batch: int = 1024) -> Writer:
    s, i, f = pa.string(), pa.int64(), pa.float64()
    schema = pa.schema(
        [
            ("episode_id", s),
            ("world", s),
            ("world_version", s),
            ("task_id", s),
            ("trial", i),
            ("seed", i),
            ("agent", s),
            ("status", s),
            ("termination", s),
            ("reward", f),
            ("partial_reward", f),
            ("state_hash", s),
            ("num_messages", i),
            ("num_tool_calls", i),
            ("prompt_tokens", i),
            ("completion_tokens", i),
            ("messages_json", s),
            ("tools_json", s),
            ("verdict_json", s),
        ]
    )

    def write(episodes: Iterator[Trajectory], tmp: Path, report: ExportReport) -> None:
        with pa.parquet.ParquetWriter(tmp, schema) as writer:
            rows: list[dict[str, Any]] = []
            for t in episodes:
                rows.append(_parquet_row(t))
                report.written += 1
                report.invalid_arguments += _invalid_calls(t)
                if len(rows) == batch:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                    rows = []
            if rows:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))

    return write
