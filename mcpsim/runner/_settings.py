"""A run's configuration, and the one home of its defaults: what `mcpsim run` decides (its options
take their defaults from these fields) and what the runner, its backends and its executors use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcpsim.engine import FaultProfile, TemplateCache
from mcpsim.runner._agents import Agent, OpenAIAgent, make_agent
from mcpsim.runner._llm import ChatClient
from mcpsim.runner._users import LlmUser, ScriptedUser, ServerUser, User
from mcpsim.tasks import Task


@dataclass
class RolloutSettings:
    """What every rollout of a run shares: its limits, the run's id and the agents' seed."""

    max_steps: int = 30
    timeout: float = 300.0
    run_id: str | None = None
    seed: int = 0


Transport = Literal["inprocess", "http", "stdio"]  # where the episodes live
Executor = Literal["local", "ray"]  # who runs them: this process, or a Ray cluster's workers


@dataclass
class RunConfig:
    """A run's whole configuration, and the one home of its defaults (`mcpsim run`'s options take
    theirs from these fields): the tasks and trials, the agent and the simulated user, where the
    episodes live and who runs them. `templates` stays in this process (Ray workers build their
    own); everything else is plain data, sent as it is to a Ray cluster's workers."""

    world: str
    tasks: list[Task]
    out: Path
    trials: int = 1
    concurrency: int = 8
    seed: int = 0
    resume: bool = False
    keep_first: int | None = None
    faults: FaultProfile | None = None  # for every episode; None: each task's own profile
    max_steps: int = 30  # assistant messages per episode
    timeout: float = 300.0  # seconds per episode
    settings: InitVar[RolloutSettings | None] = None  # instead of max_steps, timeout and seed
    agent: str = "oracle"  # oracle, noop, random, openai:MODEL or package.module:Class
    user: str = "scripted"  # scripted or openai:MODEL
    base_url: str = "https://api.openai.com/v1"  # of openai: agents and users
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    max_tokens: int | None = None
    extra_body: dict[str, Any] | None = None
    token_ids: bool = False  # ask openai: agents' endpoint for token ids and log-probabilities
    user_base_url: str | None = None  # the simulated user's endpoint (None: base_url)
    user_api_key_env: str | None = None  # the variable holding its key (None: api_key_env)
    transport: Transport = "inprocess"
    server_url: str | None = None  # a running `mcpsim serve --http`
    # `tasks` are the server's public listing (a world only the server has): no gold, rubric or
    # hidden user; the scripted user is asked on the server (ServerUser)
    served_tasks: bool = False
    token: str | None = None  # its control-plane token
    executor: Executor = "local"
    address: str | None = None  # the Ray cluster's (None: RAY_ADDRESS, else a local cluster)
    cache_dir: str | None = None  # the template cache on disk, for Ray workers on this machine
    # run in each Ray worker before it loads the world: how the CLI's spec worlds (--world-spec,
    # --worlds-dir), which live only in its own process, reach the workers (picklable)
    worker_setup: Callable[[], object] | None = field(default=None, repr=False, compare=False)
    templates: TemplateCache | None = field(default=None, repr=False, compare=False)

    def __post_init__(self, settings: RolloutSettings | None) -> None:
        if settings is not None:
            self._take(settings)
        if self.served_tasks and (self.server_url is None or self.executor != "local"):
            raise ValueError("served_tasks: the tasks of a world only the server at server_url has (executor local)")
        if self.user != "scripted" and not self.user.startswith("openai:"):
            raise ValueError(f"the simulated user is scripted or openai:MODEL, not {self.user!r}")

    def _take(self, settings: RolloutSettings) -> None:
        """`settings`' max_steps, timeout and seed, which this config's own fields must not
        contradict; its run_id cannot be taken (every run draws its own)."""
        if settings.run_id is not None:
            raise ValueError(
                f"RunConfig(settings=RolloutSettings(run_id={settings.run_id!r})): a run draws its own run_id, "
                "so settings must leave run_id None"
            )
        defaults = RunConfig.__dataclass_fields__
        for name in ("max_steps", "timeout", "seed"):
            mine, theirs = getattr(self, name), getattr(settings, name)
            if mine != defaults[name].default and mine != theirs:
                raise ValueError(
                    f"RunConfig got {name}={mine!r} and settings with {name}={theirs!r}: give {name} in one place"
                )
            setattr(self, name, theirs)

    def make_agent(self) -> Agent:
        """A new agent of `agent` (one per episode)."""
        agent = make_agent(
            self.agent,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            extra_body=self.extra_body,
        )
        if isinstance(agent, OpenAIAgent):
            agent.client.token_ids = self.token_ids
        return agent

    def make_user(self, task: Task) -> User:
        """A new simulated user of `user` for `task`."""
        if self.user == "scripted":
            return ServerUser(task) if self.served_tasks else ScriptedUser(task)
        if self.served_tasks:
            raise ValueError("a model user needs what the task's user knows, which only the server has")
        client = ChatClient(
            model=self.user.split(":", 1)[1],
            base_url=self.user_base_url or self.base_url,
            api_key_env=self.user_api_key_env or self.api_key_env,
        )
        return LlmUser(task, client)
