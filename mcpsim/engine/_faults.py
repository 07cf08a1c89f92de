"""Fault profiles: seeded, recorded failures that make a world answer like a real back end.

A profile gives per-tool rates of fault kinds (and scripted faults at given attempts). Whether
the n-th attempt of a tool fails, and how, is drawn from `Random(derive_seed(episode seed,
profile, tool, n))`: the same seed, profile and call sequence give the same faults, and an
agent's extra reads never shift which write fails. Plain data: task files may carry profiles.

Kinds:
- `transient`: the call does not run ("service unavailable"); nothing changes; retrying works.
- `rate_limit`: the call does not run; the message carries a retry-after hint.
- `timeout`: the call runs and commits, but its answer is lost; the agent must check before
  retrying a write.
- `partial`: only for tools that declare `partial_failures=True`: the world commits a documented
  intermediate state (an order awaiting payment, a refund queued) and reports the failure.
- `stale`: a read within `stale_window` calls after a write answers from the state before it.
- `paginate`: a `limit` argument is capped at `page_size`, so the agent has to page.
- `truncate`: strings in the result longer than `truncate_at` are cut short.
Besides, `latency_s` adds virtual time to every call (and `real_delay` really waits), and
`edge_data` asks the world for edge-case data (unicode, very long strings, empty optional
fields) when the episode is created.

Every number is bounded (rates in [0, 1], delays and retry-after at most `MAX_DELAY_S`, windows,
page sizes and scripts small), so a profile cannot hold a call for days or a server's memory.
A profile from a request (`profile_from_request`) is a built-in name or written inline: files
are read only from directories the operator configured (`mcpsim serve --faults-dir`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mcpsim._yaml import load_trusted
from mcpsim.world import derive_seed

MAX_DELAY_S = 60.0  # the most virtual (or, with real_delay, real) seconds one call may take
MAX_RETRY_AFTER_S = 60
MAX_STALE_WINDOW = 20
MAX_PAGE_SIZE = 100
MAX_TRUNCATE_AT = 100_000
MAX_ATTEMPT = 100_000  # a scripted fault's attempt number
MAX_RULES = 100
MAX_SCRIPT = 1000

FaultKind = Literal["transient", "rate_limit", "timeout", "partial", "stale", "paginate", "truncate"]
KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


class FaultRecord(TypedDict):
    """What the injector did to one call, as the transcript (`CallRecord.fault`), the change log's
    `_faults` pseudo-rows, `CallResult.fault` and trajectories hold it: a JSON object, so it is a
    TypedDict (stored as it always was, compared with plain dicts)."""

    kind: FaultKind
    attempt: int  # the 1-based attempt of this tool the fault hit
    retry_after_s: NotRequired[int]  # rate_limit: the hint the error message gives
    limit: NotRequired[list[int]]  # paginate: [the limit asked for, the limit applied]


class Rates(BaseModel):
    """Probabilities per attempt of each kind (they may not add up to more than 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    transient: float = Field(0.0, ge=0, le=1)
    rate_limit: float = Field(0.0, ge=0, le=1)
    timeout: float = Field(0.0, ge=0, le=1)
    partial: float = Field(0.0, ge=0, le=1)
    stale: float = Field(0.0, ge=0, le=1)
    paginate: float = Field(0.0, ge=0, le=1)
    truncate: float = Field(0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _at_most_one(self) -> Rates:
        if sum(getattr(self, k) for k in KINDS) > 1 + 1e-9:
            raise ValueError("fault rates of one rule add up to more than 1")
        return self


class ToolRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    tools: str = Field("*", max_length=100, description="A tool-name pattern such as 'cancel_*'")
    rates: Rates = Rates()


class ScriptedFault(BaseModel):
    """Exactly this fault at the `call`-th attempt (1-based) of `tool`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    tool: str = Field(max_length=100)
    call: int = Field(ge=1, le=MAX_ATTEMPT)
    fault: FaultKind


class FaultProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,40}$")
    # the first rule whose pattern matches a tool applies
    rules: list[ToolRule] = Field([], max_length=MAX_RULES)
    script: list[ScriptedFault] = Field([], max_length=MAX_SCRIPT)
    # virtual seconds added per call, uniform in [lo, hi]
    latency_s: tuple[Annotated[float, Field(ge=0, le=MAX_DELAY_S)], Annotated[float, Field(ge=0, le=MAX_DELAY_S)]] = (
        0.0,
        0.0,
    )
    real_delay: bool = False  # also really wait that long (HTTP/stdio serving only)
    retry_after_s: int = Field(5, ge=1, le=MAX_RETRY_AFTER_S)
    stale_window: int = Field(2, ge=1, le=MAX_STALE_WINDOW, description="reads after a write that may be stale")
    page_size: int = Field(2, ge=1, le=MAX_PAGE_SIZE)
    truncate_at: int = Field(80, ge=8, le=MAX_TRUNCATE_AT)
    edge_data: bool = False

    @model_validator(mode="after")
    def _latency_ordered(self) -> FaultProfile:
        if self.latency_s[0] > self.latency_s[1]:
            raise ValueError(f"latency_s is [lo, hi] with lo <= hi, got {list(self.latency_s)}")
        return self

    @property
    def can_be_stale(self) -> bool:
        return any(r.rates.stale > 0 for r in self.rules) or any(f.fault == "stale" for f in self.script)

    def rates_for(self, tool: str) -> Rates:
        for rule in self.rules:
            if fnmatchcase(tool, rule.tools):
                return rule.rates
        return Rates()

    def decide(
        self, seed: int, tool: str, attempt: int, *, writes: bool, partial_ok: bool, has_limit: bool, after_write: bool
    ) -> FaultKind | None:
        """The fault (or None) of the `attempt`-th call of `tool` (1-based). Kinds that cannot
        apply to this call (a partial failure of a tool without one, a stale write, paging a
        tool without `limit`) do not fire, scripted or drawn; the draw is the same either way,
        so rates stay per attempt."""
        applicable: dict[FaultKind, bool] = {
            "partial": partial_ok,
            "stale": not writes and after_write,
            "paginate": has_limit,
        }
        for scripted in self.script:
            if scripted.tool == tool and scripted.call == attempt:
                return scripted.fault if applicable.get(scripted.fault, True) else None
        rates = self.rates_for(tool)
        u = random.Random(derive_seed(seed, "fault", self.name, tool, attempt)).random()
        edge = 0.0
        for kind in KINDS:
            edge += getattr(rates, kind)
            if u < edge:
                return kind if applicable.get(kind, True) else None
        return None

    def latency(self, seed: int, tool: str, attempt: int) -> float:
        lo, hi = self.latency_s
        if hi <= 0:
            return 0.0
        return round(random.Random(derive_seed(seed, "latency", self.name, tool, attempt)).uniform(lo, hi), 3)


# The built-in profiles' rates for every tool: "flaky" faults about one call in five; "hostile" two
# in three, slowly, and answers with edge-case data.
_FLAKY = Rates(transient=0.05, rate_limit=0.02, timeout=0.01, partial=0.03, stale=0.05, paginate=0.05)
_HOSTILE = Rates(transient=0.12, rate_limit=0.08, timeout=0.04, partial=0.08, stale=0.15, paginate=0.15, truncate=0.05)

BUILTIN: dict[str, FaultProfile] = {
    "none": FaultProfile(name="none"),
    "flaky": FaultProfile(
        name="flaky",
        rules=[ToolRule(tools="*", rates=_FLAKY)],
        latency_s=(0.05, 1.5),
    ),
    "hostile": FaultProfile(
        name="hostile",
        rules=[ToolRule(tools="*", rates=_HOSTILE)],
        latency_s=(0.2, 8.0),
        edge_data=True,
    ),
}


class FaultProfileError(ValueError):
    pass


def load_profile(spec: str | dict[str, Any] | FaultProfile | None) -> FaultProfile | None:
    """A built-in name (none, flaky, hostile), a YAML file's path, inline JSON (`{"name": ...}`), a
    dict, or a profile."""
    if spec is None or isinstance(spec, FaultProfile):
        return spec
    if isinstance(spec, dict):
        return FaultProfile.model_validate(spec)
    if spec.lstrip().startswith("{"):
        try:
            return FaultProfile.model_validate_json(spec)
        except ValueError as exc:
            raise FaultProfileError(f"inline fault profile: {exc}") from None
    if spec in BUILTIN:
        return BUILTIN[spec]
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") and path.exists():
        try:
            return FaultProfile.model_validate(load_trusted(path.read_text(encoding="utf-8")))
        except (yaml.YAMLError, ValueError) as exc:
            raise FaultProfileError(f"{path}: {exc}") from None
    raise FaultProfileError(f"unknown fault profile {spec!r}: use {', '.join(BUILTIN)}, a YAML file or inline JSON")


PROFILE_SUFFIXES = (".yaml", ".yml", ".json")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,40}$")


def _directory_profiles(dirs: Sequence[Path | str]) -> dict[str, Path]:
    """Profile files in the operator's directories by name (the first directory wins)."""
    found: dict[str, Path] = {}
    for folder in dirs:
        folder = Path(folder)
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix in PROFILE_SUFFIXES and _NAME.match(path.stem) and path.is_file():
                found.setdefault(path.stem, path)
    return found


def available_profiles(dirs: Sequence[Path | str] = ()) -> list[str]:
    """The names a request may use: the built-ins, then the operator's directories' profiles."""
    return [*BUILTIN, *sorted(set(_directory_profiles(dirs)) - set(BUILTIN))]


def profile_from_request(spec: str | dict[str, Any] | None, dirs: Sequence[Path | str] = ()) -> FaultProfile | None:
    """A profile named or written by a client (the control plane): a built-in name, the name of
    a profile in one of the operator's `dirs`, or an inline object. Never a path: a string that
    is none of the names is refused with the same message whether or not such a file exists,
    and nothing outside `dirs` is read."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        try:
            return FaultProfile.model_validate(spec)
        except ValueError as exc:
            raise FaultProfileError(f"invalid inline fault profile: {exc}") from None
    if not isinstance(spec, str):
        raise FaultProfileError("a fault profile is a name or an inline object")
    if spec in BUILTIN:
        return BUILTIN[spec]
    names = available_profiles(dirs)
    if dirs and _NAME.match(spec):
        path = _directory_profiles(dirs).get(spec)
        if path is not None:
            try:
                return FaultProfile.model_validate(load_trusted(path.read_text(encoding="utf-8")))
            except (OSError, yaml.YAMLError, ValueError) as exc:
                raise FaultProfileError(f"the server's fault profile {spec!r} is invalid: {exc}") from None
    raise FaultProfileError(
        f"unknown fault profile: use one of {', '.join(names)}, or write the profile inline as an object "
        "(a request never names a file)"
    )
