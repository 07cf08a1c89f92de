"""The same world's tasks in every process: this one (after other work), a forked child and fresh
interpreters with other hash seeds build the same template and the same tasks; the process check
of validation (`deterministic_template`) compares the template and every candidate task drawn, in
one long-lived process (`DeterminismChecker`) or fresh ones, and rejects a world that differs."""

from __future__ import annotations

import importlib
import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mcpsim.acceptance._validate import DeterminismChecker, process_hashes, tasks_digest, validate
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec, parse_spec
from mcpsim.taskgen._generator import TaskGenerator, candidates_digest
from tests.conftest import CLEAN_ENV

validate_module = importlib.import_module("mcpsim.acceptance._validate")  # the package exports a function of that name
SPECS = Path(__file__).parents[2] / "examples" / "specs"
BIKES = SPECS / "bikes.yaml"
COUNT = 3  # tasks, each audited: a few seconds a process


def built_here(path: str) -> str:
    """The template hash, the tasks' digest and the candidates' digest this process builds."""
    compiled = compile_spec(load_spec(path))
    generator = TaskGenerator(compiled, seed=0, scale="small")
    try:
        tasks = generator.generate(COUNT)
        return f"{generator.start.state_hash()} {tasks_digest(tasks)} {generator.drawn} {generator.digest}"
    finally:
        generator.close()


FRESH = "import sys; from tests.acceptance.test_factory_determinism import built_here; print(built_here(sys.argv[1]))"


def built_fresh(hash_seed: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", FRESH, str(BIKES)],
        env=CLEAN_ENV | {"PYTHONHASHSEED": hash_seed},
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
def test_a_forked_child_and_fresh_processes_with_other_hash_seeds_build_the_same_tasks():
    # this process has done other work first (another world's tasks), as a pool worker has
    compile_spec(load_spec(SPECS / "library.yaml"))
    validate(compile_spec(load_spec(SPECS / "library.yaml")), processes=False, task_count=1)
    here = built_here(str(BIKES))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        forked = pool.apply(built_here, (str(BIKES),))
    fresh = [built_fresh(seed) for seed in ("1", "4242")]
    assert forked == here
    assert fresh == [here, here]
    assert int(here.split()[2]) >= COUNT  # candidates were drawn and compared, not an empty digest


def test_the_candidate_digest_follows_the_generator_and_ignores_the_audit():
    bikes = compile_spec(load_spec(BIKES))
    generator = TaskGenerator(bikes, seed=0, scale="small")
    try:
        generator.generate(2)
        drawn, digest = generator.drawn, generator.digest
    finally:
        generator.close()
    assert candidates_digest(bikes, count=drawn, seed=0, scale="small") == digest  # no audit needed
    assert candidates_digest(bikes, count=drawn, seed=1, scale="small") != digest
    assert candidates_digest(bikes, count=drawn + 1, seed=0, scale="small") != digest


def test_the_checker_answers_world_after_world_like_this_process():
    specs = [yaml.safe_load((SPECS / name).read_text()) for name in ("bikes.yaml", "clinic.yaml")]
    with DeterminismChecker() as checker:
        answers = [checker.hashes(spec, 0, "small", 2) for spec in specs]
        broken = checker.hashes({"name": "broken"}, 0, "small", 0)
        again = checker.hashes(specs[0], 0, "small", 2)  # still answering after a failed request
        assert checker.proc is not None and checker.proc.poll() is None
    assert answers == [process_hashes(spec, 0, "small", 2) for spec in specs]
    assert broken.startswith("error: SpecError") and again == answers[0]


def test_a_world_whose_other_process_draws_other_tasks_is_rejected(monkeypatch):
    class Disagrees(DeterminismChecker):
        def hashes(self, spec, seed, scale, candidates):
            template, count, digest = process_hashes(spec, seed, scale, candidates).split()
            return f"{template} {count} {digest[::-1]}"

    bikes = compile_spec(parse_spec(json.loads(json.dumps(yaml.safe_load(BIKES.read_text())))))
    report = validate(bikes, processes=False, task_count=1, checker=Disagrees())
    assert report.failed_criteria() == ["deterministic_template"]
    assert "candidate tasks differ" in report.failures["deterministic_template"][0]
    seen: list[list[str]] = []
    monkeypatch.setattr(validate_module, "hashes_in_subprocesses", lambda *a, **k: seen.append(list(a)) or [])
    assert validate(bikes, task_count=1).ok and seen  # without a checker: fresh processes
