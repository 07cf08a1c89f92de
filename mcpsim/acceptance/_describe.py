"""Worlds from a description: an OpenAI-compatible model writes a world spec (the spec's JSON
Schema is the response format), mcpsim compiles and validates it, and the validator's errors go
back to the model for repair, for a bounded number of rounds. Only a world that passes every check
is kept.

The prompts are the files in `mcpsim/acceptance/prompts/`. Replies are cached by content: each
request's body (model, messages, response format, sampling settings) is hashed, and a cached reply
is used instead of asking again, so the same replies always give the same world (a spec's world is
a pure function of the spec)."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio

from mcpsim._sandbox import CompileLimits, CompileRefused, picklable, run
from mcpsim.acceptance._validate import validate
from mcpsim.runner import ChatClient
from mcpsim.specs import CompiledWorld, SpecError, WorldSpec, compile_spec, json_schema, parse_spec
from mcpsim.trajectories import Message, Usage

MAX_ERRORS = 30  # errors sent back per round: enough to repair, short enough to read
DEFAULT_ROUNDS = 3


def prompt(name: str, **values: str) -> str:
    """A prompt file with its `{name}` placeholders filled."""
    text = (files("mcpsim.acceptance") / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"{{{key}}}", value)
    return text.strip()


def response_format(name: str = "world_spec", schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Structured output: a JSON Schema, by default the world spec's (not strict: OpenAI's strict
    mode refuses optional properties and defaults, which the spec uses)."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema or json_schema(), "strict": False}}


class ReplyCache:
    """Replies on disk, one JSON file per request, named by the hash of the request's body."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    @staticmethod
    def key(body: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        if self.directory is None or not (path := self.directory / f"{key}.json").is_file():
            return None
        try:
            reply = json.loads(path.read_text(encoding="utf-8")).get("reply")
        except ValueError:  # a file cut short: ask again
            return None
        return reply if isinstance(reply, str) else None

    async def ask(self, client: ChatClient, messages: list[Message], form: dict[str, Any]) -> tuple[str, str, bool]:
        """The model's reply to `messages` with the response format `form`, from the cache if it
        holds the same request: (reply, request hash, whether it was cached)."""
        body: dict[str, Any] = {
            "model": client.model,
            "messages": [m.model_dump(exclude_none=True) for m in messages],
            "response_format": form,
            "temperature": client.temperature,
            "seed": client.seed,
        }
        key = self.key(body)
        if (reply := self.get(key)) is not None:
            return reply, key, True
        answer = await client.complete(messages, None, Usage(), response_format=form)
        reply = answer.content or ""
        self.put(key, body, reply)
        return reply, key, False

    def put(self, key: str, body: dict[str, Any], reply: str) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.directory / f"{key}.json.tmp"
        temporary.write_text(json.dumps({"request": body, "reply": reply}, ensure_ascii=False), encoding="utf-8")
        temporary.replace(self.directory / f"{key}.json")  # whole or absent


@dataclass
class Round:
    """One answer of the model and what mcpsim made of it."""

    number: int
    request: str  # the request's hash (its cache key)
    cached: bool
    accepted: bool
    problem: str | None = None  # "not_json", "spec" or "validation"
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.number,
            "request": self.request[:16],
            "cached": self.cached,
            "accepted": self.accepted,
            "problem": self.problem,
            "errors": self.errors,
        }


@dataclass
class Described:
    spec: WorldSpec
    compiled: CompiledWorld
    report: dict[str, Any]  # the validation report, as `ValidationReport.to_json` gives it
    rounds: list[Round]


class DescribeError(RuntimeError):
    """No accepted world within the rounds allowed; `rounds` says what went wrong each time."""

    def __init__(self, message: str, rounds: list[Round]) -> None:
        super().__init__(message)
        self.rounds = rounds


@dataclass
class Attempt:
    problem: str | None
    errors: list[str]
    result: Described | None = None


def json_object(text: str) -> Any:
    """The JSON a reply holds, fenced in ```json or not."""
    fenced = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.S)
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except RecursionError:  # deeper than any spec may be (`mcpsim.specs` refuses past its limit)
        raise ValueError("it is nested too deeply to read") from None


def check_reply(text: str, *, seed: int, scale: str, task_count: int | None = None) -> Attempt:
    """Parse, compile and validate one reply: an accepted world, or what to repair."""
    try:
        data = json_object(text)
    except ValueError as exc:
        return Attempt("not_json", [f"the answer is not JSON: {exc}"])
    if not isinstance(data, dict):
        return Attempt("not_json", [f"the answer is a JSON {type(data).__name__}, not an object"])
    try:
        spec = parse_spec(data, source="the answer")  # within the spec's bounds (`mcpsim.specs`)
        compiled = compile_spec(spec)
    except SpecError as exc:
        return Attempt("spec", exc.details[:MAX_ERRORS])
    report = validate(compiled, seed=seed, scale=scale, task_count=task_count)
    if not report.ok:
        errors = [f"{check}: {message}" for check, found in report.failures.items() for message in found]
        return Attempt("validation", errors[:MAX_ERRORS])
    return Attempt(None, [], Described(spec, compiled, report.to_json(), []))


@dataclass(frozen=True)
class ReplyCheck:
    """`check_reply` as the sandbox's child runs it: what to repair, or the accepted world's
    validation report (JSON; the world itself stays in the child)."""

    seed: int
    scale: str
    task_count: int | None

    def __call__(self, reply: str) -> dict[str, Any]:
        attempt = check_reply(reply, seed=self.seed, scale=self.scale, task_count=self.task_count)
        return {
            "problem": attempt.problem,
            "errors": attempt.errors,
            "report": attempt.result.report if attempt.result is not None else None,
        }


async def check_reply_sandboxed(
    text: str, limits: CompileLimits, *, seed: int, scale: str, task_count: int | None = None
) -> Attempt:
    """`check_reply` run in the sandbox within `limits`; an accepted spec is then compiled here
    (the child has shown it compiles within the limits). Going past a limit is a problem to
    repair, like any other."""
    try:
        said = await run(picklable(ReplyCheck(seed, scale, task_count)), text, limits)
    except CompileRefused as exc:
        return Attempt("limits", [str(exc)])
    if not isinstance(said, dict) or said.get("report") is None:
        problem = said.get("problem") if isinstance(said, dict) else None
        errors = said.get("errors") if isinstance(said, dict) else None
        return Attempt(str(problem or "validation"), [str(e) for e in errors or []][:MAX_ERRORS])
    spec = parse_spec(json_object(text), source="the answer")
    return Attempt(None, [], Described(spec, compile_spec(spec), said["report"], []))


PROBLEMS = {
    "not_json": "Its answer was not a JSON object.",
    "spec": "It does not follow the world spec's schema and rules:",
    "validation": "It compiles, but validation rejected the world (check: what failed):",
    "limits": "Checking it went past a limit (a smaller, simpler world would pass):",
}


def repair_message(problem: str, errors: list[str]) -> str:
    return prompt("repair", problem=PROBLEMS[problem], errors="\n".join(f"- {e}" for e in errors))


async def describe_world(
    description: str,
    client: ChatClient,
    *,
    cache_dir: Path | None = None,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    scale: str = "small",
    task_count: int | None = None,
    sandbox: CompileLimits | None = None,
) -> Described:
    """Ask `client`'s model for a world spec of `description`, repair it up to `rounds` times with
    the validator's errors, and return the first accepted world (else DescribeError). Validation
    generates `task_count` tasks (default: the spec's own count) as `mcpsim gen` does. With
    `sandbox` (the CLI always gives one), each answer is validated in a child process within
    those limits (`mcpsim._sandbox`), since a model's spec is untrusted data."""
    if not description.strip():
        raise ValueError("the description is empty")
    cache = ReplyCache(cache_dir)
    form = response_format()
    messages = [
        Message(role="system", content=prompt("describe_system")),
        Message(role="user", content=prompt("describe_user", description=description.strip())),
    ]
    history: list[Round] = []
    for number in range(1, rounds + 2):  # the first answer, then up to `rounds` repairs
        reply, key, cached = await cache.ask(client, messages, form)
        if sandbox is not None:
            attempt = await check_reply_sandboxed(reply, sandbox, seed=seed, scale=scale, task_count=task_count)
        else:
            check = functools.partial(check_reply, reply, seed=seed, scale=scale, task_count=task_count)
            attempt = await anyio.to_thread.run_sync(check)  # blocking work, with an event loop of its own
        history.append(Round(number, key, cached, attempt.problem is None, attempt.problem, attempt.errors))
        if attempt.result is not None:
            attempt.result.rounds = history
            return attempt.result
        assert attempt.problem is not None
        messages += [
            Message(role="assistant", content=reply),
            Message(role="user", content=repair_message(attempt.problem, attempt.errors)),
        ]
    last = history[-1]
    raise DescribeError(
        f"no world passed every check in {len(history)} answers; the last one: {last.problem}: "
        + "; ".join(last.errors[:5]),
        history,
    )
