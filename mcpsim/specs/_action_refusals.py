"""The named ways an action's tool refuses, in the order it checks them: nothing to change, a
wrong owner, an invalid transition, the same row twice, a precondition, a row still referred to,
a broken invariant; and the messages the tool refuses with."""

from __future__ import annotations

from mcpsim.specs import _runtime as rt
from mcpsim.specs._action_part import ActionPart
from mcpsim.specs._lint import owner_fields
from mcpsim.specs._lint import scope as scope_of
from mcpsim.specs._spec import Invariant, WorldSpec
from mcpsim.specs._tables import EntityModel

NOTHING_TO_CHANGE = "Nothing to change: give at least one field to update"


def implied_unique(spec: WorldSpec) -> list[Invariant]:
    """Field-level `unique: true` as unique invariants."""
    return [
        Invariant(kind="unique", entity=entity, fields=[name])
        for entity, e in spec.entities.items()
        for name, f in e.fields.items()
        if f.unique
    ]


def transition_template(model: EntityModel, to: str | None) -> str:
    return f"{model.label} {{row.id}} is {{row.{model.state_field}}}; it cannot become {to}"


def referenced_template(model: EntityModel) -> str:
    return f"{model.label} {{row.id}} cannot be deleted while other records refer to it"


class ActionRefusals(ActionPart):
    """The refusals of one action's tool."""

    def refusals(self) -> list[rt.Refusal]:
        a, label = self.action, self.model.label
        found: list[rt.Refusal] = []
        if a.kind == "update":
            found.append(rt.Refusal("nothing_to_change", NOTHING_TO_CHANGE, "input"))
        for inv in self.invariants:
            if inv.kind == "ownership" and inv.entity == a.entity and inv.field in owner_fields(self.spec, a):
                found.append(rt.Refusal(inv.error_name, rt.invariant_template(inv, label), "invariant"))
        if a.kind == "transition":
            found.append(rt.Refusal("invalid_transition", transition_template(self.model, self.action.to), "state"))
        if a.kind == "transfer":
            found.append(rt.Refusal("same_row", f"The source and target {label.lower()} must differ", "input"))
        found += [rt.Refusal(p.name, p.message, "precondition") for p in a.preconditions]
        if a.kind == "delete" and self.model.referenced_by:
            found.append(rt.Refusal("still_referenced", referenced_template(self.model), "reference"))
        for inv in self.invariants:
            if inv.kind != "ownership" and self._may_break(inv):
                found.append(
                    rt.Refusal(inv.error_name, rt.invariant_template(inv, self.models[inv.entity].label), "invariant")
                )
        return found

    def _may_break(self, inv: Invariant) -> bool:
        """Whether this action writes a field an invariant reads."""
        a = self.action
        if a.read_only or a.kind == "delete":
            return False
        written: set[tuple[str, str]] = set()
        entity_fields = set(a.inputs) | set(a.set) | ({a.field} if a.field else set())
        written |= {(a.entity, f) for f in entity_fields}
        if a.kind == "create":
            written |= {(a.entity, f) for f in self.model.spec.fields}
        rows = scope_of(self.spec, a, after_write=True)
        written |= {(rows[e.row], e.field) for e in a.effects if e.row in rows}
        read = {inv.field, inv.limit_field, *(inv.fields or [])} - {None}
        return any((inv.entity, f) in written for f in read)
