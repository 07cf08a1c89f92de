"""The seeded world a generator finds its plans on (`WorldProbe`): the start episode, the one
seeded `Random` every draw comes from, what the spec says about the user and the policy, and the
calls tried on forks of the start (thrown away) to see what they do."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from mcpsim.engine import CallResult, Episode, FaultProfile, TemplateCache
from mcpsim.specs import ActionSpec, Arguments, CompiledWorld, id_arg, scope
from mcpsim.tasks import Action
from mcpsim.world import derive_seed

TRIES_PER_ACTION = 60  # candidate calls tried per action while looking for plans


class WorldProbe:
    """One seeded world, and the calls tried on it."""

    def __init__(
        self, compiled: CompiledWorld, *, seed: int, scale: str, templates: TemplateCache | None = None
    ) -> None:
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.scale = scale
        self.rng = random.Random(derive_seed(seed, "taskgen", self.spec.digest()))
        self.arguments = Arguments(compiled, seed=seed, purpose="taskgen")
        # in memory, nothing shared with other processes; a validator hands its own (the same template)
        self.templates = templates or TemplateCache(None)
        self.start = Episode.create(self.world, seed, scale, templates=self.templates)
        self.identity = identity_entity(compiled)
        self.confirm = sorted({a for r in self.spec.policy if r.kind == "confirm" for a in r.actions})
        self.identity_rule = any(r.kind == "identity" for r in self.spec.policy)
        self.volatile = volatile_columns(compiled)
        self.writes = [a for a in self.spec.actions if not a.read_only]
        self.gets = {a.entity: a for a in self.spec.actions if a.kind == "get"}

    def close(self) -> None:
        self.start.close()

    # -- finding calls ----------------------------------------------------------------------------

    def outcomes(
        self, action: ActionSpec, episode: Episode, tries: int = TRIES_PER_ACTION
    ) -> Iterator[tuple[dict[str, Any], CallResult]]:
        """Calls of `action` on forks of `episode`, with their results, in a seeded order."""
        candidates = self.arguments.candidates(action, episode)
        self.rng.shuffle(candidates)
        for raw in candidates[:tries]:
            yield from self.try_call(action, episode, raw)

    def try_call(
        self, action: ActionSpec, episode: Episode, raw: dict[str, Any]
    ) -> Iterator[tuple[dict[str, Any], CallResult]]:
        """One call on a fork of `episode` (thrown away), unless it hit a simulator bug."""
        args = {k: v for k, v in self.arguments.resolved(action, raw, episode).items() if v is not None}
        fork = episode.fork(id="taskgen")
        try:
            result = fork.call(action.name, args)
        finally:
            fork.close()
        if not result.bug:
            yield args, result

    def successes(self, action: ActionSpec, episode: Episode, most: int = 4) -> list[dict[str, Any]]:
        """Up to `most` argument sets with which `action` succeeds and writes."""
        found: list[dict[str, Any]] = []
        for args, result in self.outcomes(action, episode):
            if not result.is_error and result.changes:
                found.append(args)
                if len(found) == most:
                    break
        return found

    def shuffled(self, items: list[Any]) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items

    # -- the gold solution ------------------------------------------------------------------------

    def has_writes(self, gold: list[Action]) -> bool:
        return any(self.world.tools[a.tool].writes for a in gold)

    def generated(self, gold: list[Action], faults: FaultProfile | None) -> set[str]:
        """The ids the gold solution's calls draw (a new rental's id): not the user's to know."""
        episode = self.start.fork(id="taskgen-gold")
        try:
            episode.set_faults(faults)
            for a in gold:
                episode.call(a.tool, a.args)
            return {str(k) for k in episode.net_changes().generated}
        finally:
            episode.close()

    # -- who the user is --------------------------------------------------------------------------

    def person(self, action: ActionSpec, args: dict[str, Any], episode: Episode) -> str | None:
        """The identity row a call acts for: named by an argument or by the row it writes."""
        ident = self.identity
        if ident is None:
            return None
        if action.entity == ident:
            return args.get(id_arg(ident)) or args.get(f"source_{ident}_id")
        if args.get(id_arg(ident)):
            return str(args[id_arg(ident)])
        key = args.get(id_arg(action.entity))
        for name, f in self.spec.entities[action.entity].fields.items():
            if f.type == "ref" and f.entity == ident and key is not None:
                rows = episode.query(f'SELECT "{name}" AS v FROM "{self.table(action.entity)}" WHERE id = ?', (key,))
                return str(rows[0]["v"]) if rows and rows[0]["v"] else None
        return None

    # -- rows -------------------------------------------------------------------------------------

    def table(self, entity: str) -> str:
        return self.compiled.models[entity].table.name

    def row(self, entity: str, key: Any) -> dict[str, Any] | None:
        rows = self.start.query(f'SELECT * FROM "{self.table(entity)}" WHERE id = ?', (key,))
        return rows[0] if rows else None

    def row_in(self, episode: Episode, entity: str, key: str) -> bool:
        return bool(episode.query(f'SELECT 1 FROM "{self.table(entity)}" WHERE id = ?', (key,)))


def identity_entity(compiled: CompiledWorld) -> str | None:
    """The entity the user is (`WorldSpec.identity_entity`)."""
    return compiled.spec.identity_entity()


def volatile_columns(compiled: CompiledWorld) -> list[str]:
    """`table.column` of every field an action sets from the clock (`now`): its value depends on
    how many calls came before."""
    spec = compiled.spec
    found: set[str] = set()
    for action in spec.actions:
        for name, raw in action.set.items():
            if raw == "now":
                found.add(f"{spec.table_of(action.entity)}.{name}")
        rows = scope(spec, action, after_write=True)
        for e in action.effects:
            if e.set == "now" and e.row in rows:
                found.add(f"{spec.table_of(rows[e.row])}.{e.field}")
    return sorted(found)
