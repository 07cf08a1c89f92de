"""Roles in the task model (issue 34): validation, the team's gold, and one-agent tasks unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from mcpsim import Episode, load_world
from mcpsim.audit import check_task
from mcpsim.tasks import Task, load_tasks

BASE: dict[str, Any] = {
    "id": "t1",
    "instruction": "Please refund my order.",
    "rubric": [{"type": "gold_state", "requirement": "The state is the gold one.", "noop_passes": False}],
    "difficulty": "easy",
    "split": "dev",
}
ROLES: dict[str, Any] = {
    "approver": {
        "instructions": "Approve the refund first.",
        "tools": ["get_order_details", "approve"],
        "gold": [{"tool": "approve"}],
    },
    "agent": {
        "instructions": "Issue the approved refund.",
        "tools": ["refund"],
        "gold": [{"tool": "refund", "args": {"x": 1}}],
    },
}


def test_a_task_without_roles_serializes_as_before():
    task = Task.model_validate({**BASE, "gold": []})
    assert "roles" not in task.model_dump() and '"roles"' not in task.model_dump_json()
    for task in load_tasks("retail").tasks:
        assert ("roles" in task.model_dump()) == bool(task.roles)


def test_a_team_tasks_gold_is_its_roles_gold_in_order_and_loads_back():
    task = Task.model_validate({**BASE, "roles": ROLES})
    assert [(a.tool, a.args) for a in task.gold] == [("approve", {}), ("refund", {"x": 1})]
    assert list(task.roles) == ["approver", "agent"]
    assert Task.model_validate(task.model_dump()) == task  # the dump carries the same gold: it loads back


@pytest.mark.parametrize(
    ("roles", "extra", "message"),
    [
        ({"approver": ROLES["approver"]}, {}, "names at least two (it names approver)"),
        (
            {**ROLES, "agent": {**ROLES["agent"], "gold": [{"tool": "approve"}]}},
            {},
            "role agent's gold action 1 calls 'approve', which is not among its tools (refund)",
        ),
        ({"Back office": ROLES["approver"], "agent": ROLES["agent"]}, {}, "role name 'Back office' must match"),
        ({**ROLES, "agent": {**ROLES["agent"], "tools": ["refund", "refund"]}}, {}, "role agent lists refund twice"),
        ({**ROLES, "agent": {**ROLES["agent"], "tools": []}}, {}, "roles.agent.tools"),
        ({k: {**r, "gold": []} for k, r in ROLES.items()}, {}, "no role has gold actions"),
        (ROLES, {"gold": [{"tool": "refund"}]}, "leave the task's `gold` out"),
        (
            {**ROLES, "agent": {**ROLES["agent"], "gold": [{"tool": "refund", "when": 1}]}},
            {},
            "roles.agent.gold.0.when",
        ),
    ],
)
def test_invalid_roles_are_refused_with_a_precise_reason(roles, extra, message):
    with pytest.raises(ValidationError) as caught:
        Task.model_validate({**BASE, "roles": roles, **extra})
    assert message in str(caught.value)


def test_a_role_labelled_call_is_kept_through_snapshot_and_fork(templates):
    world = load_world("retail")
    episode = Episode.create(world, 0, "default", templates=templates)
    episode.call("find_customer_by_email", {"email": "nobody@example.com"}, role="agent")
    episode.call("get_order_details", {"order_id": "#W6331386"})
    episode.refuse("issue_partial_refund", {}, "not this role's", role="approver")
    roles = episode.meta().roles
    seqs = [c.seq for c in episode.transcript()]
    assert roles == {seqs[0]: "agent", seqs[2]: "approver"}
    assert episode.fork().meta().roles == roles
    assert Episode.restore(world, episode.snapshot()).meta().roles == roles


def test_mcpsim_check_names_a_role_tool_the_world_does_not_have(retail):
    task = retail.tasks.get("team-damaged-lamp-refund")
    roles = dict(task.roles)
    roles["agent"] = roles["agent"].model_copy(update={"tools": [*roles["agent"].tools, "approve_refund"]})
    report = check_task(retail.world, retail, task.model_copy(update={"roles": roles}), retail.tasks.canaries)
    assert not report.ok and report.problems == ["roles name unknown tools ['approve_refund']"]
