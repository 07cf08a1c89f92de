"""A Python environment API for in-process training loops: gym-style `reset` and `step` over
mcpsim episodes, with the verifier's reward at the end.

    with Env("retail") as env:
        obs = env.reset("add-address-make-default")   # policy, tools, the user's first message
        obs, reward, done, info = env.step(ToolCallAction("find_customer_by_email", {"email": "..."}))
        ...
        obs, reward, done, info = env.step(MessageAction("Done: ..."))   # the user answers, or it ends

An action is a tool call, a message to the user, or an assistant message in OpenAI's format
(several tool calls at once). Tool calls run over MCP in memory, exactly as an agent's calls do
over the wire (the same schemas, errors and transcript). A message to the user gets the
simulated user's reply (`ScriptedUser`: confirmations, then the task's scripted turns); when the
user has nothing more to say, or the step limit is reached, the episode is graded and `done`
is true. The reward is the verifier's: strict (1.0 or 0.0) by default, or the partial reward
(`reward="partial"`); `info` carries both and the verdict. Rewards are 0.0 until the end.
At the end `info["ending"]` says why: `answered`, `step_limit` (`truncated`: cut, graded as it
stood), or `timeout` / `error` when the simulated user's model failed (ungraded, no verdict);
`strict`, `partial`, `failure` and `checks` (each check's result by its numbered name) are the
verdict's parts.

`fork()` copies a live environment (database and conversation) for tree search; `snapshot()`
and `restore()` keep one for later (partial rollouts). `AsyncEnv` is the same API, awaited.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import anyio
import anyio.abc
import anyio.from_thread

from mcpsim.engine import FaultProfile, TemplateCache
from mcpsim.grading import Verdict
from mcpsim.runner import (
    Conversation,
    InProcessBackend,
    LiveEpisode,
    ModelError,
    ScriptedUser,
    User,
    conversation_dicts,
    final_answer,
    mcp_tools_as_functions,
)
from mcpsim.serve import EpisodeManager
from mcpsim.tasks import Task
from mcpsim.trajectories import CallLog, FunctionCall, Message, Termination, ToolCall, ToolDef, Trajectory, Usage

RewardKind = Literal["strict", "partial"]


class EnvError(RuntimeError):
    """The environment was used out of order (a step before reset, or after the end)."""


@dataclass(frozen=True)
class ToolCallAction:
    """Call a tool. `arguments`: an object, or the JSON text a model wrote (invalid JSON comes
    back as a tool error, and nothing runs)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class MessageAction:
    """Say something to the user (a question, or the final answer)."""

    content: str


Action = ToolCallAction | MessageAction | Message | dict[str, Any] | str


@dataclass
class Observation:
    """What the agent sees: the whole conversation so far (OpenAI chat messages: the policy as
    the system message, the user's words, its own messages, tool results), the tools as OpenAI
    functions, and the messages the last step added."""

    task_id: str
    world: str
    policy: str
    tools: list[ToolDef]
    messages: list[Message]
    new: list[Message]

    def chat(self) -> list[dict[str, Any]]:
        """The conversation as OpenAI-style dicts, ready for a chat template."""
        return conversation_dicts(self.messages)

    def functions(self) -> list[dict[str, Any]]:
        return [t.model_dump() for t in self.tools]


class StepResult(NamedTuple):
    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any]


@dataclass(frozen=True)
class EnvSnapshot:
    """A live environment kept for later: the episode's database and the conversation."""

    task_id: str
    database: bytes
    messages: list[Message]
    calls: list[CallLog]
    sent: list[int]  # which calls reached the episode (the others were refused by the client)
    usage: Usage


def _as_message(action: Action, step: int) -> Message:
    """An action as the assistant message it stands for."""
    if isinstance(action, Message):
        if action.role != "assistant":
            raise EnvError(f"an action is an assistant message, not a {action.role} message")
        return action
    if isinstance(action, str):
        return Message(role="assistant", content=action)
    if isinstance(action, MessageAction):
        return Message(role="assistant", content=action.content)
    if isinstance(action, ToolCallAction):
        raw = action.arguments if isinstance(action.arguments, str) else json.dumps(action.arguments)
        call = ToolCall(id=action.id or f"call_{step}", function=FunctionCall(name=action.name, arguments=raw))
        return Message(role="assistant", tool_calls=[call])
    if isinstance(action, dict):
        data = copy.deepcopy(action)  # the caller's message stays as it was
        data.setdefault("role", "assistant")
        for number, call in enumerate(data.get("tool_calls") or []):  # arguments as an object are accepted
            function = call.get("function") or {}
            if not isinstance(function.get("arguments", ""), str):
                function["arguments"] = json.dumps(function["arguments"])
            call.setdefault("id", f"call_{step}_{number}")
        return _as_message(Message.model_validate(data), step)
    raise EnvError(f"unknown action {action!r}: give a ToolCallAction, a MessageAction, a string or a Message")


@dataclass
class _Shared:
    """What the environments of one `AsyncEnv` block share: the episodes' home, the backend, and
    the task group holding each live episode open."""

    manager: EpisodeManager
    backend: InProcessBackend
    group: anyio.abc.TaskGroup


class AsyncEnv:
    """Episodes of one world in this process. Use it as `async with AsyncEnv(world) as env`.

    `max_steps`: assistant messages per episode before it ends (and is graded); `reward`:
    "strict" or "partial"; `make_user`: the simulated user of a task (default: ScriptedUser);
    `templates`: a template cache to share (default: one in memory for this environment);
    `manager`: an EpisodeManager to share between environments (its verifiers replay each task's
    gold solution once), which the caller closes."""

    def __init__(
        self,
        world: str,
        *,
        max_steps: int = 30,
        reward: RewardKind = "strict",
        make_user: Callable[[Task], User] = ScriptedUser,
        templates: TemplateCache | None = None,
        max_episodes: int = 256,
        manager: EpisodeManager | None = None,
    ) -> None:
        if reward not in ("strict", "partial"):
            raise ValueError(f"reward must be 'strict' or 'partial', not {reward!r}")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.world = world
        self.max_steps = max_steps
        self.reward_kind: RewardKind = reward
        self.make_user = make_user
        self._templates = templates
        self._max_episodes = max_episodes
        self._manager = manager
        self._shared: _Shared | None = None
        self._stack: AsyncExitStack | None = None
        self._live: LiveEpisode | None = None
        self._release: anyio.Event | None = None  # set to end the episode's holder task
        self._released: anyio.Event | None = None  # set once the holder has ended (episode deleted)
        self._task: Task | None = None
        self._user: User | None = None
        self._state: Conversation | None = None
        self._policy = ""
        self._tools: list[ToolDef] = []
        self.done = False
        self.verdict: Verdict | None = None
        self.termination: Termination | None = None

    async def __aenter__(self) -> AsyncEnv:
        stack = AsyncExitStack()
        manager = self._manager
        if manager is None:
            manager = EpisodeManager(
                self._templates or TemplateCache(), max_episodes=self._max_episodes, ttl_seconds=None
            )
            stack.callback(manager.close)
        group = await stack.enter_async_context(anyio.create_task_group())
        self._shared = _Shared(manager, InProcessBackend(manager), group)
        self._stack = stack
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._stack is not None and self._shared is not None
        self._shared.group.cancel_scope.cancel()  # every open episode of this block (forks too)
        await self._stack.aclose()
        self._stack = self._shared = None

    def _sibling(self) -> AsyncEnv:
        env = AsyncEnv(self.world, max_steps=self.max_steps, reward=self.reward_kind, make_user=self.make_user)
        env._shared = self._shared
        return env

    def _require(self) -> _Shared:
        if self._shared is None:
            raise EnvError("use the environment inside `async with AsyncEnv(...) as env` (or `with Env(...)`)")
        return self._shared

    async def _open(self, task: Task, snapshot: bytes | None, faults: FaultProfile | None) -> None:
        """Hold the episode open in a task of the shared group until `_release` is set, so the
        MCP client's scopes start and end in one task whichever task calls reset and step."""
        shared = self._require()
        await self.close()
        release, released = anyio.Event(), anyio.Event()

        async def hold(*, task_status: anyio.abc.TaskStatus[LiveEpisode]) -> None:
            try:
                async with shared.backend.episode(self.world, task, snapshot, faults) as live:
                    task_status.started(live)
                    await release.wait()
            finally:
                released.set()

        self._live = await shared.group.start(hold)
        self._release, self._released = release, released
        self._task = task
        self._user = self.make_user(task)
        self._policy = await self._live.policy()
        self._tools = mcp_tools_as_functions(await self._live.list_tools())
        self.done, self.verdict, self.termination = False, None, None

    def _task_of(self, task: str | Task) -> Task:
        if isinstance(task, Task):
            return task
        return self._require().manager.verifier(self.world).tasks.get(task)

    async def reset(self, task: str | Task, *, faults: FaultProfile | None = None) -> Observation:
        """A fresh episode of `task` (an id, or a Task of this world): the task's state, seed,
        scale and fault profile (`faults` instead, when given). Ends the previous episode."""
        try:
            spec = self._task_of(task)
        except LookupError as exc:
            raise EnvError(str(exc).strip("'\"")) from None
        await self._open(spec, None, faults)
        first = [Message(role="system", content=self._policy), Message(role="user", content=spec.instruction)]
        self._state = Conversation(list(first), [], Usage())
        return self._observation(first)

    def _observation(self, new: list[Message]) -> Observation:
        assert self._state is not None and self._task is not None
        return Observation(
            task_id=self._task.id,
            world=self.world,
            policy=self._policy,
            tools=self._tools,
            messages=list(self._state.messages),
            new=new,
        )

    async def step(self, action: Action) -> StepResult:
        """Act: run the tool calls, or give the message to the user and take the reply. Returns
        the observation, the reward (0.0 before the end), whether the episode is over, and
        `info` (at the end: `reward`, `partial_reward`, `passed`, `verdict`, `termination`)."""
        if self._live is None or self._state is None:
            raise EnvError("call reset(task) before step()")
        if self.done:
            raise EnvError("the episode is over; call reset(task) for a new one")
        state = self._state
        steps = sum(1 for m in state.messages if m.role == "assistant")
        message = _as_message(action, steps)
        before = len(state.messages)
        state.messages.append(message)
        if message.tool_calls:
            for call in message.tool_calls:
                await state.call_tool(self._live, call.id, call.function.name, call.function.arguments)
        else:
            assert self._user is not None
            try:
                said = await self._user.reply(state.messages, state.usage)
            except (ModelError, TimeoutError) as exc:  # the simulated user (a model) failed for good
                return self._fail(exc, state.messages[before:])
            if said is None:
                return await self._end("answered", state.messages[before:])
            state.messages.append(Message(role="user", content=said))
        if steps + 1 >= self.max_steps:
            return await self._end("step_limit", state.messages[before:])
        return StepResult(self._observation(state.messages[before:]), 0.0, False, {})

    async def _end(self, termination: Termination, new: list[Message]) -> StepResult:
        assert self._live is not None and self._state is not None
        state = self._state
        outcome = await self._live.finish(final_answer(state.messages), conversation_dicts(state.messages))
        state.attach_record(outcome.record)
        verdict = outcome.verdict
        assert isinstance(verdict, Verdict)  # in process, the verdict is always the full one
        self.done, self.verdict, self.termination = True, verdict, termination
        reward = verdict.reward if self.reward_kind == "strict" else verdict.partial_reward
        info = {
            "reward": verdict.reward,
            "partial_reward": verdict.partial_reward,
            "passed": verdict.passed,
            "termination": termination,
            "ending": termination,
            "truncated": termination == "step_limit",
            "strict": verdict.reward,
            "partial": verdict.partial_reward,
            "failure": verdict.failure,
            "checks": dict(verdict.components),
            "state_hash": verdict.state_hash,
            "verdict": verdict.model_dump(mode="json"),
        }
        return StepResult(self._observation(new), reward, True, info)

    def _fail(self, error: ModelError | TimeoutError, new: list[Message]) -> StepResult:
        """The simulated user failed for good (its model endpoint): the episode ends ungraded,
        `ending` timeout or error, never mistaken for the agent's failure or a truncation."""
        self.done, self.verdict = True, None
        self.termination = "timeout" if isinstance(error, TimeoutError) else "model_error"
        ending = "timeout" if isinstance(error, TimeoutError) else "error"
        info = {"termination": self.termination, "ending": ending, "truncated": False, "error": str(error)}
        return StepResult(self._observation(new), 0.0, True, info)

    async def snapshot(self) -> EnvSnapshot:
        """The live episode's database and conversation, to `restore` later (here or in another
        AsyncEnv of the same world)."""
        if self._live is None or self._state is None or self._task is None:
            raise EnvError("nothing to snapshot: call reset(task) first")
        if self.done:
            raise EnvError("the episode is over (graded); snapshot it before its last step")
        database = await self._live.suspend()
        state = self._state
        calls = [c.model_copy(deep=True) for c in state.calls]
        return EnvSnapshot(
            self._task.id, database, list(state.messages), calls, list(state.sent), state.usage.model_copy()
        )

    async def restore(self, snapshot: EnvSnapshot) -> Observation:
        """Continue from `snapshot`: the same database and conversation, a new episode."""
        task = self._task_of(snapshot.task_id)
        await self._open(task, snapshot.database, None)
        calls = [c.model_copy(deep=True) for c in snapshot.calls]
        self._state = Conversation(list(snapshot.messages), calls, snapshot.usage.model_copy(), list(snapshot.sent))
        return self._observation([])

    async def fork(self) -> AsyncEnv:
        """An independent copy of this live environment (its own episode with this one's state,
        the same conversation so far), for tree search. Closed with this environment's block."""
        snapshot = await self.snapshot()
        other = self._sibling()
        await other.restore(snapshot)
        return other

    def trajectory(self, *, agent: str = "env", trial: int = 0) -> Trajectory:
        """The episode so far (graded once done) as a trajectory record, for the journal and
        the exports."""
        if self._state is None or self._task is None:
            raise EnvError("no episode yet: call reset(task) first")
        verdict = self.verdict
        return Trajectory(
            world=self.world,
            world_version=verdict.world_version if verdict else "",
            episode_id=self._live.id if self._live else None,
            task_id=self._task.id,
            trial=trial,
            agent=agent,
            status="completed" if self.done else "cancelled",
            termination=self.termination or "cancelled",
            messages=self._state.messages,
            tools=self._tools,
            calls=self._state.calls,
            verdict=verdict.model_dump(mode="json") if verdict else None,
            reward=verdict.reward if verdict else None,
            partial_reward=verdict.partial_reward if verdict else None,
            state_hash=verdict.state_hash if verdict else None,
            usage=self._state.usage,
        )

    async def close(self) -> None:
        """End the current episode (it is deleted); the environment can be reset again."""
        if self._release is not None and self._released is not None:
            self._release.set()
            await self._released.wait()  # the episode is deleted when its holder ends
        if self._user is not None:
            await self._user.aclose()
        self._live = self._release = self._released = self._user = None


class Env:
    """The blocking `AsyncEnv`: each environment runs its episodes on an event loop of its own
    (a thread). Use it as `with Env(world) as env`; the same arguments as AsyncEnv."""

    def __init__(self, world: str, **options: Any) -> None:
        self._options = (world, options)
        self._portal_cm: Any = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._env_cm: Any = None
        self._env: AsyncEnv | None = None
        self._owner = True

    def __enter__(self) -> Env:
        world, options = self._options
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._env_cm = self._portal.wrap_async_context_manager(AsyncEnv(world, **options))
        self._env = self._env_cm.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._owner:
            self.close()
            return
        try:
            self._env_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._env = self._portal = None

    def _run(self, method: str, *args: Any, **kw: Any) -> Any:
        """Call the AsyncEnv's `method` on this environment's event loop, and wait."""
        if self._portal is None or self._env is None:
            raise EnvError("use the environment inside `with Env(...) as env`")
        return self._portal.call(functools.partial(getattr(self._env, method), *args, **kw))

    @property
    def done(self) -> bool:
        return self._env.done if self._env else False

    @property
    def verdict(self) -> Verdict | None:
        return self._env.verdict if self._env else None

    def reset(self, task: str | Task, *, faults: FaultProfile | None = None) -> Observation:
        return self._run("reset", task, faults=faults)

    def step(self, action: Action) -> StepResult:
        return self._run("step", action)

    def snapshot(self) -> EnvSnapshot:
        return self._run("snapshot")

    def restore(self, snapshot: EnvSnapshot) -> Observation:
        return self._run("restore", snapshot)

    def fork(self) -> Env:
        """A copy of this live environment on the same event loop; it ends with this one's block
        (or with its own `close()`)."""
        other = Env.__new__(Env)
        other._options = self._options
        other._portal_cm = other._env_cm = None
        other._portal = self._portal
        other._owner = False
        other._env = self._run("fork")
        return other

    def trajectory(self, **kw: Any) -> Trajectory:
        if self._env is None:
            raise EnvError("use the environment inside `with Env(...) as env`")
        return self._env.trajectory(**kw)

    def close(self) -> None:
        """End the current episode."""
        if self._env is not None and self._portal is not None:
            self._run("close")
