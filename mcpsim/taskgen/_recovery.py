"""Recovery tasks (`recovery`): a write the fault profile cuts short with the partial failure
the spec declares; the agent checks the record instead of writing twice, and gives its id.
Writing again after the failure is the near miss."""

from __future__ import annotations

from collections.abc import Iterator

from mcpsim.engine import FaultProfile, ScriptedFault
from mcpsim.specs import id_arg
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import ask
from mcpsim.tasks import Action, IdFact

RECOVERY_TAILS = (
    " Please tell me the new {label}'s id once it is done.",
    " Give me the id of the new {label} when you are done.",
)


def recovery_plans(probe: WorldProbe) -> Iterator[Plan]:
    for action in probe.shuffled([a for a in probe.writes if a.partial_failure is not None]):
        get = probe.gets.get(action.entity)
        if action.kind != "create" or get is None:
            continue
        profile = FaultProfile(name="partial-once", script=[ScriptedFault(tool=action.name, call=1, fault="partial")])
        for args in probe.successes(action, probe.start, 3):
            episode = probe.start.fork(id="taskgen-recovery")
            try:
                episode.set_faults(profile)
                result = episode.call(action.name, args)
                new = [c.key.strip('"[]') for c in result.changes if c.op == "insert"]
            finally:
                episode.close()
            if result.fault is None or not new:
                continue
            check = Action(tool=get.name, args={id_arg(action.entity): new[0]})
            write = Action(tool=action.name, args=args, expect="error")
            tail = probe.rng.choice(RECOVERY_TAILS).format(label=probe.compiled.models[action.entity].label.lower())
            yield Plan(
                "recovery",
                [write, check],
                person=probe.person(action, args, probe.start),
                facts=[IdFact(id=new[0])],
                asks=[ask(probe, action, args)],
                tail=tail,
                faults=profile,
                near_miss=(
                    "writes again after the partial failure",
                    [write, Action(tool=action.name, args=args)],
                    None,
                ),
                tags=[action.name, "partial_failure"],
            )
            break
