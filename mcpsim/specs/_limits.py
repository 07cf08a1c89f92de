"""The bounds of a world spec. A spec is untrusted data (a model writes it for `gen --describe`, a
folder of them is served), so every spec is read by `mcpsim.specs._bounded` within these limits
before pydantic sees it, and refused past one with the limit's name, its value and the place in the
spec. Every shipped spec (examples, the catalogue's blueprints at any seed, the tests' own) stays
well within each: the largest has about 600 values, 10 levels, 8 fields an entity, 28 actions and
2,000 rows of an entity. Raising one is a code change here (docs/security.md lists them)."""

from __future__ import annotations

import math
import re
from typing import Any

MAX_SPEC_BYTES = 1_000_000  # a spec's text (a file, stdin, a model's answer)
MAX_NODES = 50_000  # values in the whole spec: every mapping, list, string, number
MAX_DEPTH = 40  # levels of nesting
MAX_STRING = 10_000  # characters of one string (keys included)
MAX_ENUM_VALUES = 500  # an enum's values, a choices generator's choices, a state machine's states
MAX_ENTITIES = 50
MAX_FIELDS = 200  # fields of one entity; also the inputs and filters of one action
MAX_ACTIONS = 500
MAX_RULES = 50  # preconditions and effects of one action, together
MAX_INVARIANTS = 200
MAX_POLICY_RULES = 100
MAX_TASKS = 1_000  # hand-written tasks in the spec
MAX_SCALES = 20
MAX_ROWS = 100_000  # rows of one entity at one scale
MAX_PATTERN = 200  # characters of a field's `pattern`

# Faker providers a `{faker: ...}` generator may call, each with the keyword arguments it may take
# and their bounds: (type, lowest, highest); for text, the bounds are its length. Anything else
# (`add_provider`, `seed_instance`, `binary`, private attributes) is refused when the spec is read.
MAX_FAKER_WORDS = 50
MAX_FAKER_CHARS = 2_000
_BIG = 10**12
_TEXT = (str, 1, 100)
FAKER_PROVIDERS: dict[str, dict[str, tuple[type, float, float]]] = {
    **dict.fromkeys(
        (
            "name first_name last_name prefix suffix user_name email company_email free_email safe_email "
            "phone_number company company_suffix catch_phrase bs job city country country_code state "
            "state_abbr street_address street_name building_number address postcode zipcode word color_name "
            "license_plate isbn10 isbn13 ean13 iban swift currency_code currency_name language_name "
            "domain_name url ipv4 uuid4 file_name random_digit random_letter"
        ).split(),
        {},
    ),
    "boolean": {"chance_of_getting_true": (int, 0, 100)},
    "sentence": {"nb_words": (int, 1, MAX_FAKER_WORDS), "variable_nb_words": (bool, 0, 1)},
    "sentences": {"nb": (int, 1, 20)},
    "paragraph": {"nb_sentences": (int, 1, 20), "variable_nb_sentences": (bool, 0, 1)},
    "paragraphs": {"nb": (int, 1, 10)},
    "text": {"max_nb_chars": (int, 5, MAX_FAKER_CHARS)},
    "words": {"nb": (int, 1, MAX_FAKER_WORDS), "unique": (bool, 0, 1)},
    "numerify": {"text": _TEXT},
    "lexify": {"text": _TEXT, "letters": _TEXT},
    "bothify": {"text": _TEXT, "letters": _TEXT},
    "hexify": {"text": _TEXT, "upper": (bool, 0, 1)},
    "pystr": {"min_chars": (int, 0, 200), "max_chars": (int, 1, 200), "prefix": (str, 0, 50), "suffix": (str, 0, 50)},
    "pyint": {"min_value": (int, -_BIG, _BIG), "max_value": (int, -_BIG, _BIG), "step": (int, 1, _BIG)},
    "pyfloat": {
        "left_digits": (int, 0, 12),
        "right_digits": (int, 0, 6),
        "positive": (bool, 0, 1),
        "min_value": (float, -_BIG, _BIG),
        "max_value": (float, -_BIG, _BIG),
    },
    "random_int": {"min": (int, -_BIG, _BIG), "max": (int, -_BIG, _BIG), "step": (int, 1, _BIG)},
    "random_number": {"digits": (int, 1, 12), "fix_len": (bool, 0, 1)},
}


# Faker providers that read the wall clock: a world seeded with them would move a day per day.
CLOCK_PROVIDERS = re.compile(
    r"^(date|time|past_|future_|iso8601|unix_time|year|month|day_of|century|am_pm|timezone|"
    r"date_of_birth|date_time|credit_card_expire)"
)


def faker_problem(provider: Any, args: Any) -> str | None:
    """What is wrong with a Faker generator (`provider` called with `args`), or None."""
    if isinstance(provider, str) and CLOCK_PROVIDERS.match(provider):
        return f"Faker provider {provider!r} reads the wall clock; use a date_range generator"
    allowed = FAKER_PROVIDERS.get(provider) if isinstance(provider, str) else None
    if allowed is None:
        return (
            f"{str(provider)[:60]!r} is not an allowed Faker provider (allowed: {', '.join(sorted(FAKER_PROVIDERS))})"
        )
    if not isinstance(args, dict):
        return f"the arguments of {provider} are a mapping of name to value"
    for name, value in args.items():
        bound = allowed.get(name) if isinstance(name, str) else None
        if bound is None:
            takes = ", ".join(sorted(allowed)) or "none"
            return f"{provider} takes no argument {str(name)[:60]!r} (it takes: {takes})"
        if (problem := _argument_problem(value, *bound)) is not None:
            return f"{provider}({name}=...): {problem}"
    return None


def _argument_problem(value: Any, kind: type, low: float, high: float) -> str | None:
    if kind is bool:
        return None if isinstance(value, bool) else f"{str(value)[:60]!r} is not true or false"
    if kind is str:
        if not isinstance(value, str):
            return f"{str(value)[:60]!r} is not text"
        return None if low <= len(value) <= high else f"{len(value)} characters, the limit is {low:g} to {high:g}"
    numbers = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, numbers) or not math.isfinite(value):
        return f"{str(value)[:60]!r} is not {'a whole number' if kind is int else 'a number'}"
    return None if low <= value <= high else f"{value:g} is outside the limit of {low:g} to {high:g}"
