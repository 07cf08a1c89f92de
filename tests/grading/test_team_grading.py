"""Grading a team task (issue 34): the team's verdict does not depend on how independent role calls
interleave, only on the order the task requires; per-role checks judge each role's own calls."""

from __future__ import annotations

import itertools

import pytest

from mcpsim.grading import Verifier
from mcpsim.tasks import task_episode

TASK = "team-damaged-lamp-refund"


def _interleavings(first: list, second: list) -> list[list]:
    """Every merge of two sequences that keeps each one's own order."""
    size = len(first) + len(second)
    merges = []
    for places in itertools.combinations(range(size), len(first)):
        a, b = iter(first), iter(second)
        merges.append([next(a) if i in places else next(b) for i in range(size)])
    return merges


def test_every_interleaving_of_the_roles_passes_exactly_when_the_approval_comes_first(retail: Verifier):
    task = retail.tasks.get(TASK)
    approver = [("approver", a) for a in task.roles["approver"].gold]
    agent = [("agent", a) for a in task.roles["agent"].gold]
    orders = _interleavings(approver, agent)
    assert len(orders) == 10
    outcomes = {}
    for order in orders:
        episode = task_episode(retail.world, task, templates=retail.templates)
        for role, action in order:
            assert not episode.call(action.tool, action.args, role=role).is_error
        verdict = retail.grade(episode, task, "Done.")
        tools = [a.tool for _, a in order]
        approved_first = tools.index("transfer_to_human_agent") < tools.index("issue_partial_refund")
        outcomes[tuple(tools)] = verdict.passed
        assert verdict.passed == approved_first, (tools, verdict.report())
        assert [c.passed for c in verdict.checks if c.type == "role_tools"] == [True, True]
    assert set(outcomes.values()) == {True, False}  # both outcomes are reached


@pytest.mark.parametrize("overstepping", ["approver", "agent"])
def test_a_role_that_calls_another_roles_tool_fails_its_own_check_only(retail: Verifier, overstepping: str):
    task = retail.tasks.get(TASK)
    episode = task_episode(retail.world, task, templates=retail.templates)
    for role in ("approver", "agent"):
        for action in task.roles[role].gold:
            # the labels as a role endpoint writes them: here the overstepping role makes every call
            episode.call(action.tool, action.args, role=overstepping)
    verdict = retail.grade(episode, task, "Done.")
    by_role = {c.requirement.split()[1]: c for c in verdict.checks if c.type == "role_tools"}
    assert by_role[overstepping].passed is False
    assert by_role["agent" if overstepping == "approver" else "approver"].passed is True
    assert not verdict.passed
