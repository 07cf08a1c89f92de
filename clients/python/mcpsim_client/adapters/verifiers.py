"""mcpsim as a verifiers (v1, `pip install verifiers`) taskset and environment.

    vf-eval mcpsim-verifiers --env.taskset.server http://127.0.0.1:8000 \\
        --env.taskset.world retail --model MODEL --client.base-url http://127.0.0.1:8001/v1

The taskset lists the world's tasks from the server (`GET /worlds/{world}/tasks`): one
verifiers task per mcpsim task, the user's first message as its prompt and the world's policy
as its system prompt. `MCPSimEnv` runs each rollout in an mcpsim episode of its own: it
creates the episode over the control plane, hands the episode's MCP URL to the agent's
harness as an external tool server (so the model's tool calls act on that episode over MCP),
takes the agent's final reply as the answer, and records mcpsim's verdict as the reward
(`mcpsim`: strict 1.0/0.0 by default, or the partial reward) beside `mcpsim_partial` and
`mcpsim_passed` metrics; then deletes the episode. The control-plane token comes from the
environment variable named by `token_var` (default MCPSIM_TOKEN), so it never enters a trace.

Limits: the simulated user says only the task's first message, so tasks whose rubric needs a
dialogue (a confirmation, more user turns) are left out unless listed in `tasks` (they would
fail their `confirmed` check); `mcpsim.env._environment` (in process) has the simulated user.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.mcp import SharedToolServer

from mcpsim_client import AsyncClient, Client
from mcpsim_client.models import choose_tasks

__all__ = ["MCPSimEnv", "MCPSimHarness", "MCPSimTaskset", "load_environment"]


class MCPSimHarness(NullHarness):
    """The default harness of this taskset: a chat loop whose only tools are the episode's (no
    bash, no file edits: an agent in a simulated world acts through its tools alone)."""


class MCPSimData(vf.TaskData):
    world: str
    task_id: str


class MCPSimTasksetConfig(vf.TasksetConfig):
    server: str = "http://127.0.0.1:8000"
    """The mcpsim server (`mcpsim serve --http`)."""
    token_var: str = "MCPSIM_TOKEN"
    """The environment variable holding the control-plane token ('' for a --no-auth server)."""
    world: str = "retail"
    tasks: list[str] | None = None
    """Task ids; default: every task of the world (of `split`) that needs no dialogue."""
    split: Literal["train", "dev", "test"] | None = None
    reward: Literal["strict", "partial"] = "strict"


class MCPSimTask(vf.Task[MCPSimData]):
    @property
    def key(self) -> str:
        return f"{self.data.world}/{self.data.task_id}"


def _token(config: MCPSimTasksetConfig) -> str | None:
    return os.environ.get(config.token_var) or None if config.token_var else None


class MCPSimTaskset(vf.Taskset[MCPSimTask, MCPSimTasksetConfig]):
    def load(self) -> Iterator[MCPSimTask]:
        config = self.config
        with Client(config.server, _token(config)) as client:
            chosen = choose_tasks(config.world, client.tasks(config.world), config.tasks, config.split)
            policy = ""
            if chosen:  # the policy is the world's, the same for every task: read once
                with client.episode(config.world, task=chosen[0].id) as probe:
                    policy = client.policy(probe)
        for t in chosen:
            data = MCPSimData(
                id=t.id, name=t.id, prompt=t.instruction, system_prompt=policy, world=config.world, task_id=t.id
            )
            yield MCPSimTask(data, config.task)


class MCPSimEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig()
    """The policy under evaluation or training."""


def _wire(message: Any) -> dict[str, Any]:
    """A verifiers message as an OpenAI-style dict (for mcpsim's checks on the dialogue)."""
    data = message.model_dump(mode="json", exclude_none=True) if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": data.get("role"), "content": data.get("content")}
    if isinstance(out["content"], list):  # content parts: keep the text
        out["content"] = "".join(p.get("text", "") for p in out["content"] if isinstance(p, dict))
    if data.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": c.get("arguments")}
                if "name" in c
                else c.get("function"),
            }
            for c in data["tool_calls"]
        ]
    if data.get("tool_call_id"):
        out["tool_call_id"] = data["tool_call_id"]
    return out


class MCPSimEnv(vf.Env[MCPSimEnvConfig]):
    """Each rollout acts in its own mcpsim episode and is scored by mcpsim's verifier."""

    async def run(self, task: MCPSimTask, agents: Any) -> None:
        config: MCPSimTasksetConfig = self.taskset.config
        async with AsyncClient(config.server, _token(config)) as client:
            async with client.episode(config.world, task=task.data.task_id) as episode:
                tools = {"mcpsim": SharedToolServer(url=episode.mcp_url, local=True, external=True)}
                async with agents.agent.interaction(task, tools=tools) as interaction:
                    segment = await interaction.turn()
                trace = interaction.trace
                messages = [{"role": "user", "content": task.data.prompt}, *map(_wire, segment.messages)]
                verdict = await client.verify(episode, answer=segment.last_reply, messages=messages)
        trace.record_reward("mcpsim", verdict.score(config.reward))
        trace.record_metric("mcpsim_partial", verdict.partial_reward)
        trace.record_metric("mcpsim_passed", float(verdict.passed))


def load_environment(**taskset: Any) -> MCPSimEnv:
    """The environment in Python: `load_environment(server=..., world="retail", tasks=[...])`."""
    config = MCPSimEnvConfig(taskset=MCPSimTasksetConfig(id="mcpsim-verifiers", **taskset))
    return MCPSimEnv(config)
