"""The catalogue run behind `mcpsim gen --catalog`: worlds expanded from the blueprints
(`mcpsim.catalogue._blueprints`), validated in a bounded process pool, written only when accepted, and a
report (docs/catalogue.md).

The run's worlds are drawn in index order: world `i` is blueprint `i mod B` expanded with a
seed derived from (run seed, i), so a run is the same on any machine. A world whose tool schemas
(names and input schemas) equal an earlier world's is rejected as `distinct_tools` before it is
validated; a world failing any acceptance criterion is rejected and not written. The run stops when
`count` worlds are accepted (or after `max_attempts` draws); the accepted worlds are the first
`count` by index, whatever order the pool finishes them in.

Output (`out`):
    worlds/<name>.yaml     the accepted specs (`mcpsim serve --worlds-dir OUT/worlds`)
    tasks/<name>.yaml      their validated tasks (the task file the loader generates again)
    results.jsonl          one line per world drawn: accepted or the criteria that rejected it
    report.json            the totals (`CatalogueReport`)
A run started again on the same `out` with the same seed reuses `results.jsonl` (resumable).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import multiprocessing.util
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mcpsim import logs
from mcpsim.acceptance import CRITERIA, DeterminismChecker, ValidationReport, validate
from mcpsim.catalogue._blueprints import BlueprintError, blueprints, catalogue_specs, expand
from mcpsim.catalogue._diversity import backfill, diversity, record
from mcpsim.specs import CompiledWorld, WorldSpec, compile_spec, parse_spec
from mcpsim.taskgen import task_set
from mcpsim.world import World

DISTINCT = "distinct_tools"
REPORT_CRITERIA = (*CRITERIA, DISTINCT, "expansion")
VALIDATION_SEED = 0  # the seed the loader generates tasks at (`mcpsim.catalogue._loading`)
VALIDATION_SCALE = "small"
# What a world fails when its users all sit at a cap (each holds many records): validated again
# with all the blueprint's users (`USERS_KEPT` in `_blueprints`).
CROWDED = frozenset({"tool_succeeds", "precondition_violated"})


def tool_signature(world: World) -> str:
    """What two worlds must not share: the set of their tools' names and input schemas."""
    tools = sorted((name, json.dumps(t.input_schema(), sort_keys=True)) for name, t in world.tools.items())
    return hashlib.sha256(json.dumps(tools).encode()).hexdigest()[:20]


@dataclass
class WorldResult:
    """One world drawn by the run: accepted, or the criteria that rejected it."""

    index: int
    name: str
    blueprint: str
    variant: int
    accepted: bool
    signature: str = ""
    tools: int = 0
    tasks: int = 0
    task_lengths: list[int] = field(default_factory=list)  # gold actions per task
    rejected_by: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # the first failures, for people
    seconds: float = 0.0
    criteria_run: list[str] = field(default_factory=list)  # the acceptance criteria that ran on it
    # accepted: its tool shapes (digest -> count) and per task [id, structure, wording] (`_diversity`)
    structure: dict[str, int] = field(default_factory=dict)
    task_keys: list[list[str]] = field(default_factory=list)


@dataclass
class _Built:
    result: WorldResult
    spec_yaml: str = ""
    tasks_yaml: str = ""


def build_world(
    index: int, blueprint: str, variant: int, spec_data: dict[str, Any], task_count: int, processes: bool
) -> _Built:
    """Validate one world (in a pool worker); the texts to write if it is accepted."""
    started = time.perf_counter()
    spec = parse_spec(spec_data, source=spec_data["name"])
    compiled = compile_spec(spec)
    result = WorldResult(index, spec.name, blueprint, variant, False, tool_signature(compiled.world))
    result.tools = len(compiled.world.tools)
    try:
        checker = _worker_checker() if processes else None
        report = _validated(compiled, task_count, checker)
        if not report.ok and set(report.failed_criteria()) <= CROWDED and blueprint in blueprints():
            # users holding many records can all sit at a cap: the same world with all its users
            spec = expand(blueprints()[blueprint], variant, name=spec.name, users_kept=1.0)
            compiled = compile_spec(spec)
            result.signature, result.tools = tool_signature(compiled.world), len(compiled.world.tools)
            report = _validated(compiled, task_count, checker)
    except Exception as exc:  # a factory bug: counted against the world, never the end of the run
        result.rejected_by = ["no_simulator_bug"]
        result.reasons = [f"validation raised {type(exc).__name__}: {exc}"]
        result.seconds = time.perf_counter() - started
        return _Built(result)
    result.accepted = report.ok
    result.rejected_by = report.failed_criteria()
    result.reasons = [f"{criterion}: {found[0]}" for criterion, found in report.failures.items() if found][:5]
    result.tasks = len(report.tasks)
    result.task_lengths = [len(t.gold) for t in report.tasks]
    result.criteria_run = report.criteria_run
    result.seconds = time.perf_counter() - started
    if not report.ok:
        return _Built(result)
    record(result, compiled, report.tasks)
    files = task_set(compiled, report.tasks).files
    tasks = files[0].model_dump(mode="json", exclude_defaults=True) if files else {}
    return _Built(
        result,
        yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True), sort_keys=False, allow_unicode=True),
        yaml.safe_dump(tasks, sort_keys=False, allow_unicode=True),
    )


def _validated(compiled: CompiledWorld, task_count: int, checker: DeterminismChecker | None) -> ValidationReport:
    return validate(
        compiled, seed=VALIDATION_SEED, scale=VALIDATION_SCALE, processes=False, task_count=task_count, checker=checker
    )


@dataclass
class CatalogueReport:
    seed: int
    requested: int
    worlds: int = 0
    tools: int = 0
    tasks: int = 0
    drawn: int = 0
    rejected: int = 0
    rejections_per_criterion: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REPORT_CRITERIA, 0))
    task_lengths: dict[str, Any] = field(default_factory=dict)
    tools_per_world: dict[str, Any] = field(default_factory=dict)
    distinct_tool_sets: int = 0
    runs_per_criterion: dict[str, int] = field(default_factory=dict)  # per criterion, the accepted worlds it ran on
    blueprints: dict[str, int] = field(default_factory=dict)  # accepted worlds per blueprint
    diversity: dict[str, Any] = field(default_factory=dict)  # structural overlap, near-duplicate tasks
    workers: int = 0
    seconds: float = 0.0
    resumed: int = 0  # worlds taken from an earlier run's results.jsonl

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _spread(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"min": 0, "mean": 0, "max": 0, "histogram": {}}
    return {
        "min": min(values),
        "mean": round(statistics.fmean(values), 2),
        "max": max(values),
        "histogram": {str(k): v for k, v in sorted(Counter(values).items())},
    }


def summarise(results: list[WorldResult], *, seed: int, count: int) -> CatalogueReport:
    """The report over the results of a run (the accepted ones: the first `count` by index)."""
    report = CatalogueReport(seed=seed, requested=count)
    accepted = sorted((r for r in results if r.accepted), key=lambda r: r.index)[:count]
    last = accepted[-1].index if len(accepted) == count else max((r.index for r in results), default=-1)
    drawn = [r for r in results if r.index <= last]
    report.drawn = len(drawn)
    for r in drawn:
        if not r.accepted:
            report.rejected += 1
            for criterion in r.rejected_by:
                report.rejections_per_criterion[criterion] = report.rejections_per_criterion.get(criterion, 0) + 1
    report.worlds = len(accepted)
    report.tools = sum(r.tools for r in accepted)
    report.tasks = sum(r.tasks for r in accepted)
    report.task_lengths = _spread([n for r in accepted for n in r.task_lengths])
    report.tools_per_world = _spread([r.tools for r in accepted])
    report.distinct_tool_sets = len({r.signature for r in accepted})
    report.runs_per_criterion = {c: sum(c in r.criteria_run for r in accepted) for c in CRITERIA}
    report.blueprints = dict(sorted(Counter(r.blueprint for r in accepted).items()))
    report.diversity = diversity(accepted, seed)
    return report


ProgressFn = Callable[[WorldResult, int], None]  # (a world finished, worlds accepted so far)


def _read_results(path: Path, seed: int) -> dict[int, WorldResult]:
    if not path.exists():
        return {}
    found: dict[int, WorldResult] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a crash: that world is drawn again
        if data.pop("run_seed", None) == seed:
            found[data["index"]] = WorldResult(**data)
    return found


def run_catalogue(
    out: str | Path,
    count: int,
    seed: int,
    *,
    workers: int | None = None,
    task_count: int = 10,
    processes: bool = True,
    max_attempts: int | None = None,
    progress: ProgressFn | None = None,
) -> CatalogueReport:
    """Write `count` distinct validated worlds under `out` and return the report."""
    started = time.perf_counter()
    root = Path(out)
    for sub in ("worlds", "tasks"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    results_path = root / "results.jsonl"
    earlier = _read_results(results_path, seed)
    workers = workers or max(1, len(os.sched_getaffinity(0)))
    max_attempts = max_attempts or 3 * count + 20
    ledger = _Ledger(root, results_path, seed, progress)
    seen: dict[str, int] = {}  # tool signature -> the index of the world that has it

    specs = catalogue_specs(max_attempts, seed)
    pending: dict[Future[_Built], int] = {}
    # spawned, not forked: a worker starts from a fresh interpreter, never from this process's state
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=spawn, initializer=_quiet_worker) as pool:
        while True:
            while len(pending) < 2 * workers and ledger.accepted + len(pending) < count:
                drawn = next(specs, None)
                if drawn is None:
                    break
                index, blueprint, variant, spec = drawn
                if isinstance(spec, BlueprintError):
                    bad = WorldResult(index, f"{blueprint}_{index:05d}", blueprint, variant, False)
                    bad.rejected_by, bad.reasons = ["expansion"], [f"expansion: {spec}"]
                    ledger.record(bad, _Built(bad))
                    continue
                settled = _settled_unvalidated(index, blueprint, variant, spec, seen, earlier, root)
                if settled is not None:
                    ledger.record(*settled)
                    continue
                data = spec.model_dump(mode="json")
                pending[pool.submit(build_world, index, blueprint, variant, data, task_count, processes)] = index
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                del pending[future]
                built = future.result()
                ledger.record(built.result, built)
    results = ledger.results
    backfill(results.values(), root)  # worlds of a run from before results kept their structure
    report = summarise(list(results.values()), seed=seed, count=count)
    _remove_worlds_past_count(root, results, count)
    report.workers = workers
    report.resumed = sum(1 for i in results if i in earlier)
    report.seconds = round(time.perf_counter() - started, 1)
    (root / "report.json").write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return report


class _Ledger:
    """The run's results as they come in: an accepted world's files, then its line in
    `results.jsonl`, and the count of accepted worlds passed to `progress`."""

    def __init__(self, root: Path, results_path: Path, seed: int, progress: ProgressFn | None) -> None:
        self.root = root
        self.results_path = results_path
        self.seed = seed
        self.results: dict[int, WorldResult] = {}
        self.accepted = 0
        self.report_done = progress or (lambda _r, _n: None)

    def record(self, result: WorldResult, built: _Built | None) -> None:
        root = self.root
        self.results[result.index] = result
        if built is not None:  # the files first: a results line means its world is on disk
            if result.accepted:
                (root / "tasks" / f"{result.name}.yaml").write_text(built.tasks_yaml, encoding="utf-8")
                (root / "worlds" / f"{result.name}.yaml").write_text(built.spec_yaml, encoding="utf-8")
            with self.results_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(asdict(result) | {"run_seed": self.seed}) + "\n")
        self.accepted += result.accepted
        self.report_done(result, self.accepted)


def _settled_unvalidated(
    index: int,
    blueprint: str,
    variant: int,
    spec: WorldSpec,
    seen: dict[str, int],
    earlier: dict[int, WorldResult],
    root: Path,
) -> tuple[WorldResult, _Built | None] | None:
    """The result of a drawn world that needs no validation: rejected as having the same tool
    schemas as an earlier one (its signature otherwise added to `seen`), or taken from an
    earlier run's results (`_Built` None: nothing to write). None: it is to be validated."""
    signature = tool_signature(compile_spec(spec).world)
    if signature in seen:
        dup = WorldResult(index, spec.name, blueprint, variant, False, signature)
        dup.rejected_by = [DISTINCT]
        dup.reasons = [f"{DISTINCT}: the same tool schemas as world {seen[signature]}"]
        return dup, _Built(dup)
    seen[signature] = index
    known = earlier.get(index)
    if known is not None and (not known.accepted or (root / "worlds" / f"{known.name}.yaml").exists()):
        return known, None
    return None


def _remove_worlds_past_count(root: Path, results: dict[int, WorldResult], count: int) -> None:
    keep = {r.name for r in results.values() if r.accepted and r.index <= _last_index(results, count)}
    ours = {r.name for r in results.values()}  # files of other runs or of the user's own stay
    for sub in ("worlds", "tasks"):  # this run's worlds past the first `count` (finished out of order) go
        for name in ours - keep:
            (root / sub / f"{name}.yaml").unlink(missing_ok=True)


_checker: DeterminismChecker | None = None


def _worker_checker() -> DeterminismChecker:
    """This pool worker's process criterion: one fresh interpreter (another hash seed) for all the
    worlds it validates, started on first use; it ends when the worker does (its stdin closes)."""
    global _checker
    if _checker is None:
        _checker = DeterminismChecker()
        # closed (and waited for) when the worker exits, so its CPU time counts in the run's
        multiprocessing.util.Finalize(_checker, _checker.close, exitpriority=10)
    return _checker


def _quiet_worker() -> None:
    """A pool worker logs warnings only (a spawned process starts with no logging set up)."""
    logs.configure("WARNING")


def _last_index(results: dict[int, WorldResult], count: int) -> int:
    accepted = sorted(i for i, r in results.items() if r.accepted)
    return accepted[count - 1] if len(accepted) >= count else max(results, default=-1)


def blueprint_table() -> list[dict[str, Any]]:
    """The catalogue's blueprints with their knobs (for `mcpsim gen --catalog --list` and docs)."""
    return [{"name": bp.name, "family": bp.family, "domain": bp.domain, **bp.knobs()} for bp in blueprints().values()]
