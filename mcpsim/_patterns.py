"""Regular expressions from untrusted data (a world spec's field `pattern`, a real server's input
schema in a twin), matched against agents' arguments in time linear in the text: by pydantic-core's
regex engine (Rust's `regex` crate: finite automata, no backtracking, a cap on a compiled pattern's
size), the engine pydantic already uses for `Field(pattern=...)`, so a pattern means the same
wherever it is checked and `(a+)+$` costs no more than `a+$`. That engine has no look-around and no
backreferences (the features that need backtracking): a pattern using them is refused with the
engine's reason by `pattern_problem`. A leaf module: the specs and twins packages both use it."""

from __future__ import annotations

from functools import lru_cache

from pydantic_core import SchemaError, SchemaValidator, core_schema


@lru_cache(maxsize=1024)
def _matcher(pattern: str) -> SchemaValidator:
    return SchemaValidator(core_schema.str_schema(pattern=pattern))


def pattern_problem(pattern: str) -> str | None:
    """Why the linear-time engine cannot use `pattern`, or None."""
    try:
        _matcher(pattern)
    except SchemaError as exc:
        said = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return said[-1].removeprefix("SchemaError: ").removeprefix("error: ") if said else "not a regular expression"
    return None


def searches(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text` (as `re.search` does), in linear time. A pattern
    the engine refuses raises ValueError with the reason."""
    if (problem := pattern_problem(pattern)) is not None:
        raise ValueError(f"pattern {pattern[:80]!r}: {problem}")
    return _matcher(pattern).isinstance_python(text)
