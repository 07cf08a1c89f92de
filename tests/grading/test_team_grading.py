"""Grading a team task (issue 34): the team's verdict does not depend on how independent role calls
interleave, only on the order the task requires; per-role checks judge each role's own calls."""

from __future__ import annotations

import itertools
import math

import pytest

from mcpsim.grading import Verifier
from mcpsim.grading._diff import is_volatile
from mcpsim.tasks import load_task_file, load_tasks, task_episode
from mcpsim.tasks._loading import task_folder

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


def _volatile(world: str, task_id: str) -> list[str]:
    """The volatile patterns of the task file that holds the task (columns the world sets itself)."""
    for path in sorted(task_folder(world).glob("*.yaml")):
        task_file = load_task_file(path)
        if any(t.id == task_id for t in task_file.tasks):
            return [*task_file.volatile, *next(t for t in task_file.tasks if t.id == task_id).volatile]
    raise LookupError(task_id)


def _state(episode, volatile: list[str]) -> dict[str, list[dict]]:
    """The episode's rows without the columns the world sets itself (its clock's timestamps)."""
    return {
        table: [{k: v for k, v in row.items() if not is_volatile(table, k, volatile)} for row in rows]
        for table, rows in episode.tables().items()
    }


@pytest.mark.parametrize(
    ("world", "task_id", "first"),
    [
        # two desks, each authenticating the customer itself: nothing orders them
        ("retail", "team-independent-cancel-and-redirect", None),
        # after the front line verifies the caller, the profile desk and the card desk are independent
        ("bank", "team-independent-contact-and-card-limit", "front_line"),
    ],
)
def test_independent_roles_give_the_same_verdict_and_state_in_every_interleaving(
    request: pytest.FixtureRequest, world: str, task_id: str, first: str | None
):
    verifier: Verifier = request.getfixturevalue(world)
    task = verifier.tasks.get(task_id)
    lead = [(first, a) for a in task.roles[first].gold] if first else []
    one, two = ([(name, a) for a in role.gold] for name, role in task.roles.items() if name != first)
    orders = _interleavings(one, two)
    assert len(orders) == math.comb(len(one) + len(two), len(one)) > 1
    volatile = _volatile(world, task_id)
    outcomes, states = set(), []
    for order in orders:
        episode = task_episode(verifier.world, task, templates=verifier.templates)
        for role, action in lead + order:
            assert not episode.call(action.tool, action.args, role=role).is_error, (role, action.tool)
        verdict = verifier.grade(episode, task, "Done.")
        assert verdict.passed, ([a.tool for _, a in order], verdict.report())
        outcomes.add(tuple((c.type, c.requirement, c.passed) for c in verdict.checks))
        states.append(_state(episode, volatile))
    assert len(outcomes) == 1  # every check has the same outcome in every interleaving
    assert all(state == states[0] for state in states)  # and the state is the same, timestamps aside


def _team_tasks() -> list[tuple[str, str]]:
    return [(world, t.id) for world in ("retail", "bank") for t in load_tasks(world).tasks if t.roles]


def test_there_are_at_least_twenty_team_tasks_across_two_worlds():
    tasks = _team_tasks()
    assert len(tasks) >= 20 and {world for world, _ in tasks} == {"retail", "bank"}


@pytest.mark.parametrize(("world", "task_id"), _team_tasks())
def test_each_team_task_passes_role_by_role_and_fails_when_any_role_does_nothing(
    request: pytest.FixtureRequest, world: str, task_id: str
):
    verifier: Verifier = request.getfixturevalue(world)
    task = verifier.tasks.get(task_id)
    for idle in [None, *task.roles]:
        episode = task_episode(verifier.world, task, templates=verifier.templates)
        for role, spec in task.roles.items():
            if role != idle:
                for action in spec.gold:
                    episode.call(action.tool, action.args, role=role)  # refused calls are part of the test
        verdict = verifier.grade(episode, task, "Done.")
        assert verdict.passed == (idle is None), (idle, verdict.report())
        assert all(c.passed for c in verdict.checks if c.type == "role_tools")  # nobody overstepped


@pytest.mark.parametrize(("world", "task_id"), _team_tasks())
def test_in_each_team_task_a_role_doing_anothers_job_fails_its_role_check(
    request: pytest.FixtureRequest, world: str, task_id: str
):
    verifier: Verifier = request.getfixturevalue(world)
    task = verifier.tasks.get(task_id)
    for overstepping in task.roles:
        episode = task_episode(verifier.world, task, templates=verifier.templates)
        for spec in task.roles.values():
            for action in spec.gold:
                episode.call(action.tool, action.args, role=overstepping)
        verdict = verifier.grade(episode, task, "Done.")
        by_role = {c.requirement.split()[1]: c.passed for c in verdict.checks if c.type == "role_tools"}
        # its gold alone stays within its tools, the team's gold does not: only its own check fails
        assert any(a.tool not in task.roles[overstepping].tools for a in task.gold)
        assert {r for r, passed in by_role.items() if not passed} == {overstepping}, by_role
        assert not verdict.passed


def test_each_check_names_the_roles_its_calls_came_from(retail: Verifier):
    """Per-check attribution: a check of a table's rows names the roles that changed its rows, a
    check of calls the roles that made them, the answer check none; a one-agent task's checks
    carry no roles at all (their JSON is as before)."""
    task = retail.tasks.get(TASK)
    episode = task_episode(retail.world, task, templates=retail.templates)
    for role in ("approver", "agent"):
        for action in task.roles[role].gold:
            assert not episode.call(action.tool, action.args, role=role).is_error
    verdict = retail.grade(episode, task, "Done.")
    assert verdict.passed, verdict.report()
    roles = {(c.type, c.requirement): c.roles for c in verdict.checks}
    by_type: dict[str, set] = {}
    for (kind, _), named in roles.items():
        assert named is not None and set(named) <= {"approver", "agent"}
        by_type.setdefault(kind, set()).add(tuple(named))
    # the approval before the refund: both roles; the customer's authentication before it: the agent
    assert by_type["call_order"] == {("approver", "agent"), ("agent",)}
    assert by_type["gold_state"] == by_type["allowed_changes"] == {("approver", "agent")}
    rubric = {c.requirement: c for c in task.rubric}
    for check in verdict.checks:
        spec = rubric.get(check.requirement)
        if spec is not None and getattr(spec, "table", None) == "tickets":
            assert check.roles == ["approver"], check
        if spec is not None and getattr(spec, "table", None) == "payments":
            assert check.roles == ["agent"], check
        if check.type in ("answer_facts", "report"):
            assert check.roles == []
    assert [c.roles for c in verdict.checks if c.type == "role_tools"] == [["approver"], ["agent"]]
    alone = retail.tasks.get("cancel-pending-order")
    single = retail.grade(task_episode(retail.world, alone, templates=retail.templates), alone, "Done.")
    assert all(c.roles is None for c in single.checks)
    assert all("roles" not in c for c in single.model_dump(mode="json")["checks"])
