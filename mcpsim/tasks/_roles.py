"""Roles of a team task: several agents acting on one episode, each with its own instructions,
tool subset and part of the gold solution (issue 34).

A task without `roles` is a one-agent task, serialized exactly as before. A task with roles takes
its `gold` from the roles' gold, in the order the roles are listed (the first role acts first):
the gold replay, `gold_state` and every other check see one solution, the team's.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from mcpsim.tasks._strict import Strict

ROLE_NAME = r"^[a-z][a-z0-9_]{0,31}$"
MAX_ROLES = 8


class RoleAction(Strict):
    """One tool call of a role's gold solution (the fields of the task's gold actions)."""

    tool: str
    args: dict[str, Any] = {}
    expect: Literal["ok", "error"] = "ok"


class Role(Strict):
    """One agent of a team task: what it is told, which of the world's tools it may call (a call
    to any other is refused and recorded with its role), and its part of the gold solution."""

    instructions: str = Field(min_length=10, description="What this role's agent is told, beside the world's policy.")
    tools: list[str] = Field(min_length=1, description="The world's tools this role may call; others are refused.")
    gold: list[RoleAction] = Field([], description="This role's gold actions, in order.")


def _normal(action: Any) -> Any:
    if not isinstance(action, dict):
        return action
    return {"tool": action.get("tool"), "args": action.get("args", {}), "expect": action.get("expect", "ok")}


def with_team_gold(data: Any) -> Any:
    """A task's raw data with its `gold` taken from its roles' gold (a task with roles), before
    validation: the roles' actions in the order the roles are listed. A `gold` given as well must
    be that same list (a dumped task loads back), else ValueError."""
    roles = data.get("roles") if isinstance(data, dict) else None
    if not roles or not isinstance(roles, dict):
        return data
    derived = [a for r in roles.values() if isinstance(r, dict) for a in (r.get("gold") or [])]
    if "gold" in data and [_normal(a) for a in data["gold"] or []] != [_normal(a) for a in derived]:
        raise ValueError(
            "a task with roles takes its gold from each role's `gold`, in the order the roles are listed; "
            "leave the task's `gold` out"
        )
    return {**data, "gold": derived}


def role_errors(roles: dict[str, Role]) -> list[str]:
    """What is wrong with a task's roles, each problem worded to be fixed (empty: nothing)."""
    if not roles:
        return []
    problems = []
    if len(roles) < 2:
        problems.append(f"a task with roles names at least two (it names {', '.join(roles)}); leave `roles` out")
    if len(roles) > MAX_ROLES:
        problems.append(f"a task names at most {MAX_ROLES} roles, not {len(roles)}")
    for name, role in roles.items():
        if not re.match(ROLE_NAME, name):
            problems.append(f"role name {name!r} must match {ROLE_NAME} (lower case, digits, underscores)")
        doubled = sorted({t for t in role.tools if role.tools.count(t) > 1})
        if doubled:
            problems.append(f"role {name} lists {', '.join(doubled)} twice")
        for number, action in enumerate(role.gold, 1):
            if action.tool not in role.tools:
                problems.append(
                    f"role {name}'s gold action {number} calls {action.tool!r}, which is not among its tools "
                    f"({', '.join(role.tools)})"
                )
    if not any(role.gold for role in roles.values()):
        problems.append("no role has gold actions: give each role the calls it makes in the gold solution")
    return problems


def gold_roles(roles: dict[str, Role]) -> list[str]:
    """The role making each of the team's gold actions, in `team_gold`'s order."""
    return [name for name, role in roles.items() for _ in role.gold]
