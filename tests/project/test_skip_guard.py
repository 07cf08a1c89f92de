"""The skip guard (tests/support/skip_guard.py): where everything is meant to be installed, a skip
whose reason is not expected fails the run and is listed; an expected one does not."""

from __future__ import annotations

import pytest

from tests.support.skip_guard import EXPECTED, SkipGuard, expected_reasons

SUITE = """
import pytest

def test_runs():
    pass

@pytest.mark.skipif(True, reason="Chromium is not installed")
def test_needs_a_browser():
    pass

def test_by_design():
    pytest.skip("runs after the whole parametrized test")
"""


def test_an_unexpected_skip_fails_the_run_and_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest(
        "-p", "no:xdist", "-p", "no:cacheprovider", plugins=[SkipGuard(["runs after the whole"])]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*unexpected skips*", "*test_needs_a_browser: Chromium is not installed*"])
    assert "test_by_design:" not in result.stdout.str()


def test_expected_skips_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    guard = SkipGuard(["runs after the whole", "Chromium is not installed"])
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", plugins=[guard])
    assert result.ret == pytest.ExitCode.OK and "unexpected skips" not in result.stdout.str()


def test_the_expected_list_gives_a_reason_for_each_entry() -> None:
    lines = EXPECTED.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith("#"):
            assert i and lines[i - 1].startswith("#"), f"expected_skips.txt line {i + 1} has no comment saying why"
    assert expected_reasons()
