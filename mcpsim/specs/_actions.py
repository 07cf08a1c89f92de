"""Each action of a spec as a typed tool: its arguments (with the fields' constraints), its output
view, its annotations and a body that reads its rows, checks its rules and writes."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from mcpsim.specs import _runtime as rt
from mcpsim.specs._action_bodies import ActionBody, Body
from mcpsim.specs._action_params import ActionParameters
from mcpsim.specs._action_refusals import ActionRefusals, implied_unique
from mcpsim.specs._lint import scope
from mcpsim.specs._spec import ActionSpec, WorldSpec
from mcpsim.specs._tables import EntityModel
from mcpsim.world import ToolContext, World


@dataclass(frozen=True)
class CompiledAction:
    spec: ActionSpec
    refusals: tuple[rt.Refusal, ...]  # every named way the tool can refuse, in the order it checks them


class ActionBuilder:
    """Builds one tool of a compiled world."""

    def __init__(self, spec: WorldSpec, models: dict[str, EntityModel], action: ActionSpec) -> None:
        self.spec = spec
        self.models = models
        self.action = action
        self.model = models[action.entity]
        self.invariants = [*spec.invariants, *implied_unique(spec)]

    def parameters(self) -> list[inspect.Parameter]:
        return ActionParameters(self.spec, self.models, self.action).parameters()

    # -- outputs and hints ------------------------------------------------------------------------

    def returns(self) -> Any:
        if self.action.kind in ("list", "search"):
            return self.model.page
        if self.action.kind == "transfer":
            return self.model.transfer
        return self.model.view

    def hints(self) -> dict[str, bool]:
        a = self.action
        destructive = a.destructive if a.destructive is not None else a.kind in ("delete", "update")
        return {
            "read_only": a.read_only,
            "idempotent": a.read_only
            or (a.kind == "update" and not a.effects and not {"now", "today"} & set(map(str, a.set.values()))),
            "destructive": destructive and not a.read_only,
            "partial_failures": a.partial_failure is not None,
            # a transfer moves value to another party: moving it back is a second event, not an undo;
            # so does any effect on a money field (a fee charged, a fine paid, a refund)
            "irreversible": a.irreversible or a.kind == "transfer" or self.moves_money(),
        }

    def moves_money(self) -> bool:
        """Whether one of the action's effects writes a money field of a row (a charge, a payment,
        a refund): money that reached or left someone, which a later call cannot take back."""
        rows = scope(self.spec, self.action, after_write=True)
        for effect in self.action.effects:
            entity = rows.get(effect.row)
            field = self.spec.entities[entity].fields.get(effect.field) if entity is not None else None
            if field is not None and field.type == "money":
                return True
        return False

    def refusals(self) -> list[rt.Refusal]:
        return ActionRefusals(self.spec, self.models, self.action, self.invariants).refusals()

    def body(self) -> Body:
        return ActionBody(self.spec, self.models, self.action, self.invariants).body()

    # -- the tool ---------------------------------------------------------------------------------

    def register(self, world: World) -> None:
        body = self.body()

        def tool(ctx: ToolContext, **arguments: Any) -> Any:
            return body(ctx, arguments)

        params = self.parameters()
        returns = self.returns()
        tool.__name__ = tool.__qualname__ = self.action.name
        tool.__doc__ = self.action.description
        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)
        tool.__signature__ = inspect.Signature([context, *params], return_annotation=returns)  # type: ignore[attr-defined]
        tool.__annotations__ = {"ctx": ToolContext} | {p.name: p.annotation for p in params} | {"return": returns}
        world.tool(name=self.action.name, title=self.action.title, **self.hints())(tool)
