"""docs/writing-a-world.md's complete example world runs exactly as written (extracted from the
page, executed in a fresh interpreter so its tables and world register nowhere else)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mcpsim.testing._driver import clean_env

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-world.md"


def test_the_guides_example_world_runs_as_written(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    example = next(b for b in blocks if "world = World(" in b and "Episode.create" in b)
    script = tmp_path / "library.py"
    script.write_text(example)
    out = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env(),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'loan_id': 'L" in out.stdout and "'reader': 'Ada Lovelace'" in out.stdout
