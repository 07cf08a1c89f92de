"""What each part of an action's tool (its parameters, refusals and body) is built over."""

from __future__ import annotations

from mcpsim.specs._spec import ActionSpec, Invariant, WorldSpec
from mcpsim.specs._tables import EntityModel


class ActionPart:
    """One part of one action's tool: the spec, its entities' models, the action, the model of the
    entity it acts on, and the invariants its writes keep."""

    def __init__(
        self,
        spec: WorldSpec,
        models: dict[str, EntityModel],
        action: ActionSpec,
        invariants: list[Invariant] | None = None,
    ) -> None:
        self.spec = spec
        self.models = models
        self.action = action
        self.model = models[action.entity]
        self.invariants = invariants if invariants is not None else []
