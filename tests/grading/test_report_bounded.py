"""The report check reads a huge final message with bounded work (issue 28; untrusted input): each
pattern reads a window of WINDOW characters around an action word, never the whole sentence
before it, so a 200 KB message, as one sentence or as thousands, costs work linear in its length.
Work is counted as the characters the check hands to its patterns (no timing is asserted)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcpsim.grading import _report

# one sentence of many action words (the worst case for a pattern read before each of them), and many sentences
ONE_SENTENCE = "we then cancelled order W12345 and successfully refunded it and " * 3200 + "that is all."
MANY_SENTENCES = "I have cancelled order W12345 and I couldn't update the address. " * 3200
PER_CHARACTER = 40  # characters read per character of the message, at most (quadratic reading is thousands)


class _NoChanges:
    def changes(self, call_seq: int) -> list[Any]:
        return []


_READERS = frozenset({"search", "match", "fullmatch", "findall", "finditer", "split"})  # the text comes first


class _Counted:
    """A compiled pattern that counts the characters it is asked to read."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self.pattern, self.counter = pattern, counter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)
        if name not in _READERS:
            return method

        def counted(text: str, *args: Any) -> Any:
            self.counter[0] += len(text)
            return method(text, *args)

        return counted


@pytest.mark.parametrize("message", [ONE_SENTENCE, MANY_SENTENCES], ids=["one sentence", "many sentences"])
def test_a_huge_message_is_read_in_linear_work(monkeypatch, message):
    assert len(message) >= 200_000
    counter = [0]
    for name in ("_AGENT", "_NOW", "_AFTER_SUCCESS", "_UNABLE", "_NOTHING_CHANGED", "_AND", "_ID", "_SENTENCE"):
        monkeypatch.setattr(_report, name, _Counted(getattr(_report, name), counter))
    result = _report.report_check(_NoChanges(), [], message)  # type: ignore[arg-type]
    assert result is not None and not result.passed  # it claims a cancellation no call took
    assert 0 < counter[0] <= PER_CHARACTER * len(message), counter[0] / len(message)


def test_the_window_still_reads_a_claim_at_the_end_of_a_long_sentence():
    padding = "with the details you gave me, " * 400
    done, undone = _report._claims(f"Following your message {padding}we've gone ahead and cancelled it")
    assert [sorted(c) for c in done] == [["cancel"]] and not undone
