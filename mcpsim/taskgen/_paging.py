"""Faults a composed plan meets (`mcpsim.engine`'s fault profiles), and the gold that gets past them.

- Paging that is really needed (`paged`): the profile caps every `limit` of the listing tools the
  plan uses at `PAGE` records (`paginate`), and the gold's listings are split into the pages an
  agent then has to ask for (the same `limit`, the next `offset` the result shows).
- A write that times out (`timed_out`): the plan's first write commits but its answer is lost
  (`timeout`); the gold expects the error, reads the record to see that the change was made, and
  goes on without writing again.

    paged(probe, actions) -> (actions, tools) | None     # None: no listing shows more than PAGE records
    timed_out(probe, actions) -> (actions, script) | None  # None: the write's record cannot be read
    profile(tools, script) -> FaultProfile
    met(probe, gold, miss) -> (gold, miss, profile | None)  # both, and the profile they meet
"""

from __future__ import annotations

from typing import Any

from mcpsim.engine import FaultProfile
from mcpsim.specs import id_arg
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.tasks import Action

PAGE = 2  # records a listing shows at a time under the profile
PROFILE_NAME = "errand-faults"


def _listers(probe: WorldProbe) -> set[str]:
    return {a.name for a in probe.spec.actions if a.kind == "list" and probe.world.tools[a.name].has_limit}


def paged(probe: WorldProbe, actions: list[Action]) -> tuple[list[Action], set[str]] | None:
    """`actions` with each listing that shows more than `PAGE` records replaced by its pages, and
    the tools whose limits the profile must cap; None if no listing shows more than `PAGE`."""
    listers = _listers(probe)
    episode = probe.start.fork(id="taskgen-paged")
    out: list[Action] = []
    capped: set[str] = set()
    try:
        for action in actions:
            result = episode.call(action.tool, action.args)
            shown = _shown(result.value) if action.tool in listers and not result.is_error else 0
            if shown <= PAGE:
                out.append(action)
                continue
            capped.add(action.tool)
            first = int(action.args.get("offset", 0))
            base = {k: v for k, v in action.args.items() if k != "offset"}
            for offset in range(first, first + shown, PAGE):
                out.append(Action(tool=action.tool, args={**base, **({"offset": offset} if offset else {})}))
    finally:
        episode.close()
    if not capped:
        return None
    return out, capped


def timed_out(probe: WorldProbe, actions: list[Action]) -> tuple[list[Action], dict[str, Any]] | None:
    """`actions` with their first write timing out: expected to fail, then the record read; and
    the scripted fault. None if the world cannot read the written record."""
    at = next((i for i, a in enumerate(actions) if probe.world.tools[a.tool].writes), None)
    if at is None:
        return None
    write = actions[at]
    entity = next(a.entity for a in probe.spec.actions if a.name == write.tool)
    get, key = probe.gets.get(entity), write.args.get(id_arg(entity))
    if get is None or key is None:
        return None
    attempt = 1 + sum(a.tool == write.tool for a in actions[:at])
    check = Action(tool=get.name, args={id_arg(entity): key})
    failed = Action(tool=write.tool, args=write.args, expect="error")
    return [*actions[:at], failed, check, *actions[at + 1 :]], {"tool": write.tool, "call": attempt, "fault": "timeout"}


def profile(tools: set[str], script: list[dict[str, Any]]) -> FaultProfile:
    """The profile that caps the `limit` of `tools` at `PAGE` on every call, and scripts `script`."""
    rules = [{"tools": name, "rates": {"paginate": 1.0}} for name in sorted(tools)]
    return FaultProfile.model_validate({"name": PROFILE_NAME, "rules": rules, "page_size": PAGE, "script": script})


def replays(probe: WorldProbe, actions: list[Action], faults: FaultProfile) -> bool:
    """Whether `actions` run under `faults` on a fork of the start fail exactly where they expect
    to, and every other write changes something."""
    episode = probe.start.fork(id="taskgen-faults")
    try:
        episode.set_faults(faults)
        for a in actions:
            result = episode.call(a.tool, a.args)
            if result.bug or result.is_error != (a.expect == "error"):
                return False
            if probe.world.tools[a.tool].writes and not result.is_error and not result.changes:
                return False
        return True
    finally:
        episode.close()


def paged_or_not(probe: WorldProbe, actions: list[Action]) -> list[Action]:
    """`actions` (a near miss's) with their listings paged like the gold's."""
    found = paged(probe, actions)
    return found[0] if found is not None else actions


def _shown(value: Any) -> int:
    dumped = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    items = dumped.get("items") if isinstance(dumped, dict) else None
    return len(items) if isinstance(items, list) else 0


def met(
    probe: WorldProbe, gold: list[Action], miss: list[Action]
) -> tuple[list[Action], list[Action], FaultProfile | None]:
    """The gold and a near miss past the faults a plan meets: the listings paged (when one shows
    more than `PAGE` records), and the first write timing out, recovered from by reading the
    record (when the world can read it). The near miss meets the same faults: its listings are
    paged, and its first write, if it is the gold's, times out too."""
    tools: set[str] = set()
    script: list[dict[str, Any]] = []
    if (found := paged(probe, gold)) is not None:
        gold, tools = found
        miss = paged_or_not(probe, miss)
    if (late := timed_out(probe, gold)) is not None and replays(probe, late[0], profile(tools, [late[1]])):
        cut = timed_out(probe, miss)
        if cut is not None and cut[1] == late[1] and _first_write(probe, miss) == _first_write(probe, gold):
            gold, miss, script = late[0], cut[0], [late[1]]
    if not tools and not script:
        return gold, miss, None
    return gold, miss, profile(tools, script)


def _first_write(probe: WorldProbe, actions: list[Action]) -> Action | None:
    return next((a for a in actions if probe.world.tools[a.tool].writes), None)
