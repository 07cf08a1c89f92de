"""The random agent of the `random_agent` baseline, driven directly on a task episode."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio

from mcpsim.audit._row_sampler import RowSampler
from mcpsim.engine import Episode, TemplateCache
from mcpsim.runner import RandomAgent, Turn
from mcpsim.tasks import Task, result_text, task_episode
from mcpsim.trajectories import Message, ToolDef, Usage
from mcpsim.world import World, derive_seed

__all__ = ["RANDOM_AGENT_STEPS", "run_random_agent"]

RANDOM_AGENT_STEPS = 8
_DONE = "I am done."


def run_random_agent(
    world: World, task: Task, templates: TemplateCache, agent: RandomAgent | None = None
) -> tuple[Episode, list[dict[str, Any]], str]:
    """The random agent's calls (`agent`, default RANDOM_AGENT_STEPS of them), made directly on a
    fresh episode of `task` (seeded by the task id): the episode, the conversation and the
    agent's closing words (its answer)."""
    episode = task_episode(world, task, templates=templates)
    agent = agent or RandomAgent(steps=RANDOM_AGENT_STEPS)
    if agent.arguments is None:  # the audit's agent draws from the episode's own rows
        agent = replace(agent, arguments=lambda schema, rng: RowSampler(episode, rng).arguments(schema))
    tools = [
        ToolDef(function={"name": name, "description": spec.description, "parameters": spec.input_schema()})
        for name, spec in sorted(world.tools.items())
    ]
    messages = [Message(role="user", content=task.instruction)]
    answer = anyio.run(_drive_random_agent, agent, episode, tools, messages, derive_seed("random-agent", task.id))
    return episode, [m.model_dump(exclude_none=True) for m in messages], answer


async def _drive_random_agent(
    agent: RandomAgent, episode: Episode, tools: list[ToolDef], messages: list[Message], seed: int
) -> str:
    for step in range(agent.steps + 1):
        message = await agent.respond(Turn(messages=list(messages), tools=tools, step=step, seed=seed, usage=Usage()))
        if not message.tool_calls:
            return message.content or _DONE
        messages.append(message)
        for call in message.tool_calls:
            result = episode.call(call.function.name, json.loads(call.function.arguments))
            messages.append(
                Message(role="tool", tool_call_id=call.id, name=call.function.name, content=result_text(result))
            )
    return _DONE
