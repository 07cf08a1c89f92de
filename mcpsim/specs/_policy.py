"""The policy text of a compiled world, written from its policy rules and the named refusals of
its actions: what the agent is told."""

from __future__ import annotations

from mcpsim.specs._actions import CompiledAction
from mcpsim.specs._operands import PLACEHOLDER
from mcpsim.specs._spec import PolicyRule, WorldSpec


def _rule_text(rule: PolicyRule) -> str:
    if rule.kind == "identity":
        return (
            rule.text or "Before any change, confirm who you are helping: look their record up by an id they give you."
        )
    if rule.kind == "confirm":
        names = ", ".join(f"`{a}`" for a in rule.actions) or "any write"
        default = f"Before calling {names}, describe the change and wait for an explicit yes."
        return f"{default} {rule.text}" if rule.text else default
    return rule.text or ""


def _readable(template: str) -> str:
    """A refusal message with its placeholders shown as what they stand for: `{book.title}` -> ‹book title›."""
    return PLACEHOLDER.sub(lambda m: "‹" + m.group(1).replace(".", " ").replace("_", " ") + "›", template)


def policy_text(spec: WorldSpec, actions: list[CompiledAction]) -> str:
    lines = [f"# {spec.title}", "", spec.description.strip(), ""]
    rules = [_rule_text(r) for r in spec.policy]
    owned = [spec.label_of(n).lower() for n, e in spec.entities.items() if e.owner]
    if owned:  # the spec's ownership: acting on someone else's record is refused
        rules.append(
            f"Change only the records of the person you are helping ({', '.join(owned)}); refuse anyone else's."
        )
    if rules:
        lines += ["## Rules", "", *(f"- {r}" for r in rules), ""]
    refusals = [(a.spec.name, r) for a in actions for r in a.refusals if r.origin == "precondition"]
    if refusals:
        lines += ["## What the tools refuse", ""]
        lines += [f"- `{name}`: {_readable(r.template)}." for name, r in refusals]
        lines.append("")
    lines.append("Money is in dollars; dates and times are ISO 8601 text.")
    return "\n".join(lines) + "\n"
