"""Errand tasks (`errand`): two to four composed jobs for one user in one conversation: "First,
pay my pending order for the book with the lowest price. Then cancel all my reserved stays.
Finally, close all my open tickets." The first job names its target by a property: a pick
(`_composed`: the top record by a ranking) or a review (`_reviews`: each record of a set read,
some changed), or a sweep (`_sweeps`: every record of a set changed) after it. In half the errands
led by a pick, the user leaves out which record ("pay one of my pending orders") and says it only
when asked (`mcpsim.tasks._asking`): a second user turn. The user is found and verified once; jobs
are added until the gold reaches `LONG_ENOUGH` calls or `MOST_JOBS` jobs. Its listings show
`_paging.PAGE` records at a time and its first write times out (`_paging.met`): the agent pages,
checks the record the write was for, and goes on. Leaving the last job undone is the near miss.

The jobs after the first are sweeps, picks and reviews on other records of the user, the longest
first. They must not get in each other's way: two jobs on one kind of record never share a state
(neither acts on a record the other acts on, moves records into, or moves them from), and every
read of a job returns the same after the jobs before it as at the start, so each job decides on
what it would see if it were the only one. The writes of every job go under one request for the
go-ahead that names each of them (`mcpsim.grading`'s `confirmed` check)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from mcpsim.specs import ActionSpec
from mcpsim.taskgen._composed import Picked, pick_one
from mcpsim.taskgen._paging import met
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._reviews import review_one
from mcpsim.taskgen._sweeps import Group, groups_of
from mcpsim.taskgen._targets import Me, Owned, find_me, owned, owners, records, runs, transitions, verb, words
from mcpsim.taskgen._wording import GREETING_SLOT, plural
from mcpsim.tasks import DIALOGUE, Action

MOST_JOBS = 4
MOST_PEOPLE = 8  # users tried, those with the most records first
LONG_ENOUGH = 14  # gold calls at which an errand takes no further job
ASKED_SHARE = 0.5  # errands led by a pick whose record the user names only when asked
ERRAND_TEMPLATES = {
    2: (
        "{greeting}, this is {name}. I have two things for you. First, {jobs[0]}. Second, {jobs[1]}.",
        "{greeting}, {name} here. First, please {jobs[0]}. Once that is done, {jobs[1]}.",
        "{greeting}. My name is {name}, and I need two things. First, {jobs[0]}. Then {jobs[1]}.",
    ),
    3: (
        "{greeting}, this is {name}. I have a few things for you. First, {jobs[0]}. Then {jobs[1]}. "
        "Finally, {jobs[2]}.",
        "{greeting}, {name} here. Please {jobs[0]}. After that, {jobs[1]}. And then {jobs[2]}, please.",
        "{greeting}. My name is {name}, and I need three things done. First, {jobs[0]}. Second, "
        "{jobs[1]}. Third, {jobs[2]}.",
    ),
    4: (
        "{greeting}, this is {name}, with a list for you. First, {jobs[0]}. Then {jobs[1]}. After that, "
        "{jobs[2]}. And last, {jobs[3]}.",
        "{greeting}, {name} here. I need four things. First, {jobs[0]}. Second, {jobs[1]}. Third, "
        "{jobs[2]}. Fourth, {jobs[3]}.",
    ),
}


@dataclass(frozen=True)
class Job:
    """One job of an errand: its calls after the user is found, what the user asks, and the
    states of the records it acts on (`froms`) and leaves them in (`tos`)."""

    steps: tuple[Action, ...]
    request: str
    entity: str
    froms: frozenset[str]
    tos: frozenset[str]
    tag: str
    asked: tuple[str, dict[str, str]] | None = None  # a pick's request that leaves out which record, and the reveal

    def clashes(self, other: Job) -> bool:
        if self.entity != other.entity:
            return False
        return bool(self.froms & other.froms or self.tos & other.froms or other.tos & self.froms)


def _tos(action: ActionSpec) -> frozenset[str]:
    return frozenset({action.to}) if action.to else frozenset()


def _ranked(probe: WorldProbe, kind: Owned, me: Me) -> Job | None:
    """A job on `kind` that names its target by a property: a review or a pick (the seeded
    `Random` decides which is tried first)."""
    order = ("review", "pick") if probe.rng.random() < 0.5 else ("pick", "review")
    for name in order:
        if name == "review":
            r = review_one(probe, kind, me)
            if r is not None:
                return Job(r.steps, r.request(probe), kind.entity, frozenset({r.state}), _tos(r.action), r.action.name)
        else:
            p = pick_one(probe, kind, me)
            if p is not None:
                return pick_job(probe, p)
    return None


def pick_job(probe: WorldProbe, p: Picked) -> Job:
    """A pick as a job: its request names the record by its rank; asked, it leaves that out."""
    label = p.kind.label(probe)
    asked = (
        verb(probe, p.action, f"one of my {words(p.state)} {plural(label)}"),
        {label: f"The one {p.rank.phrase(probe, p.top)}."},
    )
    steps = (*p.gold(probe)[len(p.me.actions) :],)
    request = verb(probe, p.action, p.thing(probe))
    return Job(steps, request, p.kind.entity, frozenset({p.state}), _tos(p.action), p.action.name, asked)


def _sweep_job(probe: WorldProbe, group: Group, person: str) -> Job:
    return Job(
        tuple(group.actions(probe, person)),
        group.request(probe),
        group.kind.entity,
        frozenset({group.state}),
        _tos(group.action),
        group.action.name,
    )


def _reads(probe: WorldProbe, before: list[Action], steps: tuple[Action, ...]) -> list[str] | None:
    """What the reads of `steps` return when run after `before` on a fork of the start, as JSON
    text; None if a call fails."""
    episode = probe.start.fork(id="taskgen-errand")
    try:
        for a in before:
            episode.call(a.tool, a.args)
        shown: list[str] = []
        for a in steps:
            result = episode.call(a.tool, a.args)
            if result.is_error or result.bug:
                return None
            if not probe.world.tools[a.tool].writes:
                shown.append(json.dumps(call_value(result.value), sort_keys=True, default=str))
        return shown
    finally:
        episode.close()


def call_value(value: object) -> object:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def errand_plans(probe: WorldProbe) -> Iterator[Plan]:
    """One errand per user, the users with the most records first (the most jobs to give them),
    each led by a job on one kind of their records (the kinds in a seeded order)."""
    kinds = errand_kinds(probe)
    held: Counter[str] = Counter()
    for kind in kinds:
        held.update({p: len(records(probe, kind, p)) for p in owners(probe, kind)})
    for person, _ in sorted(held.items(), key=lambda p: (-p[1], p[0]))[:MOST_PEOPLE]:
        me = find_me(probe, person)
        if me is None:
            continue
        for kind in probe.shuffled([k for k in kinds if len(records(probe, k, person)) >= 2]):
            plan = _errand(probe, kind, me, kinds)
            if plan is not None:
                yield plan
                break


def errand_kinds(probe: WorldProbe) -> list[Owned]:
    """The kinds of owned records an errand's jobs act on: those with a state and a change of it."""
    return [k for k in owned(probe) if k.state is not None and transitions(probe, k.entity)]


def follow_ups(probe: WorldProbe, me: Me, lead: Job, kind: Owned, kinds: list[Owned]) -> tuple[list[Job], list[Action]]:
    """`lead` (on `kind`) and the jobs added after it (sweeps, and picks and reviews on `me`'s
    other kinds of records, the longest first, none in another's way) until the gold reaches
    `LONG_ENOUGH` calls or `MOST_JOBS` jobs; with the gold: `me` found, then each job's steps."""
    jobs = [lead]
    gold = [*me.actions, *lead.steps]
    more = [_sweep_job(probe, g, me.person) for g in groups_of(probe, me, kinds)]
    more += [j for k in kinds if k != kind and (j := _ranked(probe, k, me)) is not None]
    more = probe.shuffled(more)
    more.sort(key=lambda j: -len(j.steps))  # the longest jobs first (ties stay shuffled)
    for job in more:
        if any(job.clashes(j) for j in jobs):
            continue
        # the job sees what it would see first thing: the jobs before it change nothing it reads
        if _reads(probe, gold, job.steps) != _reads(probe, list(me.actions), job.steps) or not runs(
            probe, [*gold, *job.steps]
        ):
            continue
        jobs.append(job)
        gold += job.steps
        if len(gold) >= LONG_ENOUGH or len(jobs) == MOST_JOBS:
            break
    return jobs, gold


def _errand(probe: WorldProbe, kind: Owned, me: Me, kinds: list[Owned]) -> Plan | None:
    lead = _ranked(probe, kind, me)
    if lead is None:
        return None
    jobs, gold = follow_ups(probe, me, lead, kind, kinds)
    if len(jobs) < 2:
        return None
    template = probe.rng.choice(ERRAND_TEMPLATES[len(jobs)])
    miss = gold[: len(gold) - len(jobs[-1].steps)]
    gold, miss, faults = met(probe, gold, miss)
    requests = [j.request for j in jobs]
    knows = me.knows
    if lead.asked is not None and probe.rng.random() < ASKED_SHARE:
        # the user says which record only when asked (`mcpsim.tasks._asking`): a second user turn
        requests[0], reveal = lead.asked
        knows = {**me.knows, DIALOGUE: {"reveal": reveal}}
    return Plan(
        "errand",
        gold,
        person=me.person,
        question=template.format(greeting=GREETING_SLOT, name=me.name, jobs=requests),
        faults=faults,
        near_miss=("leaves the last job undone", miss, None),
        tags=[j.tag for j in jobs],
        knows=knows,
    )
