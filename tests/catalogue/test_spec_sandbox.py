"""Spec files the CLI loads are compiled in a sandbox first (issue 29, item 2): `--world-spec` and
`--worlds-dir` compile and seed each file in a child process within the MCPSIM_COMPILE_* limits
(`mcpsim._sandbox`), and `mcpsim gen SPEC` validates it there; a file that fails or goes past a
limit is refused with the file, the reason and nothing registered."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim._sandbox import CompileLimits, CompileRefused, run_now
from mcpsim.catalogue._loading import SpecFileCheck
from mcpsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "examples/specs/library.yaml"
GOOD_EMAIL = "email: {type: str, max_length: 120, unique: true, generator: {faker: email}}"
# compiles, but cannot be seeded: a unique field drawn from two values
TWO_EMAILS = GOOD_EMAIL.replace("{faker: email}", "{choices: [a@x.org, b@x.org]}")


def unseedable(folder: Path) -> Path:
    text = LIBRARY.read_text()
    assert GOOD_EMAIL in text
    path = folder / "library.yaml"
    path.write_text(text.replace(GOOD_EMAIL, TWO_EMAILS))
    return path


def invoke(args: list[str], **env: str):
    return CliRunner().invoke(main, args, env={"MCPSIM_COMPILE_TIMEOUT": "", **env})


def test_limits_come_from_the_environment_with_errors_that_name_the_variable():
    assert CompileLimits.from_env({}) == CompileLimits()
    limits = CompileLimits.from_env(
        {"MCPSIM_COMPILE_CPU_SECONDS": "7", "MCPSIM_COMPILE_MEMORY": "512MiB", "MCPSIM_COMPILE_TIMEOUT": "2.5"}
    )
    assert limits == CompileLimits(cpu_seconds=7, memory_bytes=512 * 1024**2, wall_seconds=2.5)
    with pytest.raises(ValueError, match="MCPSIM_COMPILE_MEMORY='lots' is not a valid limit"):
        CompileLimits.from_env({"MCPSIM_COMPILE_MEMORY": "lots"})
    with pytest.raises(ValueError, match="cpu_seconds must be a positive"):
        CompileLimits.from_env({"MCPSIM_COMPILE_CPU_SECONDS": "0"})


def test_the_check_runs_in_a_child_and_returns_its_json_answer(tmp_path):
    assert run_now(SpecFileCheck(), str(LIBRARY), CompileLimits()) == {"world": "library"}
    with pytest.raises(CompileRefused, match="SeedError: entities.member.fields.email: unique"):
        run_now(SpecFileCheck(), str(unseedable(tmp_path)), CompileLimits())
    with pytest.raises(CompileRefused, match="wall-clock limit of 0.001 s"):
        run_now(SpecFileCheck(), str(LIBRARY), CompileLimits(wall_seconds=0.001))


class ForkingThread:
    """A loader answering with the name its child's thread inherited from the thread that forked it."""

    def __call__(self, name: str) -> str:
        return threading.current_thread().name


FORK_FROM_ONE_THREAD = """
import threading
from mcpsim._sandbox import CompileLimits, run_now
from tests.catalogue.test_spec_sandbox import ForkingThread
print(threading.active_count(), run_now(ForkingThread(), "x", CompileLimits(wall_seconds=120)))
"""


def test_a_process_with_one_thread_forks_its_child_from_that_thread():
    """A fork keeps only the thread that made it, and any lock another thread held stays held in
    the child forever; so the child is forked by the caller's own thread, never by a worker thread
    while the caller's thread runs on. Run in a fresh process: pytest's may have threads of its own."""
    done = subprocess.run(
        [sys.executable, "-c", FORK_FROM_ONE_THREAD], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "MainThread"]


LARGE_PARENT = """
import mmap
reserved = mmap.mmap(-1, 3 * 1024**3)  # 3 GiB of address space, never touched
from mcpsim._sandbox import CompileLimits, run_now
from mcpsim.catalogue._loading import SpecFileCheck
print(run_now(SpecFileCheck(), "examples/specs/library.yaml", CompileLimits(wall_seconds=300))["world"])
"""


def test_a_parent_with_a_large_address_space_still_loads_specs_in_its_sandbox():
    """The memory limit is what the loading may add to the address space its child starts with: a
    child forked from a process past 2 GiB of mappings (a long-running test worker) still loads
    a spec, where an absolute 2 GiB limit failed every allocation."""
    done = subprocess.run([sys.executable, "-c", LARGE_PARENT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "library", done.stdout


def test_a_world_spec_that_cannot_be_seeded_is_refused_before_it_is_registered(tmp_path):
    bad = unseedable(tmp_path)
    done = invoke(["worlds", "--world-spec", str(bad)])
    assert done.exit_code == 2, done.output
    assert f"{bad}: refused in its sandbox: SeedError: entities.member.fields.email" in done.output
    assert "--world-spec" in done.output
    served = invoke(["gen", "--serve", str(bad)])  # refused before it would serve
    assert served.exit_code == 1 and "refused in its sandbox: SeedError" in served.output, served.output


def test_a_spec_error_reads_as_it_did_without_the_sandbox(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(LIBRARY.read_text().replace("entity: book", "entity: bok", 1))
    done = invoke(["worlds", "--world-spec", str(broken)])
    assert done.exit_code == 2 and str(broken) in done.output and "bok" in done.output, done.output
    assert "sandbox" not in done.output


def test_the_limits_apply_to_every_spec_option(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    shutil.copy(LIBRARY, folder / "library.yaml")
    fine = invoke(["worlds", "--json", "--worlds-dir", str(folder)])
    assert fine.exit_code == 0, fine.output
    assert "library" in {w["name"] for w in json.loads(fine.output)}
    for option, source in (("--worlds-dir", folder), ("--world-spec", LIBRARY)):
        slow = invoke(["worlds", option, str(source)], MCPSIM_COMPILE_TIMEOUT="0.001")
        assert slow.exit_code == 2, slow.output
        assert "refused in its sandbox: loading it took longer than its wall-clock limit of 0.001 s" in slow.output
    wrong = invoke(["worlds", "--world-spec", str(LIBRARY)], MCPSIM_COMPILE_MEMORY="lots")
    assert wrong.exit_code == 2 and "MCPSIM_COMPILE_MEMORY='lots' is not a valid limit" in wrong.output


def test_gen_validates_a_spec_file_in_the_sandbox(tmp_path):
    bad = unseedable(tmp_path)
    rejected = invoke(["gen", str(bad), "--tasks", "0"])  # the child's report, as validation gives it
    assert rejected.exit_code == 1 and "rejected by: seed_constraints" in rejected.output, rejected.output
    assert json.loads(rejected.stdout)["failures_per_criterion"]["seed_constraints"] == 1
    slow = invoke(["gen", str(LIBRARY), "--tasks", "0"], MCPSIM_COMPILE_TIMEOUT="0.001")
    assert slow.exit_code == 1 and "wall-clock limit of 0.001 s" in slow.output, slow.output


def test_a_twin_spec_goes_through_the_sandbox_in_gen_and_fidelity(tmp_path):
    from mcpsim.twins import infer_twin
    from tests.twins.test_twin import SURFACE

    twin = tmp_path / "notes.twin.json"
    twin.write_text(infer_twin(SURFACE).model_dump_json())
    assert run_now(SpecFileCheck(), str(twin), CompileLimits())["world"]
    recording = tmp_path / "rec"
    recording.mkdir()
    for args in (["gen", "--serve", str(twin)], ["fidelity", str(twin), str(recording)]):
        slow = invoke(args, MCPSIM_COMPILE_TIMEOUT="0.001")
        assert slow.exit_code == 1, slow.output
        assert f"{twin}: refused in its sandbox: loading it took longer than" in slow.output, slow.output


def test_generated_tasks_are_made_in_the_sandbox_and_read_back_unchanged(tmp_path):
    """A spec without a task file has its tasks generated on first use: under the CLI that runs in
    the sandbox (the generator's audit runs the world's tools many times over), and the tasks read
    back equal the ones generated in the process."""
    from mcpsim.catalogue._loading import spec_tasks
    from mcpsim.specs import compile_spec, load_spec
    from mcpsim.tasks import Task

    # about 14 CPU-seconds in the child: limits far above it, so a loaded machine cannot fail this part
    roomy = {"MCPSIM_COMPILE_CPU_SECONDS": "600", "MCPSIM_COMPILE_TIMEOUT": "1800"}
    listed = invoke(["tasks", "--json", "--world-spec", str(LIBRARY), "library"], **roomy)
    assert listed.exit_code == 0, listed.output
    here = [t for f in spec_tasks(compile_spec(load_spec(LIBRARY))).files for t in f.tasks]
    printed = [
        {k: v for k, v in t.items() if k != "features"} for t in json.loads(listed.stdout)
    ]  # features: the CLI's
    assert [Task.model_validate(t) for t in printed] == here and len(here) == 10
    many = tmp_path / "library_many.yaml"  # compiles and seeds in well under a second; 200 tasks take far longer
    text = LIBRARY.read_text().replace("name: library\n", "name: library_many\n", 1)
    many.write_text(text + "\ngenerated_tasks: 200\n")
    capped = invoke(["tasks", "--world-spec", str(many), "library_many"], MCPSIM_COMPILE_CPU_SECONDS="1")
    assert capped.exit_code == 1, capped.output
    assert f"{many}: generating its tasks was refused in its sandbox" in capped.output
    assert "CPU-time limit of 1 s" in capped.output
