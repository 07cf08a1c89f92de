"""Tasks that need a second user turn (`ask`, `change`, `decline`): the user's first message
holds only part of what the gold solution needs, and the scripted user
(`mcpsim.tasks._asking`, under `user.knows["dialogue"]`) says the rest when asked, changes its
mind, or turns a change down. Each starts from a pick (`_composed`): the user's records of one
state, ranked by a field; the agent finds the user by name and lists the records.

- `ask`: "cancel one of my pending orders": which one (the one with the highest total) is a
  detail the user gives only when asked; the gold asks first, and acting on another record fails.
  The user's other jobs follow when they have some, as in an errand ("then close all my open
  tickets").
- `change`: "cancel my pending order with the highest total; check with me first": asked to
  confirm that one, the user changes its mind ("make it the one with the lowest total
  instead"); the gold asks again and acts on the other record; following the first detail fails.
- `decline`: the same request, but asked to confirm, the user says no: the gold writes nothing
  and reports the record left as it is; writing after the no fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpsim.taskgen._composed import Picked, another_record, people, pick_one
from mcpsim.taskgen._errands import ERRAND_TEMPLATES, errand_kinds, follow_ups, pick_job
from mcpsim.taskgen._paging import met
from mcpsim.taskgen._plan import Ask, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import act, records, runs, verb
from mcpsim.taskgen._wording import GREETING_SLOT
from mcpsim.tasks import DIALOGUE, Confirmed, IdFact, Say, Solution, confirmation_question

ASK_TEMPLATES = (
    "{greeting}, this is {name}. Could you {request}?",
    "{greeting}, {name} here. Please {request}.",
    "{greeting}. My name is {name}, and I need you to {request}.",
)
CHECK_TEMPLATES = (
    "{greeting}, this is {name}. Could you {request}? Please check with me before you change anything.",
    "{greeting}, {name} here. I'd like you to {request}, but ask me before you do it.",
    "{greeting}. My name is {name}. Please {request}; confirm with me first.",
)
CHANGED = "No, sorry, I've changed my mind: make it the one {other} instead."
DECLINED = "No, please leave it as it is. I've changed my mind."


def _confirmed(p: Picked, requirement: str) -> Confirmed:
    return Confirmed(type="confirmed", requirement=requirement, tools=[p.action.name], noop_passes=True)


def picks(probe: WorldProbe, busiest_first: bool = False) -> Iterator[Picked]:
    """One ranked pick per user and owned kind of record, whose change runs on the first; the
    users in a shuffled order (the pick kind takes them in order), so the kinds meet other people;
    `busiest_first`: those holding the most records first (the most jobs to follow up with)."""
    pairs = probe.shuffled(list(people(probe)))
    if busiest_first:
        kinds = errand_kinds(probe)
        held = {me.person: sum(len(records(probe, k, me.person)) for k in kinds) for _, me in pairs}
        pairs.sort(key=lambda pair: -held[pair[1].person])  # ties stay shuffled
    for kind, me in pairs:
        found = pick_one(probe, kind, me)
        if found is not None:
            yield found


def _knows(picked: Picked, **script: Any) -> dict[str, Any]:
    return {**picked.me.knows, DIALOGUE: script}


def ask_plans(probe: WorldProbe) -> Iterator[Plan]:
    """The asked pick first, then the user's other jobs (`_errands.follow_ups`) when they have
    some: "cancel one of my pending orders; then close all my open tickets"."""
    kinds = errand_kinds(probe)
    for p in picks(probe, busiest_first=True):
        lead = pick_job(probe, p)
        assert lead.asked is not None
        request, reveal = lead.asked
        jobs, gold = follow_ups(probe, p.me, lead, p.kind, kinds)
        rest = gold[len(p.me.actions) + len(lead.steps) :]
        miss = [*another_record(probe, p.reads, p.action, p.order[1:]), *rest]
        gold, miss, faults = met(probe, gold, miss)
        if len(jobs) == 1:
            question = probe.rng.choice(ASK_TEMPLATES).format(greeting=GREETING_SLOT, name=p.me.name, request=request)
        else:
            requests = [request, *(j.request for j in jobs[1:])]
            template = probe.rng.choice(ERRAND_TEMPLATES[len(jobs)])
            question = template.format(greeting=GREETING_SLOT, name=p.me.name, jobs=requests)
        yield Plan(
            "ask",
            gold,
            person=p.me.person,
            asks=[Ask(request, "")],
            question=question,
            faults=faults,
            near_miss=("acts on another record without asking", miss, None),
            tags=[p.action.name, "by_" + p.rank.field, *(j.tag for j in jobs[1:])],
            knows=_knows(p, reveal=reveal),
        )


def change_plans(probe: WorldProbe) -> Iterator[Plan]:
    for p in picks(probe):
        if p.low is None:
            continue
        first, then = act(probe, p.action, p.order[0]["id"]), act(probe, p.action, p.low[0]["id"])
        if not runs(probe, [*p.reads, then]):
            continue
        gold, miss, faults = met(probe, [*p.reads, then], [*p.reads, first])  # its listings paged
        request = verb(probe, p.action, p.thing(probe))
        said = CHANGED.format(other=p.rank.phrase(probe, not p.top))
        followed = [*miss[:-1], Say(say=confirmation_question([first])), first]
        yield Plan(
            "change",
            gold,
            person=p.me.person,
            asks=[Ask(request, "")],
            question=_check_first(probe, p, request),
            faults=faults,
            tags=[p.action.name, "by_" + p.rank.field],
            knows=_knows(p, propose=[first.model_dump(include={"tool", "args"})]),
            confirmations=[{"match": str(p.order[0]["id"]), "reply": said}],
            checks=[_confirmed(p, "Before the change, the agent described it and the user said yes.")],
            misses=[Solution(name="follows the first detail after the user changed it", steps=followed)],
        )


def decline_plans(probe: WorldProbe) -> Iterator[Plan]:
    for p in picks(probe):
        first = act(probe, p.action, p.order[0]["id"])
        request = verb(probe, p.action, p.thing(probe))
        asked = Say(say=confirmation_question([first]))
        gold, miss, faults = met(probe, list(p.reads), [*p.reads, first])  # its listings paged
        yield Plan(
            "decline",
            gold,
            person=p.me.person,
            faults=faults,
            facts=[IdFact(id=str(p.order[0]["id"]))],
            asks=[Ask(request, "")],
            question=_check_first(probe, p, request),
            tags=[p.action.name, "declined"],
            knows=_knows(p, propose=[first.model_dump(include={"tool", "args"})]),
            confirmations=[{"match": str(p.order[0]["id"]), "reply": DECLINED}],
            checks=[_confirmed(p, "No change was made after the user said no.")],
            misses=[Solution(name="writes after the user said no", steps=[*miss[:-1], asked, first])],
        )


def _check_first(probe: WorldProbe, p: Picked, request: str) -> str:
    return probe.rng.choice(CHECK_TEMPLATES).format(greeting=GREETING_SLOT, name=p.me.name, request=request)
