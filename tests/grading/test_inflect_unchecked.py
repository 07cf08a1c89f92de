"""inflect imported without typeguard's instrumentation (`mcpsim._inflect`) answers exactly as
the instrumented one does: compared in two fresh interpreters on every word of the shipped task
files and the grading tests, plus irregular nouns, for the calls mcpsim makes (singular and plural
nouns, indefinite articles)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
IRREGULAR = "children child people person statuses status news business mice mouse analyses geese data criteria"

_PROBE = """
import json, sys
{imports}
engine = inflect.engine()
words = json.loads(sys.stdin.read())
out = {{w: [engine.singular_noun(w), engine.plural_noun(w), engine.a(w)] for w in words}}
try:
    engine.plural_noun("")  # the instrumented engine refuses an empty word
    refused = None
except Exception as exc:
    refused = type(exc).__name__
print(json.dumps({{"answers": out, "empty_word": refused}}))
"""


def _words() -> list[str]:
    found: set[str] = set(IRREGULAR.split())
    for path in [*(ROOT / "worlds").glob("*/tasks/*.yaml"), *(ROOT / "tests" / "grading").glob("*.py")]:
        found.update(w.lower() for w in re.findall(r"[A-Za-z]{2,}", path.read_text(encoding="utf-8")))
    return sorted(found)


def _probe(imports: str, words: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(imports=imports)],
        input=json.dumps(words),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_unchecked_inflect_answers_as_the_instrumented_one() -> None:
    words = _words()
    assert len(words) > 1000
    checked = _probe("import inflect", words)
    unchecked = _probe(
        "from mcpsim._inflect import inflect\nimport typeguard, typeguard._decorators\n"
        "assert typeguard.typechecked is typeguard._decorators.typechecked",
        words,
    )
    assert checked["empty_word"] == "TypeCheckError"  # the instrumented engine was the one compared
    assert unchecked["empty_word"] is None  # and ours skipped typeguard's instrumentation
    assert unchecked["answers"] == checked["answers"]
    assert checked["answers"]["children"][0] == "child"
