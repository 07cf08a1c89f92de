"""Shared helpers: statistics, interleaving, machine details, resident memory, quiet logs."""

from __future__ import annotations

import gc
import importlib.metadata
import logging
import os
import platform
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the repository (for the git commit only)


def stats(seconds: Iterable[float]) -> dict[str, Any]:
    """Median, p90, p99 (nearest rank), mean, min and max of durations in seconds, as ms."""
    xs = sorted(seconds)
    n = len(xs)
    if n == 0:
        return {"n": 0}

    def rank(q: float) -> float:
        return xs[min(n - 1, max(0, round(q * n + 0.5) - 1))]

    mid = n // 2
    median = xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2
    return {
        "n": n,
        "median_ms": round(median * 1e3, 4),
        "p90_ms": round(rank(0.90) * 1e3, 4),
        "p99_ms": round(rank(0.99) * 1e3, 4),
        "mean_ms": round(sum(xs) / n * 1e3, 4),
        "min_ms": round(xs[0] * 1e3, 4),
        "max_ms": round(xs[-1] * 1e3, 4),
    }


def median(values: Iterable[float]) -> float:
    xs = sorted(values)
    if not xs:
        return float("nan")
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def rotations(names: list[str], rounds: int) -> list[list[str]]:
    """The variants' order for each round: rotated every round, so no variant always runs first
    (or always right after another), and drift in machine load spreads over all of them."""
    out = []
    for r in range(rounds):
        k = r % len(names) if names else 0
        order = names[k:] + names[:k]
        out.append(order if r % 2 == 0 else list(reversed(order)))
    return out


@dataclass
class Interleaved:
    """Latency samples of several variants measured side by side, round after round; also the
    per-round medians, so ratios can be taken round by round (paired) as well as overall."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    rounds: dict[str, list[float]] = field(default_factory=dict)

    def add_round(self, name: str, durations: list[float]) -> None:
        self.samples.setdefault(name, []).extend(durations)
        self.rounds.setdefault(name, []).append(median(durations))

    def summary(self, baseline: str | None = None) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        base = stats(self.samples[baseline]) if baseline and baseline in self.samples else None
        for name, xs in self.samples.items():
            s = stats(xs)
            if base is not None and baseline is not None:
                s["ratio_median"] = ratio(s["median_ms"], base["median_ms"])
                s["ratio_p99"] = ratio(s["p99_ms"], base["p99_ms"])
                paired = [a / b for a, b in zip(self.rounds[name], self.rounds[baseline], strict=False) if b > 0]
                s["ratio_paired"] = round(median(paired), 3) if paired else None
            out[name] = s
        return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _proc_line(path: str, prefix: str) -> str | None:
    """What follows `prefix` on the first line of a Linux /proc file that starts with it (None off
    Linux, or when no line does)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line.removeprefix(prefix)
    except OSError:
        pass
    return None


def rss_bytes() -> int:
    """This process's resident set size (Linux /proc, else psutil)."""
    kib = _proc_line("/proc/self/status", "VmRSS:")
    if kib is not None:
        return int(kib.split()[0]) * 1024
    import psutil  # optional: only off Linux

    return psutil.Process().memory_info().rss


def settle() -> None:
    gc.collect()
    gc.collect()


def quiet_logs() -> None:
    """mcpsim's logs at WARNING (template builds and episode creation log at INFO)."""
    try:
        from mcpsim import logs

        logs.configure("WARNING")
    except Exception:
        logging.basicConfig(level=logging.WARNING)
    logging.getLogger("uvicorn").setLevel(logging.WARNING)
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    model = _proc_line("/proc/cpuinfo", "model name")
    if model is not None:
        return model.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory_total() -> int | None:
    kib = _proc_line("/proc/meminfo", "MemTotal:")
    return int(kib.split()[0]) * 1024 if kib is not None else None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    import mcpsim

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    dirty = _git("status", "--porcelain")
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": affinity,
        "memory_total_bytes": _memory_total(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "versions": {
            d: _version(d)
            for d in (
                "mcp",
                "mcp-types",
                "mcpsim",
                "sqlalchemy",
                "sqlmodel",
                "pydantic",
                "pydantic-core",
                "anyio",
                "starlette",
                "uvicorn",
                "httpx",
                "httpx2",
                "jsonschema",
                "faker",
                "pyinstrument",
                "psutil",
            )
        },
        "mcpsim_path": str(Path(mcpsim.__file__).resolve().parent),
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty_files": len(dirty.splitlines()) if dirty else 0,
        "loadavg_start": loadavg(),
        "executable": sys.executable,
    }
