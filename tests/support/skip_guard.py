"""No test skips silently. Every skip prints its reason in the summary (`-rs` in the pytest
options), and a skip's reason names what is missing. On a machine meant to have everything (CI:
`.ci/run` sets MCPSIM_NO_UNEXPECTED_SKIPS=1), a skip whose reason matches no line of
tests/expected_skips.txt fails the run, so a program that stopped installing cannot hide behind
a skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXPECTED = Path(__file__).parents[1] / "expected_skips.txt"
SWITCH = "MCPSIM_NO_UNEXPECTED_SKIPS"


def expected_reasons(path: Path = EXPECTED) -> list[str]:
    """The reasons a skip may give where everything is installed: each non-comment line, matched
    as a substring of the reason."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


class SkipGuard:
    def __init__(self, expected: list[str]) -> None:
        self.expected = expected
        self.unexpected: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            reason = skip_reason(report)
            if not any(allowed in reason for allowed in self.expected):
                self.unexpected.append((report.nodeid, reason))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unexpected and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.unexpected:
            return
        terminalreporter.section(f"unexpected skips ({SWITCH}=1)", red=True)
        for nodeid, reason in self.unexpected:
            terminalreporter.line(f"{nodeid}: {reason}")
        terminalreporter.line(f"install what they name, or list the reason in {EXPECTED.name} with why")


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(SWITCH) == "1" and not hasattr(config, "workerinput"):  # the controller sees every report
        config.pluginmanager.register(SkipGuard(expected_reasons()), "mcpsim-skip-guard")
