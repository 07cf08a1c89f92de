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
into the prompt), each a call over MCP on that episode. One more method,
`send_message_to_user(message)`, reaches the task's simulated user (the server's user route):
its result is the user's reply (a yes to a confirmation request, a detail asked for, the next
request), so tasks whose rubric needs a dialogue train too (`dialogue=False` leaves them and the
method out). `reward` grades every rollout's episode with mcpsim's verifier (the completion's
last assistant text is the final answer; the conversation is the episode's, the user's replies
as user messages) and deletes the episode: strict by default, or partial. Each environment then
holds why its rollout ended (`ending`: answered; step_limit when TRL cut it; timeout or error
when a request to the server failed, ungraded) and the verdict's parts (`info`), which `reward`
also logs through TRL's `log_extra` and `log_metric`. Tool calls are blocking HTTP requests
(TRL calls environment tools synchronously).
"""

from __future__ import annotations

import inspect
from typing import Any, Literal

from mcpsim_client import Client, EpisodeInfo, MCPSimError, TaskInfo, Tool
from mcpsim_client.dialogue import NO_REPLY, USER_TOOL, Dialogue, ending_of
from mcpsim_client.models import Ending, choose_tasks, ending_info, reward_kind

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
        self.dialogue: Dialogue | None = None
        self.calls = 0
        self.ending: Ending | None = None  # why the rollout ended, once graded (see `MCPSimTRL.reward`)
        self.info: dict[str, Any] = {}  # the ending and the verdict's parts, once graded
        self._failure: tuple[Ending, str] | None = None  # a request to the server that failed

    def reset(self, task: str | None = None, **row: Any) -> None:
        if task is None:
            raise ValueError("each training row needs a `task` column (an mcpsim task id): see MCPSimTRL.dataset()")
        owner = self._owner
        if task not in owner.instructions:
            raise ValueError(f"task {task!r} is not among the tasks of this MCPSimTRL (its `tasks`)")
        self._drop()
        self.episode = owner.client.create(owner.world, task=task)
        self.dialogue = Dialogue(owner.client, self.episode, owner.instructions[task], policy=owner.policy)
        self.calls, self.ending, self.info, self._failure = 0, None, {}, None
        return None

    def _live(self) -> Dialogue:
        if self.dialogue is None:
            raise RuntimeError("the environment has no episode: reset(task=...) first")
        return self.dialogue

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        dialogue = self._live()
        self.calls += 1
        try:
            return dialogue.tool_call(f"call_{self.calls}", name, arguments).as_message_content()
        except MCPSimError as exc:
            return self._failed(exc)

    def send_message_to_user(self, message: str) -> str:
        """Send a message to the user (a question, or a request for the go-ahead before a change)
        and get the user's reply. Your final answer is your last message without a tool call.

        Args:
            message: What to say to the user
        """
        dialogue = self._live()
        self.calls += 1
        try:
            reply = dialogue.answer(message)
        except MCPSimError as exc:
            return self._failed(exc)
        return NO_REPLY if reply is None else reply

    def _failed(self, error: MCPSimError) -> str:
        """A request to the server failed: the rollout is over (`reward` gives it 0.0, ungraded,
        ending timeout or error), and the model is told."""
        ending = ending_of(error)
        assert ending is not None
        self._failure = self._failure or (ending, str(error))
        return f"Error: the environment failed ({ending}); stop here."

    def _drop(self) -> None:
        """Delete the episode; after a failed request a failing delete is let go too (the server
        expires what it keeps)."""
        if self.episode is not None:
            try:
                self._owner.client.delete(self.episode, missing_ok=True)
            except MCPSimError:
                if self.ending not in ("timeout", "error"):
                    raise
            self.episode = self.dialogue = None


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
        dialogue: bool = True,
        stop_token_ids: list[int] | None = None,
        client: Client | None = None,
    ) -> None:
        """`tasks`: task ids (default: every task of the world; with `dialogue=False`, only those
        that need no dialogue, and no `send_message_to_user` tool); `tools`: offer only these of
        the world's tools (default: all; fewer tools make shorter prompts); `stop_token_ids`: the
        tokenizer's end and padding ids, to tell a completion cut at `max_completion_length`
        (ending `step_limit`) from an answer."""
        self.client = client or Client(server, token)
        self.stop_token_ids = None if stop_token_ids is None else set(stop_token_ids)
        self.world, self.reward_kind = world, reward_kind(reward)
        self.tasks: list[TaskInfo] = choose_tasks(world, self.client.tasks(world), tasks, dialogue=dialogue)
        self.instructions = {t.id: t.instruction for t in self.tasks}
        with self.client.episode(world, task=self.tasks[0].id) as probe:
            self.policy = self.client.policy(probe)
            offered = self.client.tools(probe)
        if tools is not None:
            unknown = sorted(set(tools) - {t.name for t in offered})
            if unknown:
                raise ValueError(f"unknown tools of {world}: {', '.join(unknown)}")
            offered = [t for t in offered if t.name in tools]
        self.tool_names = [t.name for t in offered]
        if dialogue and USER_TOOL in self.tool_names:
            raise ValueError(f"{world} has a tool named {USER_TOOL}: use dialogue=False")
        methods: dict[str, Any] = {t.name: _tool_method(t) for t in offered}
        methods["_owner"] = self
        if not dialogue:  # hide the user: TRL offers every public method as a tool
            methods[USER_TOOL] = None
        else:
            self.tool_names.append(USER_TOOL)
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

    def reward(
        self,
        completions: list[Any],
        environments: list[_Environment],
        completion_ids: list[list[int]] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        """TRL's reward function: mcpsim's verdict on each rollout's episode (then deleted). Each
        environment keeps why its rollout ended and the verdict's parts (`ending`, `info`); with
        TRL's `log_extra` and `log_metric` (which TRL passes), they go to its completions table
        and metrics too."""
        rewards, infos = [], []
        for number, (completion, env) in enumerate(zip(completions, environments, strict=True)):
            if env.dialogue is None:
                raise RuntimeError("a rollout's environment has no episode (was reset called?)")
            messages = completion if isinstance(completion, list) else [{"role": "assistant", "content": completion}]
            ids = completion_ids[number] if completion_ids is not None else None
            cut = bool(ids and self.stop_token_ids is not None and ids[-1] not in self.stop_token_ids)
            rewards.append(self._grade(env, messages, cut))
            infos.append(env.info)
            env._drop()
        if (log_extra := kwargs.get("log_extra")) is not None:
            log_extra("mcpsim_ending", [i["ending"] for i in infos])
            log_extra("mcpsim_partial", [i.get("partial") for i in infos])
        if (log_metric := kwargs.get("log_metric")) is not None and infos:
            log_metric("mcpsim_truncated", sum(i["truncated"] for i in infos) / len(infos))
            log_metric("mcpsim_failed", sum(i["ending"] in ("timeout", "error") for i in infos) / len(infos))
        return rewards

    def _grade(self, env: _Environment, messages: list[dict[str, Any]], cut: bool) -> float:
        """The rollout's reward; `env.ending` and `env.info` say how it ended. Graded on the
        episode's conversation as the environment saw it (the user's turns as user messages)
        with the completion's last assistant text as the final answer."""
        assert env.dialogue is not None
        if env._failure is not None:
            env.ending, error = env._failure
            env.info = ending_info(env.ending, error=error)
            return 0.0
        last = messages[-1] if messages else {}
        answered = last.get("role") == "assistant" and not last.get("tool_calls")
        # cut by TRL's limits: tool-calling iterations (the last message is a call or its
        # result) or completion length (the last token is no end-of-turn)
        ending: Ending = "answered" if answered and not cut else "step_limit"
        answer = str(last.get("content") or "") if ending == "answered" else None
        if answer is not None:
            env.dialogue.messages.append({"role": "assistant", "content": answer})
        try:
            verdict = env.dialogue.verify(answer)
        except MCPSimError as exc:
            env.ending = ending_of(exc)
            assert env.ending is not None
            env.info = ending_info(env.ending, error=str(exc))
            return 0.0
        env.ending, env.info = ending, ending_info(ending, verdict)
        return verdict.score(self.reward_kind)
