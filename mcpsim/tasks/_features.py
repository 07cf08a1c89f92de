"""A task's difficulty, measured: features computed from the task and its gold solution (replayed
on the task's episode), and the tier they fall in.

Features:
- `gold_calls`: the gold solution's calls;
- `chain_depth`: the longest chain of gold calls in which an argument of one is a value only an
  earlier call's result shows (not the user's own words: instruction, scripted turns, `knows`,
  `wants`); 0 when every argument could be copied from what the user says. A value counts as
  shown by the first call whose result holds it; booleans, numbers under 10 and strings under
  three characters never count;
- `user_turns`: the user's messages the task scripts (the instruction and `user.turns`), and
  the answers of its dialogue (`_asking`: a detail given when asked, a request turned down);
- `confirmations`: requests for the go-ahead the gold solution makes (`confirmed` checks, and
  the requests its dialogue turns down);
- `rules`: the rubric checks on how the work is done, not what it leaves (`tool_not_called`,
  `call_order`, `confirmed`, `custom`), plus gold calls expected to fail (a fault recovered from);
- `tools_offered`: the world's tools;
- `pages`: gold calls that ask for a later page (an `offset`, `cursor` or `page` past the first).

The tier is the first of `TIERS` one of whose alternatives the features all reach (in one place,
here): hard is ten calls or more, a chain three deep, or six calls chained two deep over a second
user turn; medium is four calls, a chain two deep, a chain under a rule, a second turn or a later
page; anything less is easy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, computed_field

from mcpsim._nested import leaves
from mcpsim.engine import TemplateCache
from mcpsim.tasks._asking import proposals, reveals
from mcpsim.tasks._rubric import CallOrder, Confirmed, Custom, ToolNotCalled
from mcpsim.tasks._scenario import gold_steps, task_episode
from mcpsim.tasks._task import Say, Task
from mcpsim.world import World

__all__ = ["TIERS", "Tier", "TaskFeatures"]

Tier = Literal["easy", "medium", "hard"]
# Each tier but the last: alternatives of thresholds, any one of which (all its features at
# least the number given) puts a task in the tier. Tried in order; a task reaching none is easy.
TIERS: dict[Tier, list[dict[str, int]]] = {
    "hard": [{"gold_calls": 10}, {"chain_depth": 3}, {"gold_calls": 6, "chain_depth": 2, "user_turns": 2}],
    "medium": [{"gold_calls": 4}, {"chain_depth": 2}, {"chain_depth": 1, "rules": 1}, {"user_turns": 2}, {"pages": 1}],
}
_RULE_CHECKS = (ToolNotCalled, CallOrder, Confirmed, Custom)
_PAGE_ARGS = {"offset": 0, "cursor": None, "page": 1, "page_token": None}


class TaskFeatures(BaseModel):
    """What makes a task hard, measured from the task and its gold solution (module docstring)."""

    gold_calls: int
    chain_depth: int
    user_turns: int
    confirmations: int
    rules: int
    tools_offered: int
    pages: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tier(self) -> Tier:
        """The first tier of `TIERS` one of whose thresholds the features all reach, else easy."""
        values = self.model_dump(exclude={"tier"})
        for tier, alternatives in TIERS.items():
            if any(all(values[k] >= n for k, n in needs.items()) for needs in alternatives):
                return tier
        return "easy"

    @classmethod
    def of(cls, task: Task, world: World, templates: TemplateCache | None = None) -> TaskFeatures:
        """The features of `task` in `world`; the gold calls are replayed on a fresh episode of the
        task (a call that fails shows nothing)."""
        episode = task_episode(world, task, templates=templates)
        try:
            results = [episode.call(a.tool, a.args) for a in task.gold]
        finally:
            episode.close()
        shown = [set(_leaves(r.value)) if not r.is_error else set() for r in results]
        said = _said(task)
        depth: list[int] = []
        for number, action in enumerate(task.gold):
            sources = {
                next((i for i in range(number) if leaf in shown[i]), None)
                for leaf in _leaves(action.args)
                if leaf not in said
            }
            depth.append(max((depth[i] + 1 for i in sources if i is not None), default=0))
        return cls(
            gold_calls=len(task.gold),
            chain_depth=max(depth, default=0),
            user_turns=1 + len(task.user.turns) + len(reveals(task)) + len(proposals(task)),
            confirmations=sum(isinstance(s, Say) for s in gold_steps(task, world)) - len(reveals(task)),
            rules=sum(isinstance(c, _RULE_CHECKS) for c in task.rubric) + sum(a.expect == "error" for a in task.gold),
            tools_offered=len(world.tools),
            pages=sum(_later_page(a.args) for a in task.gold),
        )


def _leaves(value: Any) -> Iterator[str]:
    """The values inside `value` (a result or arguments) that could carry information from one
    call to another, as text."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    for leaf in leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, int | float) and abs(leaf) >= 10:
            yield f"{leaf:g}" if isinstance(leaf, float) else str(leaf)
        elif isinstance(leaf, str) and len(leaf) >= 3:
            yield leaf.lower()


def _said(task: Task) -> str:
    """Everything the user says or knows, lower case: a value in here is the user's, not a result's."""
    user = task.user
    return json.dumps([task.instruction, user.turns, user.knows, user.wants], default=str).lower()


def _later_page(args: dict[str, Any]) -> bool:
    return any(k in args and args[k] not in (first, None, "") for k, first in _PAGE_ARGS.items())
