"""mcpsim episodes as TRL's GRPO environments (`GRPOTrainer(environment_factory=...)`, TRL 1.x).

    from mcpsim_client.adapters.trl import MCPSimTRL
    mcpsim = MCPSimTRL("http://127.0.0.1:8000", token, world="retail")
    trainer = GRPOTrainer(
        model=..., train_dataset=mcpsim.dataset(),            # one row per task: prompt + task id
        environment_factory=mcpsim.environment, reward_funcs=[mcpsim.reward], args=GRPOConfig(...),
    )

TRL gives each rollout its own environment instance: `reset(task=...)` creates an mcpsim
episode of the row's task; the environment's public methods are the world's tools (one method
per MCP tool, with the tool's typed parameters and descriptions, so TRL renders their schemas
into the prompt), each a call over MCP on that episode; `reward` grades every rollout's episode
with mcpsim's verifier (the final assistant text is the answer, the completion the
conversation) and deletes the episode: strict by default, or partial.

Limits: the user says only the task's first message, so `dataset()` leaves out tasks whose
rubric needs a dialogue. Tool calls are blocking HTTP requests (TRL calls environment tools
synchronously).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Literal

from mcpsim_client import Client, EpisodeInfo, TaskInfo, Tool
from mcpsim_client.models import choose_tasks, reward_kind

__all__ = ["MCPSimTRL"]

_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _python_type(schema: dict[str, Any]) -> Any:
    """The Python annotation TRL (transformers' get_json_schema) turns back into `schema`'s type."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        kinds = [o for o in options if o.get("type") != "null"]
        inner = _python_type(kinds[0]) if len(kinds) == 1 else Any
        return inner | None if len(kinds) < len(options) and inner is not Any else inner
    kind = schema.get("type")
    return _TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _docstring(tool: Tool) -> str:
    """A Google-style docstring: the tool's description, then each parameter's (TRL requires one
    per argument)."""
    properties = tool.input_schema.get("properties") or {}
    lines = [tool.description.strip() or tool.name, "", "Args:"]
    for name, schema in properties.items():
        text = " ".join(str(schema.get("description") or schema.get("title") or name).split())
        if "enum" in schema:
            text += f" (one of: {', '.join(map(str, schema['enum']))})"
        lines.append(f"    {name}: {text}")
    if not properties:
        lines = lines[:-2]
    return "\n".join(lines)


def _tool_method(tool: Tool) -> Any:
    """A method calling `tool` on the environment's episode, with the tool's signature."""
    properties = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])

    def call(self: _Environment, **arguments: Any) -> str:
        given = {k: v for k, v in arguments.items() if v is not None or k in required}
        return self._call(tool.name, given)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    for name, schema in sorted(properties.items(), key=lambda item: item[0] not in required):
        annotation = _python_type(schema)
        default = inspect.Parameter.empty if name in required else None
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        )
        annotations[name] = annotation
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    call.__annotations__ = annotations
    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = _docstring(tool)
    return call


class _Environment:
    """One rollout's episode (see the module's doc); its tool methods are added per world."""

    _owner: MCPSimTRL

    def __init__(self) -> None:
        self.episode: EpisodeInfo | None = None
        self.calls = 0

    def reset(self, task: str | None = None, **row: Any) -> None:
        if task is None:
            raise ValueError("each training row needs a `task` column (an mcpsim task id): see MCPSimTRL.dataset()")
        self._drop()
        self.episode = self._owner.client.create(self._owner.world, task=task)
        self.calls = 0
        return None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.episode is None:
            raise RuntimeError("the environment has no episode: reset(task=...) first")
        self.calls += 1
        return self._owner.client.call_tool(self.episode, name, arguments).as_message_content()

    def _drop(self) -> None:
        if self.episode is not None:
            self._owner.client.delete(self.episode, missing_ok=True)
            self.episode = None


class MCPSimTRL:
    """The bridge between one mcpsim server's world and TRL's GRPOTrainer."""

    def __init__(
        self,
        server: str,
        token: str | None,
        world: str,
        *,
        tasks: list[str] | None = None,
        tools: list[str] | None = None,
        reward: Literal["strict", "partial"] = "strict",
        client: Client | None = None,
    ) -> None:
        """`tasks`: task ids (default: every task that needs no dialogue); `tools`: offer only
        these of the world's tools (default: all; fewer tools make shorter prompts)."""
        self.client = client or Client(server, token)
        self.world, self.reward_kind = world, reward_kind(reward)
        self.tasks: list[TaskInfo] = choose_tasks(world, self.client.tasks(world), tasks)
        with self.client.episode(world, task=self.tasks[0].id) as probe:
            self.policy = self.client.policy(probe)
            offered = self.client.tools(probe)
        if tools is not None:
            unknown = sorted(set(tools) - {t.name for t in offered})
            if unknown:
                raise ValueError(f"unknown tools of {world}: {', '.join(unknown)}")
            offered = [t for t in offered if t.name in tools]
        self.tool_names = [t.name for t in offered]
        methods: dict[str, Any] = {t.name: _tool_method(t) for t in offered}
        methods["_owner"] = self
        self.environment_class = type(f"MCPSim{world.title()}Environment", (_Environment,), methods)

    def environment(self) -> _Environment:
        """TRL's `environment_factory`: a fresh environment for one rollout."""
        return self.environment_class()

    def dataset(self) -> list[dict[str, Any]]:
        """One row per task: the conversational prompt (policy, request) and the task id, for
        `datasets.Dataset.from_list`."""
        return [
            {
                "prompt": [
                    {"role": "system", "content": self.policy},
                    {"role": "user", "content": t.instruction},
                ],
                "task": t.id,
            }
            for t in self.tasks
        ]

    def reward(self, completions: list[Any], environments: list[_Environment], **kwargs: Any) -> list[float]:
        """TRL's reward function: mcpsim's verdict on each rollout's episode (then deleted)."""
        rewards = []
        for completion, env in zip(completions, environments, strict=True):
            if env.episode is None:
                raise RuntimeError("a rollout's environment has no episode (was reset called?)")
            messages = completion if isinstance(completion, list) else [{"role": "assistant", "content": completion}]
            answer = next(
                (m.get("content") for m in reversed(messages) if m.get("role") == "assistant" and m.get("content")), ""
            )
            verdict = self.client.verify(env.episode, answer=str(answer), messages=_plain(messages))
            rewards.append(verdict.score(self.reward_kind))
            env._drop()
        return rewards


def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as mcpsim's checks read them: tool-call arguments as JSON text, text content."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.get("role"), "content": m.get("content")}
        if not isinstance(item["content"], str | type(None)):
            item["content"] = json.dumps(item["content"])
        if m.get("tool_calls"):
            item["tool_calls"] = [
                {
                    "id": c.get("id") or f"call_{i}",
                    "type": "function",
                    "function": {
                        "name": (c.get("function") or {}).get("name"),
                        "arguments": json.dumps((c.get("function") or {}).get("arguments") or {})
                        if not isinstance((c.get("function") or {}).get("arguments"), str)
                        else c["function"]["arguments"],
                    },
                }
                for i, c in enumerate(m["tool_calls"])
            ]
        out.append(item)
    return out
