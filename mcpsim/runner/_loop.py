"""One rollout: the conversation between an agent, a world (over MCP) and a simulated user."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import structlog

from mcpsim.engine import lone_surrogate
from mcpsim.grading import Verdict
from mcpsim.runner._agents import Agent, Turn
from mcpsim.runner._backends import BackendError, GradingFailed, LiveEpisode
from mcpsim.runner._llm import ModelError
from mcpsim.runner._settings import RolloutSettings
from mcpsim.runner._users import User
from mcpsim.tasks import Task
from mcpsim.trajectories import CallLog, Message, ToolDef, Trajectory, Usage
from mcpsim.world import derive_seed

__all__ = ["Conversation", "Resume", "RolloutSettings", "conversation_dicts", "final_answer", "rollout"]

log = structlog.get_logger("mcpsim.runner")


@dataclass
class Resume:
    """Where a cancelled rollout stopped: its messages, calls and usage (the world's state is
    in the snapshot the backend restores)."""

    messages: list[Message]
    calls: list[CallLog]
    usage: Usage
    snapshot: bytes


@dataclass
class Conversation:
    """A rollout's client-side state: the messages, the calls with what they returned, the
    token usage, and which calls reached the server (`sent`, indexes into `calls`). The runner's
    loop and `mcpsim.env._environment` both drive one."""

    messages: list[Message]
    calls: list[CallLog]
    usage: Usage
    sent: list[int] = field(default_factory=list)  # indexes of calls that reached the server

    async def call_tool(self, live: LiveEpisode, call_id: str, name: str, raw: str) -> None:
        """Run one tool call of the agent's (`raw`: its arguments as the model wrote them) on
        `live`, and append its log and its tool message. Arguments that are not a JSON object
        (or hold a lone surrogate) never leave the client: they come back as a tool error."""
        index = len(self.calls)
        try:
            arguments = json.loads(raw) if raw.strip() else {}
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
            if (where := lone_surrogate(arguments)) is not None:  # no transport, database or journal holds one
                raise ValueError(f"{where} holds a lone surrogate such as \\udcff, which is not valid Unicode")
        except ValueError as exc:
            error = f"the arguments of {name} are not a valid JSON object ({exc}); nothing was done"
            self.calls.append(
                CallLog(index=index, tool=name, arguments=raw, ok=False, error=error, tool_call_id=call_id)
            )
            self.messages.append(Message(role="tool", tool_call_id=call_id, name=name, content=f"Error: {error}"))
            return
        started = time.perf_counter()
        result = await live.call_tool(name, arguments)
        elapsed = (time.perf_counter() - started) * 1000
        text = result_text(result)
        self.sent.append(index)
        self.calls.append(
            CallLog(
                index=index,
                tool=name,
                arguments=arguments,
                ok=not result.is_error,
                result=result.structured_content if not result.is_error else None,
                error=text if result.is_error else None,
                duration_ms=round(elapsed, 3),
                tool_call_id=call_id,
            )
        )
        self.messages.append(Message(role="tool", tool_call_id=call_id, name=name, content=text))

    def attach_record(self, record: Trajectory) -> None:
        """Each sent call's row changes, call number and fault, from the server's record of the
        episode (its calls in order)."""
        for index, server_call in zip(self.sent, record.calls, strict=False):
            self.calls[index].call_seq = server_call.call_seq
            self.calls[index].changes = server_call.changes
            self.calls[index].fault = server_call.fault


def mcp_tools_as_functions(tools: list[Any]) -> list[ToolDef]:
    """MCP tools as OpenAI functions, sorted by name: a stable prefix keeps a model's KV cache warm."""
    return [
        ToolDef(function={"name": t.name, "description": t.description or "", "parameters": t.input_schema})
        for t in sorted(tools, key=lambda t: t.name)
    ]


def result_text(result: Any) -> str:
    if result.structured_content is not None:
        return json.dumps(result.structured_content)
    return "\n".join(getattr(c, "text", "") for c in result.content)


def final_answer(messages: list[Message], explicit: str | None = None) -> str:
    """The agent's final answer: `explicit` when the harness gives one, else the agent's last
    message with text. Earlier messages (a confirmation question, a progress note) are not the
    answer: grading every message joined would let an agent state every candidate value."""
    if explicit is not None:
        return explicit
    return next((m.content for m in reversed(messages) if m.role == "assistant" and m.content), "")


def conversation_dicts(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation as OpenAI-style message dicts, for checks on the dialogue."""
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


async def rollout(
    agent: Agent,
    live: LiveEpisode,
    task: Task,
    user: User,
    *,
    world: str,
    trial: int,
    settings: RolloutSettings,
    stop: anyio.Event,
    resume: Resume | None = None,
) -> tuple[Trajectory, bytes | None]:
    """Run one episode to its end (or until `stop` is set: then it is suspended and its
    snapshot returned). Returns the trajectory and, for a suspended one, the snapshot."""
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")  # for people only
    tools = mcp_tools_as_functions(await live.list_tools())
    if resume is not None:
        state = Conversation(list(resume.messages), list(resume.calls), resume.usage)
    else:
        state = Conversation(
            [Message(role="system", content=await live.policy()), Message(role="user", content=task.instruction)],
            [],
            Usage(),
        )
    termination, error, suspended = await _converse(
        agent, live, task, user, state, tools, world=world, trial=trial, settings=settings, stop=stop
    )

    base = dict(
        run_id=settings.run_id,
        episode_id=live.id,
        world=world,
        task_id=task.id,
        trial=trial,
        seed=settings.seed,
        agent=agent.name,
        messages=state.messages,
        tools=tools,
        calls=state.calls,
        usage=state.usage,
        started_at=started_at,
        error=error,
    )
    if suspended:
        snapshot = await live.suspend()
        trajectory = Trajectory(
            **base,
            world_version="",
            status="cancelled",
            termination="cancelled",
            duration_s=round(time.perf_counter() - started, 3),
        )
        return trajectory, snapshot
    return await _graded(live, state, base, termination, started), None


async def _converse(
    agent: Agent,
    live: LiveEpisode,
    task: Task,
    user: User,
    state: Conversation,
    tools: list[ToolDef],
    *,
    world: str,
    trial: int,
    settings: RolloutSettings,
    stop: anyio.Event,
) -> tuple[str, str | None, bool]:
    """The conversation's turns, appended to `state` until the agent answers and the user has
    nothing more to say, the step limit or the timeout is reached, the agent fails, or `stop` is
    set. Returns how it ended (the termination), the agent's error, and whether it was suspended."""
    agent_seed = derive_seed(settings.seed, task.id, trial)
    termination = "step_limit"
    error: str | None = None
    suspended = False
    with anyio.move_on_after(settings.timeout) as deadline:
        try:
            while True:
                if stop.is_set():
                    suspended = True
                    break
                steps = sum(1 for m in state.messages if m.role == "assistant")
                if steps >= settings.max_steps:
                    termination = "step_limit"
                    break
                turn = Turn(
                    messages=list(state.messages),
                    tools=tools,
                    step=steps,
                    seed=agent_seed,
                    usage=state.usage,
                    task=task if agent.needs_task else None,
                    world=world if agent.needs_task else None,
                )
                message = await agent.respond(turn)
                state.messages.append(message)
                if message.tool_calls:
                    for call in message.tool_calls:
                        await state.call_tool(live, call.id, call.function.name, call.function.arguments)
                    continue
                said = await user.reply(state.messages, state.usage)
                if said is None:
                    termination = "answered"
                    break
                state.messages.append(Message(role="user", content=said))
        except ModelError as exc:
            termination, error = "model_error", str(exc)
        except BackendError:  # the server failed (e.g. asked for the user's turn): the episode's server_error
            raise
        except Exception as exc:  # a custom agent's bug ends its episode, not the run
            log.exception("agent error", task=task.id, trial=trial)
            termination, error = "agent_error", f"{type(exc).__name__}: {exc}"
    if deadline.cancelled_caught:
        termination = "timeout"
    return termination, error, suspended


async def _graded(
    live: LiveEpisode, state: Conversation, base: dict[str, Any], termination: str, started: float
) -> Trajectory:
    """The trajectory of an episode that ran to its end, graded (`base`: its fields so far)."""
    outcome = await _grade(live, final_answer(state.messages), conversation_dicts(state.messages))
    state.attach_record(outcome.record)  # the server's record holds each call's row changes
    verdict = outcome.verdict
    full = verdict if isinstance(verdict, Verdict) else None  # a summary names no version or state hash
    return Trajectory(
        **base,
        world_version=full.world_version if full else "",
        status="error" if termination in ("model_error", "agent_error") else "completed",
        termination=termination,
        verdict=verdict.model_dump(mode="json"),
        reward=verdict.reward,
        partial_reward=verdict.partial_reward,
        state_hash=full.state_hash if full else None,
        duration_s=round(time.perf_counter() - started, 3),
    )


GRADING_ATTEMPTS = 4
GRADING_BACKOFF_S = 2.0  # times the attempt number


async def _grade(live: LiveEpisode, answer: str | None, conversation: list[dict[str, Any]]) -> Any:
    """Grade, retrying a grading that could not finish (an infrastructure error, never a reward);
    the last failure propagates and the episode is recorded as a grader error."""
    for attempt in range(1, GRADING_ATTEMPTS + 1):
        try:
            return await live.finish(answer, conversation)
        except GradingFailed as exc:
            if attempt == GRADING_ATTEMPTS:
                raise
            log.warning("grading could not finish; retrying", episode=live.id, attempt=attempt, error=str(exc))
            await anyio.sleep(GRADING_BACKOFF_S * attempt)
    raise AssertionError("unreachable")
