"""inflect's engine (plural and singular nouns, articles), imported without typeguard's
instrumentation.

inflect decorates its engine's methods with typeguard's `@typechecked`, which, at import, reads
and re-parses inflect's whole source and recompiles it once per decorated method: about two and
a half CPU-seconds per process, for argument checks only (jaraco/inflect#212; typeguard's only
switch is `python -O`). Here `typeguard.typechecked` passes its target through unchanged while
inflect is imported, so inflect's own code runs as it is, minus the argument checks: every answer
is the same for the words we pass (non-empty strings; an empty one, which the checks refused
with a TypeCheckError, gets inflect's own answer). If inflect was already imported elsewhere in
the process, that module is used as it is. Callers import `inflect` from here.
"""

from __future__ import annotations

from typing import Any

import typeguard


def _unchecked(target: Any = None, **_options: Any) -> Any:
    """`typechecked` as a no-op: the target itself, or (called with options only) a decorator
    that returns its target."""
    if target is None:
        return _unchecked
    return target


_checked = typeguard.typechecked
typeguard.typechecked = _unchecked  # only while inflect is imported (a no-op if it already was)
try:
    import inflect
finally:
    typeguard.typechecked = _checked

__all__ = ["inflect"]
