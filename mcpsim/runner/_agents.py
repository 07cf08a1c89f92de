"""Agents: each turns the conversation so far into the next assistant message (text, or tool
calls). The runner owns the loop, so every agent's rollout is just its messages, which makes
partial rollouts resumable and trajectories uniform.

Write your own by implementing `Agent` (see `NoopAgent`) and pass it to `run_episodes`, or name
it on the command line: `mcpsim run WORLD --agent package.module:Class` (`custom_agent`).
"""

from __future__ import annotations

import importlib
import inspect
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from mcpsim.runner._llm import ChatClient
from mcpsim.runner._random import MALFORMED, Seen, sample_arguments
from mcpsim.tasks import Confirmed, Say, Step, Task, gold_steps
from mcpsim.trajectories import FunctionCall, Message, ToolCall, ToolDef, Usage
from mcpsim.world import derive_seed, load_world


@dataclass
class Turn:
    """What an agent is shown at each step."""

    messages: list[Message]  # system policy, user turns, earlier assistant and tool messages
    tools: list[ToolDef]  # OpenAI function definitions, in a stable order
    step: int  # how many assistant messages came before this one
    seed: int  # the episode's agent seed (run seed, task, trial)
    usage: Usage  # add model token usage here
    task: Task | None = None  # only for agents that declare `needs_task` (the oracle)
    world: str | None = None  # the world's name, also only for agents that declare `needs_task`


class Agent(Protocol):
    name: str
    needs_task: bool

    async def respond(self, turn: Turn) -> Message: ...

    async def aclose(self) -> None: ...


@dataclass
class NoopAgent:
    """Does nothing and says nothing: every task must fail for it."""

    name: str = "noop"
    needs_task: bool = False

    async def respond(self, turn: Turn) -> Message:
        return Message(role="assistant", content="")

    async def aclose(self) -> None:
        pass


@dataclass
class OracleAgent:
    """Replays the task's gold solution (asking the user's go-ahead before the first write when
    the rubric checks for a confirmation), then states the answer facts."""

    name: str = "oracle"
    needs_task: bool = True

    async def respond(self, turn: Turn) -> Message:
        assert turn.task is not None
        steps = oracle_steps(turn.task, turn.world)
        # One assistant message per step: a tool call for an action, a question for a Say.
        if turn.step < len(steps):
            step = steps[turn.step]
            if isinstance(step, Say):
                return Message(role="assistant", content=step.say)
            return Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id=f"call_{turn.step}", function=FunctionCall(name=step.tool, arguments=json.dumps(step.args))
                    )
                ],
            )
        return Message(role="assistant", content=turn.task.oracle_answer())

    async def aclose(self) -> None:
        pass


def oracle_steps(task: Task, world: str | None) -> list[Step]:
    """The gold actions, with a confirmation question before the first write when the rubric
    has a `confirmed` check (`mcpsim.tasks._scenario.gold_steps`)."""
    if world is None or not any(isinstance(c, Confirmed) for c in task.rubric):
        return list(task.gold)

    return gold_steps(task, load_world(world))


@dataclass
class RandomAgent:
    """`steps` random tool calls, then "I am done.": first the tools that need no argument (the
    world's listings and searches), then any, with arguments drawn from what its results showed
    (`_random.Seen`: ids, names, amounts in range, the schema's enums); a `malformed` share of the
    calls gets schema-shaped noise instead. Negative data that changes state, and fuzzing."""

    steps: int = 8
    malformed: float = MALFORMED
    name: str = "random"
    needs_task: bool = False
    # arguments for an input schema from elsewhere (the audit's: the episode's own rows), else `Seen`
    arguments: Callable[[dict[str, Any], random.Random], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.malformed <= 1.0:
            raise ValueError(f"malformed is a share of the calls, from 0 to 1, not {self.malformed}")

    async def respond(self, turn: Turn) -> Message:
        rng = random.Random(derive_seed(turn.seed, "random-agent", turn.step))
        if turn.step >= self.steps or not turn.tools:
            return Message(role="assistant", content="I am done.")
        tools = [t.function for t in turn.tools]
        open_ = [t for t in tools if not (t.get("parameters") or {}).get("required")]
        tool = rng.choice(open_ if turn.step < 2 and open_ else tools)  # find the data first
        seen, schema = Seen.of(turn.messages), tool.get("parameters") or {}
        if rng.random() < self.malformed:
            args = sample_arguments(schema, rng, Seen({}, seen.strings))  # noise: nothing bound to its name
        elif self.arguments is not None:
            args = self.arguments(schema, rng)
        else:
            args = sample_arguments(schema, rng, seen)
        return Message(
            role="assistant",
            tool_calls=[
                ToolCall(id=f"call_{turn.step}", function=FunctionCall(name=tool["name"], arguments=json.dumps(args)))
            ],
        )

    async def aclose(self) -> None:
        pass


@dataclass
class OpenAIAgent:
    """Any OpenAI-compatible chat-completions model: the policy is the system message, the
    world's tools are offered as functions, and the model decides."""

    client: ChatClient
    name: str = ""
    needs_task: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.name = self.name or f"openai:{self.client.model}"

    async def respond(self, turn: Turn) -> Message:
        return await self.client.complete(turn.messages, turn.tools, turn.usage)

    async def aclose(self) -> None:
        await self.client.aclose()


def make_agent(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    temperature: float | None = None,
    seed: int | None = None,
    max_tokens: int | None = None,
    extra_body: dict[str, Any] | None = None,
) -> Agent:
    """`oracle`, `noop`, `random` (or `random:SHARE`, the share of malformed calls), `openai:MODEL`,
    or `package.module:Class` (your own agent, see `custom_agent`). A ValueError says what is
    wrong with `spec`."""
    if spec.startswith("random:"):
        share = spec.removeprefix("random:")
        try:
            return RandomAgent(malformed=float(share))
        except ValueError:
            raise ValueError(f"agent {spec!r}: random:SHARE takes a share of malformed calls from 0 to 1") from None
    if ":" in spec and not spec.startswith("openai:"):
        options = {
            "base_url": base_url,
            "api_key_env": api_key_env,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "extra_body": extra_body,
        }
        return custom_agent(spec, options)
    if spec == "oracle":
        return OracleAgent()
    if spec == "noop":
        return NoopAgent()
    if spec == "random":
        return RandomAgent()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        client = ChatClient(
            model=spec.split(":", 1)[1],
            base_url=base_url or "https://api.openai.com/v1",
            api_key_env=api_key_env,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            extra_body=extra_body,
        )
        return OpenAIAgent(client)
    raise ValueError(f"unknown agent {spec!r}: use oracle, noop, random, openai:MODEL or package.module:Class")


def agent_class(spec: str) -> type:
    """The class named by `package.module:Class` (`Class` may be dotted), checked to be an agent:
    async `respond(turn)` and `aclose()` methods. A ValueError says why not."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"agent {spec!r}: name a class as package.module:Class")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"agent {spec!r}: cannot import {module_name}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ValueError(f"agent {spec!r}: {found.__name__} has no attribute {part!r}")
        found = getattr(found, part)
    if not isinstance(found, type):
        raise ValueError(f"agent {spec!r}: {attribute} is a {type(found).__name__}, not a class")
    missing = [m for m in ("respond", "aclose") if not inspect.iscoroutinefunction(getattr(found, m, None))]
    if missing:
        methods = " and ".join(f"async def {m}(self{', turn' if m == 'respond' else ''})" for m in missing)
        raise ValueError(
            f"agent {spec!r}: {attribute} is not an agent: it lacks {methods} (see mcpsim.runner._agents.Agent)"
        )
    return found


def custom_agent(spec: str, options: dict[str, Any]) -> Agent:
    """An instance of your agent class (`agent_class`), given those of the run's model `options`
    (base_url, api_key_env, temperature, seed, max_tokens, extra_body) its constructor takes by
    name. Without `name` and `needs_task` attributes it gets `spec` and False."""
    cls = agent_class(spec)
    parameters = inspect.signature(cls).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        kwargs = options
    else:
        kwargs = {p.name: options[p.name] for p in parameters if p.name in options}
    try:
        agent = cls(**kwargs)
    except Exception as exc:
        raise ValueError(f"agent {spec!r}: creating it failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(getattr(agent, "name", None), str) or not agent.name:
        agent.name = spec
    if not isinstance(getattr(agent, "needs_task", None), bool):
        agent.needs_task = False
    return cast(Agent, agent)
