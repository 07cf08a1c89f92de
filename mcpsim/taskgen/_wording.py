"""The words of a generated task: what the user asks for (`ask`), the instruction that says it
(`instruction`, from varied templates and greetings), the simulated user (`user`: a persona,
the ids they know, what they want), and the plural and singular of the nouns they use."""

from __future__ import annotations

import re
from typing import Any

from mcpsim.specs import ActionSpec, amount_field
from mcpsim.taskgen._plan import Ask, Plan, PlanKind
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.tasks import Action, UserSpec

PERSONAS = (
    "A regular who knows exactly what they want.",
    "A busy person writing between two meetings.",
    "A polite first-timer who is unsure of the process.",
    "Someone in a hurry who keeps messages short.",
    "A careful person who double-checks everything.",
    "A retired teacher who writes in full sentences.",
)
GREETINGS = ("Hi", "Hello", "Good morning", "Hey there", "Hi there")
# Slots a lookup's question keeps for the greeting and the speaker, filled by replacement, never by a
# second format(): braces in the data ("{x}") stay text.
GREETING_SLOT, ME_SLOT = "\x00greeting\x00", "\x00me\x00"
WRITE_TEMPLATES = (
    "{greeting}{me}. Could you {request}? The details: {details}.",
    "{greeting}{me}. I need you to {request} ({details}).",
    "{greeting}{me}. Please {request}: {details}. Thanks!",
    "{greeting}{me}. I'd like you to {request}. Here is what you need: {details}.",
)
WORKFLOW_TEMPLATES = (
    "{greeting}{me}. Two things, please. First, {first}. Then {second}.",
    "{greeting}{me}. Could you {first}, and after that {second}?",
    "{greeting}{me}. Please {first}; once that is done, {second}.",
)


def ask(probe: WorldProbe, action: ActionSpec, args: dict[str, Any], *, created: list[str] | None = None) -> Ask:
    """What the user asks for: the action's description as a request, and its arguments."""
    request = re.sub(r"\s*\([^)]*\)", "", re.split(r"\. |; ", action.description)[0]).rstrip(".")
    details = [_detail(probe, action, name, value, created or []) for name, value in args.items()]
    return Ask(request[0].lower() + request[1:], "; ".join(d for d in details if d))


def _detail(probe: WorldProbe, action: ActionSpec, name: str, value: Any, created: list[str]) -> str:
    if name in ("limit", "offset"):
        return ""
    entity = probe.arguments.entity_of(action, name)
    if entity is not None:
        label = probe.spec.label_of(entity).lower()
        if str(value) in created:
            return f"the {label} you just created"
        role = "from " if name.startswith("source_") else "to " if name.startswith("target_") else ""
        return f"{role}{label} {value}"
    moved = amount_field(action) if name == "amount" else None  # a transfer's amount: so much of a field
    f = probe.spec.entities[action.entity].fields.get(moved or name)
    if moved is not None and f is not None:
        return f"{_shown(f.type, value)} of {moved.replace('_', ' ')}"
    if f is not None and f.type == "money":
        return f"{name.replace('_', ' ')} ${float(value):,.2f}"
    return f"{name.replace('_', ' ')} {value}"


def instruction(probe: WorldProbe, plan: Plan, kind: PlanKind) -> str:
    """The user's first message: a greeting, who they are, and the plan's question or asks."""
    greeting = probe.rng.choice(GREETINGS)
    me = _me(probe, plan.person)
    if kind.instruction == "question":
        return plan.question.replace(GREETING_SLOT, greeting).replace(ME_SLOT, me)
    if kind.instruction == "two requests":
        first, second = plan.asks
        return probe.rng.choice(WORKFLOW_TEMPLATES).format(
            greeting=greeting, me=me, first=first.inline(), second=second.inline()
        )
    [asked] = plan.asks
    text = probe.rng.choice(WRITE_TEMPLATES).format(
        greeting=greeting, me=me, request=asked.request, details=asked.details
    )
    return text + plan.tail


def _me(probe: WorldProbe, person: str | None) -> str:
    if person is None or probe.identity is None:
        return ""
    row = probe.row(probe.identity, person)
    name = f"{row['name']}, " if row and isinstance(row.get("name"), str) else ""
    return f", this is {name}{probe.spec.label_of(probe.identity).lower()} {person}"


def user(probe: WorldProbe, plan: Plan, kind: PlanKind, gold: list[Action]) -> UserSpec:
    """The simulated user: a persona, the ids the gold solution uses that are not its own draws,
    and what the user wants."""
    generated = probe.generated(gold, plan.faults) if probe.has_writes(gold) else set()
    return UserSpec(
        persona=probe.rng.choice(PERSONAS),
        knows=dict(plan.knows)
        if plan.knows is not None
        else {
            k: v
            for a in gold
            for k, v in a.args.items()
            if k.endswith("_id") and k != "limit" and str(v) not in generated
        },
        wants=kind.wants,
        confirmations=plan.confirmations,
    )


def singular(word: str) -> str:
    word = word.replace("_", " ")
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _shown(kind: str, value: Any) -> str:
    """A value of a field type as a user writes it (money in dollars)."""
    return f"${float(value):,.2f}" if kind == "money" else str(value)
