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
"""

from __future__ import annotations

import random
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mcpsim.seeding import derive_seed

FaultKind = Literal["transient", "rate_limit", "timeout", "partial", "stale", "paginate", "truncate"]
KINDS: tuple[str, ...] = ("transient", "rate_limit", "timeout", "partial", "stale", "paginate", "truncate")


class Rates(BaseModel):
    """Probabilities per attempt of each kind (they may not add up to more than 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
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
    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: str = Field("*", description="A tool-name pattern such as 'cancel_*'")
    rates: Rates = Rates()


class ScriptedFault(BaseModel):
    """Exactly this fault at the `call`-th attempt (1-based) of `tool`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tool: str
    call: int = Field(ge=1)
    fault: FaultKind


class FaultProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,40}$")
    rules: list[ToolRule] = []  # the first rule whose pattern matches a tool applies
    script: list[ScriptedFault] = []
    latency_s: tuple[float, float] = (0.0, 0.0)  # virtual seconds added per call, uniform in [lo, hi]
    real_delay: bool = False  # also really wait that long (HTTP/stdio serving only)
    retry_after_s: int = Field(5, ge=1)
    stale_window: int = Field(2, ge=1, description="reads after a write that may be stale")
    page_size: int = Field(2, ge=1)
    truncate_at: int = Field(80, ge=8)
    edge_data: bool = False

    @property
    def can_be_stale(self) -> bool:
        return any(r.rates.stale > 0 for r in self.rules) or any(f.fault == "stale" for f in self.script)

    def rates_for(self, tool: str) -> Rates:
        for rule in self.rules:
            if fnmatchcase(tool, rule.tools):
                return rule.rates
        return Rates()

    def decide(self, seed: int, tool: str, attempt: int, *, writes: bool, partial_ok: bool,
               has_limit: bool, after_write: bool) -> str | None:
        """The fault (or None) of the `attempt`-th call of `tool` (1-based). Kinds that cannot
        apply to this call (a partial failure of a tool without one, a stale write, paging a
        tool without `limit`) do not fire, scripted or drawn; the draw is the same either way,
        so rates stay per attempt."""
        applicable = {"partial": partial_ok, "stale": not writes and after_write, "paginate": has_limit}
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


BUILTIN: dict[str, FaultProfile] = {
    "none": FaultProfile(name="none"),
    "flaky": FaultProfile(
        name="flaky",
        rules=[ToolRule(tools="*", rates=Rates(transient=0.05, rate_limit=0.02, timeout=0.01, partial=0.03,
                                               stale=0.05, paginate=0.05))],
        latency_s=(0.05, 1.5),
    ),
    "hostile": FaultProfile(
        name="hostile",
        rules=[ToolRule(tools="*", rates=Rates(transient=0.12, rate_limit=0.08, timeout=0.04, partial=0.08,
                                               stale=0.15, paginate=0.15, truncate=0.05))],
        latency_s=(0.2, 8.0), edge_data=True,
    ),
}


class FaultProfileError(ValueError):
    pass


def load_profile(spec: str | dict[str, Any] | FaultProfile | None) -> FaultProfile | None:
    """A built-in name (none, flaky, hostile), a YAML file's path, a dict, or a profile."""
    if spec is None or isinstance(spec, FaultProfile):
        return spec
    if isinstance(spec, dict):
        return FaultProfile.model_validate(spec)
    if spec in BUILTIN:
        return BUILTIN[spec]
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") and path.exists():
        try:
            return FaultProfile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        except (yaml.YAMLError, ValueError) as exc:
            raise FaultProfileError(f"{path}: {exc}") from None
    raise FaultProfileError(f"unknown fault profile {spec!r}: use {', '.join(BUILTIN)} or a YAML file")
