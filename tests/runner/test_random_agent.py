"""The random agent draws its arguments from the world's own data (in `mcpsim check`, the
episode's rows; over MCP, what its own reads and the user's message showed): about half of its
calls succeed and some change state (negative data worth training on; before, 94% were errors),
and a knob sets the share of malformed ones. Worlds that verify identity first (bank, workspace)
refuse most random calls by design."""

from __future__ import annotations

import random

import pytest

from mcpsim.audit._random_agent import run_random_agent
from mcpsim.engine import TemplateCache
from mcpsim.runner._agents import RandomAgent, make_agent
from mcpsim.runner._random import Seen, sample_arguments
from mcpsim.tasks import load_tasks
from mcpsim.trajectories import Message
from mcpsim.world._registry import load_world


def outcomes(world_name: str, agent: RandomAgent, count: int = 12) -> tuple[int, int, int]:
    """Calls, errors and calls that changed something, over the first `count` tasks."""
    world, templates = load_world(world_name), TemplateCache()
    calls = errors = writes = 0
    for task in load_tasks(world_name).tasks[:count]:
        episode, conversation, _ = run_random_agent(world, task, templates, agent=agent)
        try:
            results = [m for m in conversation if m["role"] == "tool"]
            calls += len(results)
            errors += sum(m["content"].startswith("Error:") for m in results)
            writes += len(episode.changes())
        finally:
            episode.close()
    return calls, errors, writes


@pytest.mark.parametrize("world", ["retail", "airline"])
def test_most_calls_succeed_and_some_change_state(world):
    calls, errors, writes = outcomes(world, RandomAgent(steps=8))
    assert calls >= 80
    assert errors / calls < 0.6, (errors, calls)  # was 94% errors with schema-shaped noise
    assert writes > 0


def test_the_malformed_share_is_a_knob():
    tidy = outcomes("retail", RandomAgent(steps=8, malformed=0.0))
    noisy = outcomes("retail", RandomAgent(steps=8, malformed=1.0))
    assert tidy[1] / tidy[0] < noisy[1] / noisy[0]
    assert make_agent("random:0.25").malformed == 0.25  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="share of malformed calls"):
        make_agent("random:lots")
    with pytest.raises(ValueError, match="from 0 to 1"):
        RandomAgent(malformed=1.5)


def test_an_id_argument_is_drawn_from_the_ids_a_result_listed():
    seen = Seen.of([Message(role="tool", content='{"orders": [{"id": "#W0000001", "status": "pending"}]}')])
    schema = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    drawn = {sample_arguments(schema, random.Random(n), seen)["order_id"] for n in range(20)}
    assert "#W0000001" in drawn
