"""Names a spec may not use, and text it may not show: the static checks that keep a hostile spec's
names from breaking the compiler (a field named `from` is no Python argument, `model_config` no
pydantic field, `limit` already an argument of every list tool, two entities on one table, a
table SQLite keeps for itself) and its words from misleading the agent (invisible or bidirectional
control characters in names it reads; two enum values or labels that look the same but differ).
SQL keywords (`select`, `order`, `group`) are fine: every identifier is quoted."""

from __future__ import annotations

import keyword
import unicodedata

from mcpsim.specs._spec import WorldSpec

LIST_ARGUMENTS = ("limit", "offset")  # what every list tool takes besides its filters
# Letters of other scripts drawn like Latin ones (Cyrillic, Greek), folded to the Latin letter.
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝᴠʏαεορτυνκιχ",
    "aeopcyxijsdhlqwvyaeoptuvkix",
)


def skeleton(text: str) -> str:
    """The text as read: compatibility forms, accents, case, invisible characters and lookalike
    letters folded, so two texts with one skeleton look the same."""
    folded = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in folded if unicodedata.category(c) not in ("Mn", "Cf", "Cc"))
    return kept.casefold().translate(_LOOKALIKES)


def hidden(text: str) -> str | None:
    """The first invisible or control character of a text shown as a name, or None."""
    return next((f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cf", "Cc", "Co", "Cn")), None)


def _shown_errors(where: str, texts: list[str]) -> list[str]:
    """Texts shown side by side as names: none hides characters, no two look alike."""
    errors = [f"{where}: {t!r} holds the invisible or control character {c}" for t in texts if (c := hidden(t))]
    seen: dict[str, str] = {}
    for text in texts:
        other = seen.setdefault(skeleton(text), text)
        if other != text:
            errors.append(f"{where}: {other!r} and {text!r} look alike but differ")
    return errors


def _field_name_errors(where: str, name: str) -> list[str]:
    if keyword.iskeyword(name):
        return [f"{where}: {name!r} is a Python keyword, which no tool argument can be named"]
    if name.startswith("model_"):
        return [f"{where}: names starting model_ are pydantic's own"]
    return []


def name_errors(spec: WorldSpec) -> list[str]:
    """Everything wrong with a spec's names and shown words (see the module's docstring)."""
    errors: list[str] = []
    tables: dict[str, str] = {}
    for entity, e in spec.entities.items():
        where = f"entity {entity}"
        table = spec.table_of(entity)
        if table.startswith("sqlite_"):
            errors.append(f"{where}: table {table!r}: SQLite keeps names starting sqlite_ for itself")
        if (other := tables.setdefault(table, entity)) != entity:
            errors.append(f"{where}: table {table!r} is entity {other}'s table too")
        for name, f in e.fields.items():
            errors += _field_name_errors(f"{where}.{name}", name)
            if f.values:
                errors += _shown_errors(f"{where}.{name}.values", list(f.values))
    labels = [spec.label_of(entity) for entity in spec.entities]
    errors += _shown_errors("entity labels", labels)
    errors += _shown_errors("title", [spec.title])
    for action in spec.actions:
        if action.kind == "list":
            clash = sorted(set(action.filters) & set(LIST_ARGUMENTS))
            errors += [f"action {action.name}: a filter cannot be named {n!r}, the tool's own argument" for n in clash]
        if f"{action.entity}_id" in action.inputs and action.kind != "create":
            errors.append(f"action {action.name}: input {action.entity}_id is the tool's own argument")
    return errors
