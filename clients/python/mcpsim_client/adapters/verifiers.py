"""mcpsim as a verifiers (v1, `pip install verifiers`) taskset and environment.

    vf-eval mcpsim-verifiers --env.taskset.server http://127.0.0.1:8000 \\
        --env.taskset.world retail --model MODEL --client.base-url http://127.0.0.1:8001/v1

The taskset lists the world's tasks from the server (`GET /worlds/{world}/tasks`): one
verifiers task per mcpsim task, the user's first message as its prompt and the world's policy
as its system prompt. `MCPSimEnv` runs each rollout in an mcpsim episode of its own: it
creates the episode over the control plane, hands the episode's MCP URL to the agent's
harness as an external tool server (so the model's tool calls act on that episode over MCP),
gives each answer of the agent's to the task's simulated user (the server's user route, as
verifiers' own user turns: a yes to a confirmation request, a detail asked for, the next
request) until the user has nothing more to say, takes the agent's last reply as the answer,
and records mcpsim's verdict as the reward (`mcpsim`: strict 1.0/0.0 by default, or the partial
reward) beside `mcpsim_partial`, `mcpsim_passed` and `mcpsim_truncated` metrics; then deletes the
episode. `trace.info["mcpsim"]` says why the rollout ended (`ending`: answered; step_limit when
verifiers' limits or `max_user_turns` cut it, also marked `max_turns` in verifiers' own
`stop_condition`; timeout or error, ungraded, with no `mcpsim` reward) and the verdict's parts
(`strict`, `partial`, `passed`, `failure`, each check's result in `checks`). The control-plane
token comes from the environment variable named by `token_var` (default MCPSIM_TOKEN), so it
never enters a trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.mcp import SharedToolServer

from mcpsim_client import AsyncClient, Client, EpisodeInfo, MCPSimError
from mcpsim_client.dialogue import ending_of
from mcpsim_client.models import Ending, choose_tasks, ending_info

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
    """Task ids; default: every task of the world (of `split`)."""
    split: Literal["train", "dev", "test"] | None = None
    reward: Literal["strict", "partial"] = "strict"
    max_user_turns: int = 10
    """Replies of the simulated user per rollout; past them the rollout is cut (step_limit)."""


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
            chosen = choose_tasks(config.world, client.tasks(config.world), config.tasks, config.split, dialogue=True)
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


TOOL_PREFIX = "mcpsim_"  # verifiers names an MCP server's tools after the server: `mcpsim_<tool>`


def _tool_name(name: Any) -> Any:
    """The world's name of a tool as verifiers offered it (mcpsim's checks match calls by name)."""
    return name[len(TOOL_PREFIX) :] if isinstance(name, str) and name.startswith(TOOL_PREFIX) else name


def _wire(message: Any) -> dict[str, Any]:
    """A verifiers message as an OpenAI-style dict (for mcpsim's checks on the dialogue), the
    tools by the world's names."""
    data = message.model_dump(mode="json", exclude_none=True) if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": data.get("role"), "content": data.get("content")}
    if isinstance(out["content"], list):  # content parts: keep the text
        out["content"] = "".join(p.get("text", "") for p in out["content"] if isinstance(p, dict))
    if data.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": _tool_name(c.get("name")), "arguments": c.get("arguments")}
                if "name" in c
                else {**(c.get("function") or {}), "name": _tool_name((c.get("function") or {}).get("name"))},
            }
            for c in data["tool_calls"]
        ]
    if data.get("tool_call_id"):
        out["tool_call_id"] = data["tool_call_id"]
    return out


class MCPSimEnv(vf.Env[MCPSimEnvConfig]):
    """Each rollout acts in its own mcpsim episode, talks with its simulated user, and is scored
    by mcpsim's verifier."""

    async def run(self, task: MCPSimTask, agents: Any) -> None:
        config: MCPSimTasksetConfig = self.taskset.config
        verdict = None
        async with AsyncClient(config.server, _token(config)) as client:
            async with client.episode(config.world, task=task.data.task_id) as episode:
                tools = {"mcpsim": SharedToolServer(url=episode.mcp_url, local=True, external=True)}
                async with agents.agent.interaction(task, tools=tools) as interaction:
                    try:
                        talk = await _converse(client, episode, interaction, task, config.max_user_turns)
                    except MCPSimError as exc:  # the server failed: ungraded, and said so
                        talk = _Talk([], ending=ending_of(exc) or "error", error=str(exc))
                trace = interaction.trace
                ending = _ending(trace, talk.ending)
                if ending in ("answered", "step_limit"):
                    try:
                        verdict = await client.verify(episode, answer=talk.answer, messages=talk.messages)
                    except MCPSimError as exc:
                        ending, talk.error = ending_of(exc) or "error", str(exc)
        trace.info["mcpsim"] = ending_info(ending, verdict, talk.error)
        trace.record_metric("mcpsim_truncated", float(ending == "step_limit"))
        if verdict is None:  # a timeout or an error: scoring did not run
            return
        trace.record_reward("mcpsim", verdict.score(config.reward))
        trace.record_metric("mcpsim_partial", verdict.partial_reward)
        trace.record_metric("mcpsim_passed", float(verdict.passed))


@dataclass
class _Talk:
    """A rollout's conversation as mcpsim grades it, its final answer, how the talk ended, and
    the server's error when a request failed."""

    messages: list[dict[str, Any]]
    answer: str | None = None
    ending: Ending = "answered"
    error: str | None = None


async def _converse(client: AsyncClient, episode: EpisodeInfo, interaction: Any, task: MCPSimTask, turns: int) -> _Talk:
    """The agent's turns, each answer given to the simulated user (the server's user route), whose
    reply is the next user turn of the interaction, until the user has nothing more to say
    (answered), verifiers ended the run (a limit or an error: `_ending` tells them apart), or
    the user replied `turns` times (step_limit). A cut rollout has no final answer."""
    talk = _Talk([{"role": "user", "content": task.data.prompt}])
    segment = await interaction.turn()
    replies = 0
    while not segment.terminated:
        talk.messages += map(_wire, segment.messages)
        talk.answer = segment.last_reply or None
        if interaction.trace.is_truncated:  # verifiers' max turns or tokens cut this segment
            break
        reply = await client.user_reply(episode, talk.messages)
        if reply is None:
            return talk
        if replies >= turns:
            interaction.trace.stop("max_turns")  # verifiers' own mark of a truncated trace
            break
        replies += 1
        talk.messages.append({"role": "user", "content": reply})
        segment = await interaction.turn(reply)
    talk.ending, talk.answer = "step_limit", None
    return talk


def _ending(trace: Any, talked: Ending) -> Ending:
    """Why the rollout ended: the server's failure (`talked`), verifiers' timeout or error, then
    its limits (max turns, tokens: `is_truncated`) or ours."""
    if talked in ("timeout", "error"):
        return talked
    if trace.is_timeout:
        return "timeout"
    if trace.errors:
        return "error"
    return "step_limit" if trace.is_truncated or talked == "step_limit" else "answered"


def load_environment(**taskset: Any) -> MCPSimEnv:
    """The environment in Python: `load_environment(server=..., world="retail", tasks=[...])`."""
    config = MCPSimEnvConfig(taskset=MCPSimTasksetConfig(id="mcpsim-verifiers", **taskset))
    return MCPSimEnv(config)
