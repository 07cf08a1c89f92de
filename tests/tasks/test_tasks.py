"""Task files: validated on load, loadable without importing a world's code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpsim.tasks import TaskFileError, load_task_file
from mcpsim.tasks._loading import load_task_dir

CANARY = "MCPSIM-CANARY test 0123456789abcdef"
TASK = """
  - id: {id}
    instruction: Please do the thing for me.
    gold: []
    rubric:
      - type: row_count
        requirement: Three accounts remain
        table: account
        equals: 3
        noop_passes: true
    difficulty: easy
    split: train
"""


def write(folder: Path, name: str, body: str, *, world: str = "ledger", canary: str = CANARY) -> Path:
    path = folder / name
    path.write_text(f'world: {world}\ncanary: "{canary}"\ntasks:\n{body}')
    return path


def test_a_valid_file_loads(tmp_path):
    f = load_task_file(write(tmp_path, "a.yaml", TASK.format(id="one")))
    assert [t.id for t in f.tasks] == ["one"] and f.tasks[0].rubric[0].type == "row_count"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("type: row_count", "type: vibes"), "does not match any of the expected tags"),
        (lambda t: t.replace("        noop_passes: true\n", ""), "noop_passes"),
        (lambda t: t.replace("split: train", "split: holdout"), "split"),
        (
            lambda t: (
                t.replace("    gold: []\n", "    gold: []\n    answer: []\n")
                .replace("type: row_count", "type: answer_facts")
                .replace("        table: account\n        equals: 3\n", "")
            ),
            "checks answer facts but the task lists none",
        ),
        (lambda t: t.replace("    rubric:", "    colour: red\n    rubric:"), "Extra inputs are not permitted"),
        (lambda t: t.replace("id: x", "id: Not An Id"), "should match pattern"),
    ],
)
def test_a_malformed_task_is_refused_with_the_reason_and_the_file(tmp_path, edit, message):
    path = write(tmp_path, "bad.yaml", edit(TASK.format(id="x")))
    with pytest.raises(TaskFileError, match=message) as err:
        load_task_file(path)
    assert str(path) in str(err.value)


def test_an_empty_rubric_cannot_be_written(tmp_path):
    body = TASK.format(id="x").split("    rubric:")[0] + "    rubric: []\n    difficulty: easy\n    split: train\n"
    with pytest.raises(TaskFileError, match="at least 1 item"):
        load_task_file(write(tmp_path, "a.yaml", body))


def test_a_weak_canary_and_broken_yaml_are_refused(tmp_path):
    with pytest.raises(TaskFileError, match="at least 16 random characters"):
        load_task_file(write(tmp_path, "a.yaml", TASK.format(id="x"), canary="MCPSIM-CANARY x"))
    bad = tmp_path / "b.yaml"
    bad.write_text("world: [unclosed")
    with pytest.raises(TaskFileError, match="b.yaml"):
        load_task_file(bad)


def test_duplicate_ids_across_files_and_foreign_worlds_are_refused(tmp_path):
    write(tmp_path, "a.yaml", TASK.format(id="same"))
    write(tmp_path, "b.yaml", TASK.format(id="same"))
    with pytest.raises(TaskFileError, match="task id 'same' also in"):
        load_task_dir("ledger", tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    write(other, "a.yaml", TASK.format(id="x"), world="retail")
    with pytest.raises(TaskFileError, match="declares world 'retail'"):
        load_task_dir("ledger", other)


def test_retail_tasks_load_without_importing_the_worlds_code():
    code = (
        "import sys; from mcpsim.tasks import load_tasks; ts = load_tasks('retail'); "
        "assert ts.tasks; assert 'mcpsim_worlds.retail' not in sys.modules, 'world imported'; print(len(ts.tasks))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 1


def test_a_requirement_cut_short_by_a_yaml_comment_is_refused(tmp_path):
    body = TASK.format(id="x").replace("requirement: Three accounts remain", "requirement: Order #W0006911 is done")
    with pytest.raises(TaskFileError, match="too short to be a sentence"):
        load_task_file(write(tmp_path, "a.yaml", body))


def test_a_task_file_read_again_with_the_same_text_is_not_parsed_again(tmp_path, monkeypatch):
    """The CLI and the world host both load a world's tasks in one `mcpsim run` process (issue 30):
    the second load reads the file but does not parse it; an edited file is parsed again."""
    import mcpsim.tasks._loading as loading

    parsed = []
    real = loading.load_trusted
    monkeypatch.setattr(loading, "load_trusted", lambda text: parsed.append(text) or real(text))
    path = tmp_path / "one.yaml"
    body = "world: {w}\ncanary: MCPSIM-CANARY probe 0123456789abcdef\ntasks: []\n"
    path.write_text(body.format(w="bank_cache_probe"))
    first = loading.load_task_file(path)
    assert loading.load_task_file(path) is first and len(parsed) == 1
    path.write_text(body.format(w="bank_cache_probe_2"))
    assert loading.load_task_file(path).world == "bank_cache_probe_2" and len(parsed) == 2
    path.write_text("world: [unclosed\n")
    with pytest.raises(loading.TaskFileError, match="one.yaml"):
        loading.load_task_file(path)
