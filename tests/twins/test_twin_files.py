"""A twin spec file is untrusted input (`mcpsim gen TWIN`, `mcpsim fidelity TWIN ...`): one past
`MAX_TWIN_BYTES` is refused without being read whole, and one that is not a twin spec gets an
error naming the file and its first problem, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.twins import is_twin_file, load_twin
from mcpsim.twins._limits import MAX_TWIN_BYTES


@pytest.fixture
def oversized(tmp_path: Path) -> Path:
    """A twin-looking JSON file one byte past the bound (sparse: its padding costs no disk)."""
    path = tmp_path / "big.json"
    head = b'{"kind": "twin", "padding": "'
    with path.open("wb") as f:
        f.write(head)
        f.seek(MAX_TWIN_BYTES + 1 - 2)
        f.write(b'"}')
    assert path.stat().st_size == MAX_TWIN_BYTES + 1
    return path


def test_a_twin_past_its_bound_is_refused_unread(oversized: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real_open = Path.open

    def counting_open(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        handle = real_open(self, *args, **kwargs)
        if self == oversized:
            real_read = handle.read

            def read(size: int = -1) -> bytes:
                reads.append(size)
                return real_read(size)

            handle.read = read  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    with pytest.raises(ValueError, match="MAX_TWIN_BYTES"):
        load_twin(oversized)
    assert reads and all(0 < size <= MAX_TWIN_BYTES + 1 for size in reads)  # never read whole (-1)
    assert not is_twin_file(oversized)  # then the world spec's own bound refuses it


def test_the_fidelity_command_names_an_oversized_or_wrong_twin(oversized: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["fidelity", str(oversized), str(tmp_path)])
    assert result.exit_code == 1 and "MAX_TWIN_BYTES" in result.output and "Traceback" not in result.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"kind": "twin", "tools": "none"}))
    result = CliRunner().invoke(main, ["fidelity", str(wrong), str(tmp_path)])
    assert result.exit_code == 1 and "not a twin spec" in result.output and str(wrong) in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_gen_names_a_twin_file_that_is_not_a_twin_spec(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"kind": "twin", "server": 3}))
    result = CliRunner().invoke(main, ["gen", str(wrong)])
    assert result.exit_code == 1 and "not a twin spec" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
