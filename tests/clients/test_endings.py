"""The adapters' shared report of an episode's end (mcpsim_client.models.ending_info,
verdict_parts; mcpsim_client.dialogue.ending_of): why it ended, and the verdict's parts, from
verdict JSON in the shapes a server sends (full, older without components, summary) and the
client's own errors. The adapters' tests show them end to end with the real packages."""

from __future__ import annotations

import sys

import httpx

from tests.support.venvs import CLIENT

sys.path.insert(0, str(CLIENT))
from mcpsim_client import EpisodeNotFound, TransportFailed, Verdict
from mcpsim_client.dialogue import ending_of
from mcpsim_client.models import ending_info, verdict_parts

FULL = {
    "passed": False,
    "reward": 0.0,
    "partial_reward": 0.5,
    "checks": [
        {"type": "row_exists", "passed": True, "requirement": "a"},
        {"type": "row_exists", "passed": False, "requirement": "b"},
    ],
    "components": {"1:row_exists": 1.0, "2:row_exists": 0.0},
}


def test_the_parts_are_the_servers_components_or_the_checks_numbered() -> None:
    parts = verdict_parts(Verdict.from_json(FULL))
    assert parts == {
        "strict": 0.0,
        "partial": 0.5,
        "passed": False,
        "failure": None,
        "checks": {"1:row_exists": 1.0, "2:row_exists": 0.0},
    }
    older = {k: v for k, v in FULL.items() if k != "components"}  # a server that sends no components
    assert verdict_parts(Verdict.from_json(older))["checks"] == {"1:row_exists": 1.0, "2:row_exists": 0.0}
    summary = {**older, "checks": [{"check": "1:row_exists", "passed": True}, {"check": "2:custom", "passed": False}]}
    assert verdict_parts(Verdict.from_json(summary))["checks"] == {"1:row_exists": 1.0, "2:custom": 0.0}


def test_an_ending_says_whether_it_was_cut_graded_or_failed() -> None:
    verdict = Verdict.from_json(FULL)
    assert ending_info("answered", verdict)["truncated"] is False
    cut = ending_info("step_limit", verdict)
    assert cut["truncated"] is True and cut["checks"] and "error" not in cut
    failed = ending_info("error", error="the server is gone")
    assert failed == {"ending": "error", "truncated": False, "error": "the server is gone"}


def test_a_failed_request_ends_as_a_timeout_or_an_error() -> None:
    try:
        raise TransportFailed("could not call a tool") from httpx.ReadTimeout("read timed out")
    except TransportFailed as timed_out:
        assert ending_of(timed_out) == "timeout"
    try:
        raise TransportFailed("could not call a tool") from httpx.ConnectError("refused")
    except TransportFailed as refused:
        assert ending_of(refused) == "error"
    assert ending_of(EpisodeNotFound("gone", status=404)) == "error"
    assert ending_of(ValueError("a bug of the caller's")) is None  # not the server's failure: raised
