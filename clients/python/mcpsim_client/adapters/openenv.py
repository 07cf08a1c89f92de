"""mcpsim episodes behind OpenEnv's environment server interface (`pip install openenv`).

    from mcpsim_client.adapters.openenv import create_mcpsim_app
    app = create_mcpsim_app("http://127.0.0.1:8000", token, world="retail")   # a FastAPI app
    # uvicorn.run(app, port=8001); then OpenEnv's clients (GenericEnvClient, TRL, ...) connect

Each OpenEnv session is one `MCPSimEnvironment`, which holds one mcpsim episode at a time:
`reset(task=ID)` (or `reset(seed=N)`: the N-th task of the list, modulo its length) creates an
episode of the task on the mcpsim server and observes the policy, the tools and the user's
request; `step` takes an `MCPSimAction`: a tool call (`tool_name`, `arguments`), run over MCP on
the episode, or a `message` to the user, which is the final answer: the episode is graded by
mcpsim's verifier and the observation carries the reward (strict by default, or partial) and
`done`. `state` tells the episode, its MCP URL, the step count, the verdict and the ending.

The last observation's `metadata` says why the episode ended (`ending`: answered, step_limit,
timeout or error; `truncated` for step_limit, which is graded as it stood) and, when graded, the
verdict's parts: `strict`, `partial`, `passed`, `failure` and each check's result (`checks`).
A failed request to the server ends the episode ungraded: `done`, reward None, the `error`.

A `message` goes to the task's simulated user (the server's `POST /episodes/{id}/user`): when the
user answers (a yes to a confirmation request, a further request), the observation carries its
`user_message` and the episode goes on; when it has nothing more to say, the message was the
final answer. So tasks whose rubric needs a dialogue run too. Control-plane calls are blocking
(OpenEnv runs a synchronous environment in its thread pool).
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server import Environment, create_app
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from mcpsim_client import Client, EpisodeInfo, EpisodeNotFound, MCPSimError, TaskInfo
from mcpsim_client.dialogue import Dialogue, ending_of
from mcpsim_client.models import Ending, choose_tasks, ending_info, reward_kind

__all__ = ["MCPSimAction", "MCPSimEnvironment", "MCPSimObservation", "MCPSimState", "create_mcpsim_app"]


class MCPSimAction(Action):
    """A tool call (`tool_name` and `arguments`) or a message to the user (`message`, the final
    answer), never both."""

    tool_name: str | None = Field(default=None, description="The tool to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments")
    message: str | None = Field(
        default=None, description="A message to the user: the final answer, unless the user replies"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> MCPSimAction:
        if (self.tool_name is None) == (self.message is None):
            # a PydanticCustomError: OpenEnv sends validation errors to its client as JSON
            raise PydanticCustomError(
                "mcpsim_action", "an action is either a tool call (tool_name) or a message to the user (message)"
            )
        return self


class MCPSimObservation(Observation):
    task_id: str = ""
    instruction: str = Field(default="", description="The user's request (on reset)")
    policy: str = Field(default="", description="The world's policy: the agent's system prompt (on reset)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI function tools (on reset)")
    result: str | None = Field(default=None, description="The tool's result, as the agent sees it")
    user_message: str | None = Field(default=None, description="The user's reply to the agent's message")
    is_error: bool = False
    messages: list[dict[str, Any]] = Field(default_factory=list, description="The conversation so far")
    verdict: dict[str, Any] | None = Field(default=None, description="mcpsim's verdict, once done")


class MCPSimState(State):
    task_id: str | None = None
    world: str = ""
    mcp_url: str | None = None
    verdict: dict[str, Any] | None = None
    ending: Ending | None = Field(default=None, description="Why the episode ended (see `MCPSimEnvironment`)")


class MCPSimEnvironment(Environment[MCPSimAction, MCPSimObservation, MCPSimState]):
    """One OpenEnv session over an mcpsim server (see the module's doc)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own episodes

    def __init__(
        self,
        server: str,
        token: str | None,
        world: str,
        *,
        reward: Literal["strict", "partial"] = "strict",
        max_steps: int = 30,
        tasks: list[str] | None = None,
        client: Client | None = None,
    ) -> None:
        super().__init__()
        self.client = client or Client(server, token)
        self.world, self.reward, self.max_steps = world, reward_kind(reward), max_steps
        self._task_ids = tasks
        self._tasks: dict[str, TaskInfo] | None = None
        self._episode: EpisodeInfo | None = None
        self._dialogue: Dialogue | None = None
        self._state = MCPSimState(world=world)

    def _catalogue(self) -> dict[str, TaskInfo]:
        if self._tasks is None:
            chosen = choose_tasks(self.world, self.client.tasks(self.world), self._task_ids, dialogue=True)
            self._tasks = {t.id: t for t in chosen}
        return self._tasks

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task: str | None = None, **kwargs: Any
    ) -> MCPSimObservation:
        catalogue = self._catalogue()
        if task is None:
            ids = list(catalogue)
            task = ids[(seed or 0) % len(ids)]
        elif task not in catalogue:
            raise ValueError(f"task {task!r} is not among this environment's tasks")
        self._drop()
        self._episode = self.client.create(self.world, task=task)
        instruction = catalogue[task].instruction
        self._dialogue = Dialogue(self.client, self._episode, instruction)
        tools = [t.as_openai() for t in self.client.tools(self._episode)]
        self._state = MCPSimState(
            episode_id=episode_id or self._episode.id,
            step_count=0,
            task_id=task,
            world=self.world,
            mcp_url=self._episode.mcp_url,
        )
        return MCPSimObservation(
            task_id=task,
            instruction=instruction,
            policy=self._dialogue.policy,
            tools=tools,
            messages=list(self._dialogue.messages),
        )

    def step(self, action: MCPSimAction, timeout_s: float | None = None, **kwargs: Any) -> MCPSimObservation:
        dialogue = self._dialogue
        if dialogue is None or self._state.task_id is None:
            raise RuntimeError("call reset() before step()")
        if self._state.ending is not None:
            raise RuntimeError("the episode is over; call reset() for a new one")
        self._state.step_count += 1
        try:
            return self._act(dialogue, action)
        except MCPSimError as exc:  # the server failed: the episode ends, ungraded, and says why
            ending = ending_of(exc)
            assert ending is not None
            return self._end(ending, None, metadata=ending_info(ending, error=str(exc)))

    def _act(self, dialogue: Dialogue, action: MCPSimAction) -> MCPSimObservation:
        assert self._state.task_id is not None
        seen: dict[str, Any]
        if action.message is not None:
            reply = dialogue.answer(action.message)
            if reply is None:
                return self._finish(action.message, "answered")
            seen = {"user_message": reply}
        else:
            assert action.tool_name is not None
            result = dialogue.tool_call(f"call_{self._state.step_count}", action.tool_name, action.arguments)
            seen = {"result": result.as_message_content(), "is_error": result.is_error}
        if self._state.step_count >= self.max_steps:
            return self._finish(None, "step_limit", **seen)
        return MCPSimObservation(
            task_id=self._state.task_id, messages=list(dialogue.messages), reward=0.0, done=False, **seen
        )

    def _finish(self, answer: str | None, ending: Ending, **observed: Any) -> MCPSimObservation:
        """Grade the episode: the observation carries the reward, the verdict, and in `metadata`
        the ending and the verdict's parts (`ending_info`)."""
        assert self._dialogue is not None
        verdict = self._dialogue.verify(answer)
        self._state.verdict = verdict.raw
        metadata = {"reward": verdict.reward, "partial_reward": verdict.partial_reward, "passed": verdict.passed}
        metadata |= ending_info(ending, verdict)
        return self._end(ending, verdict.score(self.reward), verdict=verdict.raw, metadata=metadata, **observed)

    def _end(self, ending: Ending, reward: float | None, **observed: Any) -> MCPSimObservation:
        assert self._dialogue is not None and self._state.task_id is not None
        self._state.ending = ending
        messages = list(self._dialogue.messages)
        self._drop(failed=ending in ("timeout", "error"))
        return MCPSimObservation(task_id=self._state.task_id, messages=messages, reward=reward, done=True, **observed)

    @property
    def state(self) -> MCPSimState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=f"mcpsim-{self.world}",
            description=f"mcpsim's {self.world} world: stateful tools over MCP, graded by mcpsim's verifier",
            version="0.1.0",
        )

    def _drop(self, failed: bool = False) -> None:
        """Delete the episode; after a failed request (`failed`) a failing delete is let go too
        (the server expires what it keeps)."""
        if self._episode is not None:
            try:
                self.client.delete(self._episode, missing_ok=True)
            except EpisodeNotFound:
                pass
            except MCPSimError:
                if not failed:
                    raise
            self._episode = self._dialogue = None

    def close(self) -> None:
        self._drop()


def create_mcpsim_app(
    server: str, token: str | None, world: str, *, max_concurrent_envs: int = 64, **settings: Any
) -> Any:
    """OpenEnv's FastAPI app serving mcpsim episodes of `world` (one episode per session);
    `settings`: `MCPSimEnvironment`'s (tasks, reward, max_steps)."""
    client = Client(server, token)  # one connection pool for every session

    def factory() -> MCPSimEnvironment:
        return MCPSimEnvironment(server, token, world, client=client, **settings)

    return create_app(
        factory,
        MCPSimAction,
        MCPSimObservation,
        env_name=f"mcpsim-{world}",
        max_concurrent_envs=max_concurrent_envs,
        state_cls=MCPSimState,
    )
