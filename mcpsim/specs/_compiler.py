"""Spec -> a real `World`, in memory: tables on a metadata of its own, typed tools, a seeded
seeder and the policy text. Nothing is written to disk; the world's revision is the spec's
digest, so its version changes with the spec (and with the modules that compile it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mcpsim.specs._actions import ActionBuilder, CompiledAction
from mcpsim.specs._policy import policy_text
from mcpsim.specs._seeder import Seeder
from mcpsim.specs._spec import WorldSpec, load_spec
from mcpsim.specs._tables import EntityModel, build_entities
from mcpsim.world import World, add_calculator

COMPILER_MODULES = (
    "_spec",
    "_lint",
    "_operands",
    "_tables",
    "_actions",
    "_action_params",
    "_action_refusals",
    "_action_bodies",
    "_runtime",
    "_seeder",
    "_policy",
    "_compiler",
)


class SpecWorld(World):
    """A world compiled from a spec. Its sources, in its version, are the modules that compile
    it (a change in them may change what an agent meets), not the whole factory folder."""

    def source_files(self) -> list[tuple[str, Path]]:
        root = Path(__file__).parent
        return [(f"specs/{name}.py", root / f"{name}.py") for name in COMPILER_MODULES]


@dataclass
class CompiledWorld:
    """A compiled world with what validation needs to know about it: each action's refusals."""

    spec: WorldSpec
    world: World
    models: dict[str, EntityModel]
    actions: dict[str, CompiledAction]


def compile_spec(spec: WorldSpec) -> CompiledWorld:
    metadata, models = build_entities(spec)
    builders = [ActionBuilder(spec, models, a) for a in spec.actions]
    refusals = {b.action.name: CompiledAction(b.action, tuple(b.refusals())) for b in builders}
    world = SpecWorld(
        spec.name,
        title=spec.title,
        description=spec.description,
        metadata=metadata,
        policy=policy_text(spec, list(refusals.values())),
        scales={scale: dict(counts) for scale, counts in spec.scales.items()},
        epoch=datetime.fromisoformat(spec.epoch),
        revision=f"spec-{spec.digest()}",
        id_formats={entity: (e.id.prefix, e.id.digits) for entity, e in spec.entities.items()},
    )
    for builder in builders:
        builder.register(world)
    if spec.calculator:
        add_calculator(world, example="3 * 2.50", purpose="totals and fees")
    world.seeder(Seeder(spec, models))
    return CompiledWorld(spec, world, models, refusals)


def compile_world(spec: WorldSpec) -> World:
    return compile_spec(spec).world


def load_world_spec(path: str | Path) -> World:
    """The world a spec file describes."""
    return compile_world(load_spec(path))
