"""Every plan kind in one table: where its plans come from (a function of its module), how hard its
tasks are, what the user wants, how the instruction is worded and whether the gold changes records.
A new kind is a module with its plans function, a row here and its turns in `_generator.TURNS`."""

from __future__ import annotations

from mcpsim.taskgen._aggregates import tally_plans
from mcpsim.taskgen._composed import branch_plans, pick_plans
from mcpsim.taskgen._dialogues import ask_plans, change_plans, decline_plans
from mcpsim.taskgen._errands import errand_plans
from mcpsim.taskgen._lookups import lookup_plans
from mcpsim.taskgen._plan import Kind, PlanKind
from mcpsim.taskgen._recovery import recovery_plans
from mcpsim.taskgen._refusals import refusal_plans
from mcpsim.taskgen._reviews import review_plans
from mcpsim.taskgen._sweeps import sweep_plans, triage_plans
from mcpsim.taskgen._workflows import workflow_plans
from mcpsim.taskgen._writes import write_plans

PLAN_KINDS: tuple[PlanKind, ...] = (
    PlanKind(
        name="errand",
        plans=errand_plans,
        difficulty="hard",
        wants="Every job done, each on the records the request describes.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="review",
        plans=review_plans,
        difficulty="hard",
        wants="Each record of the set read, and the change made on exactly those the condition picks.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="pick",
        plans=pick_plans,
        difficulty="medium",
        wants="The change made on the record the request describes.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="sweep",
        plans=sweep_plans,
        difficulty="hard",
        wants="The change made on every record the request describes, and on no other.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="triage",
        plans=triage_plans,
        difficulty="hard",
        wants="Each record changed as the request's condition decides.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="tally",
        plans=tally_plans,
        difficulty="medium",
        wants="How many records there are and their total, and the change made on the one the request picks.",
        instruction="question",
        changes=True,
        read_first=True,
        reworded=True,
    ),
    PlanKind(
        name="branch",
        plans=branch_plans,
        difficulty="medium",
        wants="The change the record's state calls for, on the record the request describes.",
        instruction="question",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="write",
        plans=write_plans,
        difficulty="easy",
        wants="The change made as asked.",
        instruction="request",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="lookup",
        plans=lookup_plans,
        difficulty="easy",
        wants="The answer to the question.",
        instruction="question",
        changes=False,
        reworded=True,
    ),
    PlanKind(
        name="refusal",
        plans=refusal_plans,
        difficulty="medium",
        wants="The change if it is allowed, else the reason it is not.",
        instruction="question",
        changes=False,
        reworded=True,
    ),
    PlanKind(
        name="workflow",
        plans=workflow_plans,
        difficulty="hard",
        wants="Both changes made, in order.",
        instruction="two requests",
        changes=True,
        read_first=True,
    ),
    PlanKind(
        name="recovery",
        plans=recovery_plans,
        difficulty="hard",
        wants="The change made once, and the new record's id.",
        instruction="request",
        changes=True,
    ),
    PlanKind(
        name="ask",
        plans=ask_plans,
        difficulty="medium",
        wants="The change made on the record the user describes when asked which one.",
        instruction="question",
        changes=True,
    ),
    PlanKind(
        name="change",
        plans=change_plans,
        difficulty="hard",
        wants="The change made on the record the user names when asked to confirm, not the one first named.",
        instruction="question",
        changes=True,
    ),
    PlanKind(
        name="decline",
        plans=decline_plans,
        difficulty="medium",
        wants="Nothing changed: asked to confirm, the user says no; the agent says which record it left as it is.",
        instruction="question",
        changes=False,
    ),
)
KINDS: tuple[Kind, ...] = tuple(kind.name for kind in PLAN_KINDS)
