"""The catalogue: domain blueprints (one YAML file each, beside this module) and the expander that
turns a blueprint and a seed into a distinct `WorldSpec` (docs/catalogue.md).

A blueprint is a world spec with knobs:
- `vocabulary`: a word of the blueprint (an entity, a noun in names and text) -> its alternatives
  (`guest: [guest, visitor, patron]`; `party/parties` for an irregular plural); one is drawn per
  world and every identifier and text is renamed (`get_guest` -> `get_visitor`, `{guest.name}`);
- `params`: a rule parameter -> its choices; `${name}` in any string is replaced (a string that
  is only `${name}` takes the value's own type);
- entities list their standard tools (`tools: [get, list, search, create, update, delete]`,
  `maybe: [...]` for the ones only some worlds have), written by the expander, `create:`/`update:`/`filters:` adjust
  them; an entity marked `optional: true` (nothing may refer to it) is left out of some worlds
  with every action that mentions it;
- domain actions are ordinary spec actions; `optional: true` keeps one in some worlds only, and a
  missing description is written from the kind;
- `scale`: the row counts of the `small` scale; a world multiplies them by a drawn factor, keeps
  `USERS_KEPT` of its users (so each holds more records), and `default` is `DEFAULT_FACTOR`
  times `small`.
Every draw comes from `Random(derive_seed(seed, blueprint))`, so a (blueprint, seed) pair always
expands to the same spec.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpsim._inflect import inflect
from mcpsim._yaml import load_trusted
from mcpsim.specs import NAME, SpecError, WorldSpec, parse_spec
from mcpsim.world import derive_seed

CATALOG_DIR = Path(__file__).parent / "blueprints"
MIN_TOOLS = 20
DEFAULT_FACTOR = 25
SCALE_FACTORS = (1.0, 1.25, 1.5)
# The users' entity (`WorldSpec.identity_entity`) keeps this share of the blueprint's rows, at
# least MIN_USERS: each user then holds more records, so a task's sweeps, picks and follow-up
# jobs cover several of them (longer, chained tasks) while other users remain for refusals and
# variety. Where that leaves every user at a cap (a tool that never succeeds, a rule never
# reached), the catalogue run validates the world again with all its users (`_run.build_world`).
USERS_KEPT = 0.65
MIN_USERS = 6
KEEP_OPTIONAL = 0.6  # the chance that an optional tool or entity is in a world
STANDARD_TOOLS = ("get", "list", "search", "create", "update", "delete")
_PARAM = re.compile(r"\$\{([a-z][a-z0-9_]*)\}")
_english = inflect.engine()


class BlueprintError(ValueError):
    """A blueprint that cannot expand, with the blueprint's name."""


class Blueprint(BaseModel):
    """A blueprint's knobs; `entities`, `invariants`, `actions` and `policy` stay raw spec data
    until expansion."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME)
    family: str = Field(description="the file the blueprint comes from: its base structure")
    domain: str = Field(min_length=3, description="one line: what the world is about")
    title: list[str] = Field(min_length=1, description="alternative titles")
    description: str = Field(min_length=3)
    vocabulary: dict[str, list[str]] = Field(default_factory=dict)
    params: dict[str, list[Any]] = Field(default_factory=dict)
    scale: dict[str, int] = Field(min_length=1)
    entities: dict[str, dict[str, Any]] = Field(min_length=1)
    invariants: list[dict[str, Any]] = Field(default_factory=list)
    actions: list[dict[str, Any]] = Field(default_factory=list)
    policy: list[dict[str, Any]] = Field(default_factory=list)
    calculator: bool | None = Field(default=None, description="None: drawn per world")

    def knobs(self) -> dict[str, Any]:
        """What varies between this blueprint's worlds (for docs and reports)."""
        standard = [f"{t}_{e}" for e, spec in self.entities.items() for t in spec.get("maybe", [])]
        domain = [a["name"] for a in self.actions if a.get("optional")]
        return {
            "vocabulary": {w: alts for w, alts in self.vocabulary.items() if len(alts) > 1},
            "params": self.params,
            "optional_entities": [e for e, spec in self.entities.items() if spec.get("optional")],
            "optional_tools": standard + domain,
        }


def _merged(base: Any, overlay: Any) -> Any:
    """`overlay` over `base`: mappings merge key by key, anything else is replaced."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        return {k: _merged(base[k], v) if k in base else v for k, v in overlay.items()} | {
            k: v for k, v in base.items() if k not in overlay
        }
    return copy.deepcopy(overlay)


@cache
def blueprints() -> dict[str, Blueprint]:
    """Every blueprint of the catalogue, by name. A file holds a family: a `base` (a blueprint
    written in the family's own words) and its `domains`, each merged over the base (mappings
    key by key, lists replaced) with its own vocabulary mapping the base's words to its own."""
    found: dict[str, Blueprint] = {}
    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        family = load_trusted(path.read_text(encoding="utf-8"))
        if not isinstance(family, dict) or set(family) != {"base", "domains"}:
            raise BlueprintError(f"{path.name}: a family file has exactly two keys, base and domains")
        for domain in family["domains"]:
            try:
                bp = Blueprint.model_validate(_merged(family["base"], domain) | {"family": path.stem})
            except ValueError as exc:
                raise BlueprintError(f"{path.name}, domain {domain.get('name')!r}: {exc}") from None
            if bp.name in found:
                raise BlueprintError(f"{path.name}: blueprint {bp.name!r} is declared twice")
            found[bp.name] = bp
    return found


# -- text -------------------------------------------------------------------------------------


def plural(word: str) -> str:
    """`policy` -> `policies`; a vocabulary entry may give its own plural (`party/parties`)."""
    if "/" in word:
        return word.split("/", 1)[1]
    return str(_english.plural_noun(word))


def singular(word: str) -> str:
    return word.split("/", 1)[0]


def _human(identifier: str) -> str:
    return identifier.replace("_", " ")


def _walk(value: Any, fn: Any) -> Any:
    """`fn` applied to every string of a JSON-like value, dictionary keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    if isinstance(value, dict):
        return {_walk(k, fn): _walk(v, fn) for k, v in value.items()}
    return value


def _substitute(value: Any, params: dict[str, Any]) -> Any:
    def param(name: str) -> Any:
        if name not in params:
            raise BlueprintError(f"unknown parameter ${{{name}}} (parameters: {', '.join(sorted(params)) or 'none'})")
        return params[name]

    def one(text: str) -> Any:
        whole = _PARAM.fullmatch(text)
        if whole:
            return param(whole.group(1))
        return _PARAM.sub(lambda m: str(param(m.group(1))), text)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return one(v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    return walk(value)


def _renamer(renames: dict[str, str]) -> Any:
    """A function renaming whole words (letters on neither side; `_` and `.` are boundaries),
    singular and plural, lower case and capitalised."""
    pairs: dict[str, str] = {}
    for old, new in renames.items():
        if singular(old) == singular(new):
            continue
        for o, n in ((singular(old), singular(new)), (plural(old), plural(new))):
            pairs[o] = n
            pairs[o.capitalize()] = n.capitalize()
    if not pairs:
        return lambda text: text
    words = "|".join(sorted(map(re.escape, pairs), key=len, reverse=True))
    pattern = re.compile(rf"(?:\b(?P<article>[Aa]n?) )?(?<![A-Za-z])(?P<word>{words})(?![a-z])")

    def one(m: re.Match[str]) -> str:
        new = pairs[m["word"]]
        if m["article"] is None:
            return new
        article = _english.a(new).split(" ", 1)[0]  # "a customer" -> "an owner", "an owner" -> "a user"
        return f"{article.capitalize() if m['article'][0] == 'A' else article} {new}"

    return lambda text: pattern.sub(one, text)


# -- standard tools ---------------------------------------------------------------------------


def _standard(entity: str, spec: dict[str, Any], kind: str) -> dict[str, Any]:
    label = _human(entity)
    many = plural(entity)
    fields: dict[str, dict[str, Any]] = spec["fields"]
    machine = spec.get("state_machine") or {}
    state = machine.get("field")
    if kind == "get":
        return {"name": f"get_{entity}", "kind": "get", "description": f"Look up {_english.a(label)} by id."}
    if kind == "list":
        filters = spec.get("filters")
        if filters is None:
            filters = [n for n, f in fields.items() if f["type"] in ("enum", "ref", "bool")]
        by = f", optionally by {', '.join(_human(f.removesuffix('_id')) for f in filters)}" if filters else ""
        text = f"List {_human(many)}{by}, a page at a time."
        return {"name": f"list_{many}", "kind": "list", "description": text, "filters": filters}
    if kind == "search":
        words = [_human(n) for n, f in fields.items() if f.get("searchable")]
        text = f"Find {_human(many)} by words in their {' or '.join(words)}."
        return {"name": f"search_{many}", "kind": "search", "description": text}
    if kind == "create":
        given = dict(spec.get("create") or {})
        inputs = given.get("inputs")
        sets = given.get("set", {})
        if inputs is None:
            inputs = [n for n in fields if n != state and n not in sets]
        text = given.get("description") or f"Add a new {label}."
        name = given.get("name") or f"create_{entity}"
        return {"name": name, "kind": "create", "description": text, "inputs": inputs, "set": sets}
    if kind == "update":
        inputs = spec.get("update") or [n for n, f in fields.items() if f["type"] == "str" and n != state][:2]
        text = f"Change {_english.a(label)}'s {' or '.join(_human(i) for i in inputs)}."
        return {"name": f"update_{entity}", "kind": "update", "description": text, "inputs": inputs}
    if kind == "delete":
        text = f"Delete {_english.a(label)} (refused while other records refer to it)."
        return {"name": f"delete_{entity}", "kind": "delete", "description": text}
    raise BlueprintError(f"entity {entity}: unknown standard tool {kind!r} (one of {', '.join(STANDARD_TOOLS)})")


def _default_description(action: dict[str, Any]) -> str:
    entity = _human(action["entity"])
    if action["kind"] == "transition":
        return f"Mark {_english.a(entity)} as {_human(str(action.get('to')))}."
    if action["kind"] == "transfer":
        return f"Move {_human(str(action.get('field')))} from one {entity} to another."
    return f"{_human(action['name']).capitalize()}."


# -- expansion --------------------------------------------------------------------------------


def _mentions(data: Any, word: str) -> bool:
    return re.search(rf"(?<![a-z_]){re.escape(word)}(?![a-z_])", json.dumps(data)) is not None


def expand(bp: Blueprint, seed: int, *, name: str | None = None, users_kept: float = USERS_KEPT) -> WorldSpec:
    """The world spec a blueprint gives for a seed (the same spec for the same pair); its users'
    entity keeps `users_kept` of its rows (at least `MIN_USERS`)."""
    rng = random.Random(derive_seed("catalog", bp.name, seed))
    params = {k: rng.choice(v) for k, v in sorted(bp.params.items())}
    params |= {f"{k}_dollars": f"{v / 100:.2f}" for k, v in list(params.items()) if type(v) is int}
    renames = {w: rng.choice(alts) for w, alts in sorted(bp.vocabulary.items())}
    entities = copy.deepcopy(bp.entities)
    dropped = {e for e, spec in sorted(entities.items()) if spec.get("optional") and rng.random() > KEEP_OPTIONAL}
    for e in dropped:
        del entities[e]
    mandatory: list[dict[str, Any]] = []
    optional: list[dict[str, Any]] = []
    for entity, spec in entities.items():
        for tool in spec.get("tools", []):
            mandatory.append({"entity": entity, **_standard(entity, spec, tool)})
        for tool in spec.get("maybe", []):
            optional.append({"entity": entity, **_standard(entity, spec, tool)})
    for raw in bp.actions:
        action = {k: v for k, v in raw.items() if k != "optional"}
        action.setdefault("description", _default_description(action))
        (optional if raw.get("optional") else mandatory).append(action)
    alive = [a for a in mandatory + optional if not any(_mentions(a, e) for e in dropped)]
    optional = [a for a in optional if a in alive]
    kept_optional = [a for a in optional if rng.random() <= KEEP_OPTIONAL]
    extra = int(rng.random() < 0.5) if bp.calculator is None else int(bp.calculator)
    for a in optional:  # top up to the minimum, in the blueprint's order
        if len([x for x in alive if x not in optional]) + len(kept_optional) + extra >= MIN_TOOLS:
            break
        if a not in kept_optional:
            kept_optional.append(a)
    actions = [a for a in alive if a not in optional or a in kept_optional]
    names = {a["name"] for a in actions}
    factor = rng.choice(SCALE_FACTORS)
    small = {e: max(2, round(n * factor)) for e, n in bp.scale.items() if e in entities}
    data: dict[str, Any] = {
        "name": name or bp.name,
        "title": rng.choice(bp.title),
        "description": bp.description,
        "scales": {"small": small, "default": {e: n * DEFAULT_FACTOR for e, n in small.items()}},
        "entities": {
            e: {k: v for k, v in spec.items() if k not in ("tools", "maybe", "create", "update", "filters", "optional")}
            for e, spec in entities.items()
        },
        "invariants": [
            i for i in bp.invariants if i["entity"] in entities and not any(_mentions(i, e) for e in dropped)
        ],
        "actions": actions,
        "policy": [
            r | {"actions": [a for a in r.get("actions", []) if a in names]}
            for r in bp.policy
            if r.get("kind") != "confirm" or any(a in names for a in r.get("actions", []))
        ],
        "calculator": bool(extra),
    }
    try:
        data = _substitute(data, params)
    except BlueprintError as exc:
        raise BlueprintError(f"blueprint {bp.name}: {exc}") from None
    rename = _renamer(renames)
    data = _walk(data, rename)
    data["name"] = name or bp.name  # never renamed
    for entity, spec in data["entities"].items():
        spec.setdefault("table", plural(entity))
    try:
        world = parse_spec(data, source=f"blueprint {bp.name} (seed {seed})")
        user, rows = world.identity_entity(), dict(data["scales"]["small"])  # names as renamed
        if user is None or user not in rows:
            return world
        rows[user] = max(MIN_USERS, round(rows[user] * users_kept))  # each user holds more records
        data["scales"] = {"small": rows, "default": {e: n * DEFAULT_FACTOR for e, n in rows.items()}}
        return parse_spec(data, source=f"blueprint {bp.name} (seed {seed})")
    except SpecError as exc:
        raise BlueprintError(str(exc)) from None


def catalogue_specs(count: int, seed: int) -> Iterator[tuple[int, str, int, WorldSpec | BlueprintError]]:
    """(index, blueprint, variant seed, spec or why it did not expand) for a run's worlds in
    order: the blueprints in turn, each world named `<blueprint>_<index>`."""
    names = sorted(blueprints())
    for index in range(count):
        bp = blueprints()[names[index % len(names)]]
        variant = derive_seed("catalog-run", seed, index)
        try:
            yield index, bp.name, variant, expand(bp, variant, name=f"{bp.name[:30]}_{index:05d}")
        except BlueprintError as exc:
            yield index, bp.name, variant, exc
