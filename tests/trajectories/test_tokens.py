"""Token-level trajectories: an OpenAI-compatible endpoint that returns token ids and
log-probabilities (as vLLM does when asked) gets them recorded per assistant turn with the exact
prompt's ids, kept in the journal, and exported by `--format tokens`. The endpoint is the real
HTTP fake (tests/support/fake_openai.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.runner._llm import ModelError, token_turn
from mcpsim.trajectories._export import ExportError, export
from mcpsim.trajectories._records import Trajectory
from tests.support.fake_openai import FakeModel, fake_openai, fake_tokenize

TASK = "gift-card-balance"
SCRIPT = [
    {"tool_calls": [("find_customer_by_email", json.dumps({"email": "matthew_murphy198@gmail.com"}))]},
    {"tool_calls": [("get_customer_details", json.dumps({"customer_id": "cus_1148152"}))]},
    {"content": "You have $329.73 left on your gift card."},
]


def _run(tmp_path, model: FakeModel, *extra: str) -> tuple[Trajectory, FakeModel]:
    out = tmp_path / "run"
    with fake_openai(model) as base_url:
        result = CliRunner().invoke(
            main,
            [
                *("run", "retail", "--agent", "openai:fake-1", "--tasks", TASK, "--out", str(out)),
                *("--base-url", base_url, "--no-cache", *extra),
            ],
        )
    assert result.exit_code == 0, result.output
    (line,) = (out / "trajectories.jsonl").read_text().splitlines()
    return Trajectory.model_validate_json(line), model


def test_token_ids_are_recorded_per_assistant_turn_with_the_exact_prompt(tmp_path) -> None:
    trajectory, model = _run(tmp_path, FakeModel(script=list(SCRIPT), tokens="token_ids"), "--token-ids")
    assert trajectory.reward == 1.0
    assert all(r["logprobs"] and r["return_token_ids"] for r in model.requests)  # asked for them
    turns = trajectory.usage.tokens
    assert turns is not None
    assistant = [i for i, m in enumerate(trajectory.messages) if m.role == "assistant"]
    assert [t.message_index for t in turns] == assistant and len(turns) == len(model.requests) == 3
    for turn, request in zip(turns, model.requests, strict=True):
        # the prompt's ids are those of exactly the messages sent for this turn
        assert turn.prompt_token_ids == fake_tokenize(json.dumps(request["messages"], sort_keys=True))
        assert len(request["messages"]) == turn.message_index  # the message it produced comes next
        assert turn.logprobs is not None and len(turn.logprobs) == len(turn.token_ids) > 0
    message = trajectory.messages[assistant[-1]]
    sampled = {"role": "assistant", "content": message.content}
    assert turns[-1].token_ids == fake_tokenize(json.dumps(sampled, sort_keys=True))
    assert turns[-1].finish_reason == "stop" and turns[0].finish_reason == "tool_calls"

    result = CliRunner().invoke(main, ["export", str(tmp_path / "run"), "--format", "tokens"])
    assert result.exit_code == 0, result.output
    assert "wrote 1 episodes" in result.output and "skipped" not in result.output
    dest = tmp_path / "run" / "export.tokens.jsonl"
    (record,) = [json.loads(line) for line in dest.read_text().splitlines()]
    assert record["task_id"] == TASK and record["reward"] == 1.0
    assert [t["message_index"] for t in record["turns"]] == assistant
    assert record["turns"][0]["prompt_token_ids"] == turns[0].prompt_token_ids
    assert record["turns"][2]["completion_token_ids"] == turns[2].token_ids
    assert record["turns"][2]["completion_logprobs"] == turns[2].logprobs
    # the endpoint reported no policy version: none recorded, none exported
    assert '"policy_version"' not in (tmp_path / "run" / "trajectories.jsonl").read_text()
    assert all("policy_version" not in t for t in record["turns"])


def test_ids_written_as_logprob_tokens_are_read_back(tmp_path) -> None:
    """Older vLLM: no token_ids field, each logprob's token reads "token_id:N"; no prompt ids."""
    trajectory, _ = _run(tmp_path, FakeModel(script=list(SCRIPT), tokens="logprob_ids"), "--token-ids")
    turns = trajectory.usage.tokens
    assert turns is not None and len(turns) == 3
    assert all(t.prompt_token_ids is None and t.token_ids and len(t.logprobs or []) == len(t.token_ids) for t in turns)
    assert turns[0].token_ids == fake_tokenize(
        json.dumps({"role": "assistant", "content": None, "tool_calls": _calls(trajectory, 1)}, sort_keys=True)
    )


def _calls(trajectory: Trajectory, number: int) -> list[dict]:
    message = [m for m in trajectory.messages if m.role == "assistant"][number - 1]
    return [
        {
            "id": f"call_{number}_{i}",
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for i, c in enumerate(message.tool_calls or [])
    ]


def test_without_the_flag_nothing_is_asked_or_recorded(tmp_path) -> None:
    trajectory, model = _run(tmp_path, FakeModel(script=list(SCRIPT), tokens="token_ids"))
    assert not any("logprobs" in r or "return_token_ids" in r for r in model.requests)  # OpenAI would refuse them
    assert trajectory.usage.tokens is None
    line = (tmp_path / "run" / "trajectories.jsonl").read_text()
    assert '"tokens"' not in line  # records of runs without tokens are unchanged
    with pytest.raises(ExportError, match="nothing to export") as refused:  # never an empty file to train on
        export(tmp_path / "run", "tokens", tmp_path / "tokens.jsonl")
    report = refused.value.report
    assert report is not None and report.written == 0 and report.skipped_unusable == 1
    assert "1 unusable as tokens" in str(refused.value) and "run with --token-ids" in str(refused.value)
    assert not (tmp_path / "tokens.jsonl").exists()


@pytest.mark.parametrize(
    ("choice", "data", "error"),
    [
        ({"token_ids": [1, "x"]}, {}, "token_ids that are not a list of integers"),
        (
            {"token_ids": [1, 2], "logprobs": {"content": [{"token": "a", "logprob": -0.1}]}},
            {},
            "2 completion token ids but 1 log-probabilities",
        ),
        ({"token_ids": [1]}, {"prompt_token_ids": "1 2 3"}, "prompt_token_ids that are not a list of integers"),
    ],
)
def test_malformed_token_fields_are_refused(choice: dict, data: dict, error: str) -> None:
    with pytest.raises(ModelError, match=error):
        token_turn(data, choice, 2)


def test_token_text_without_ids_records_nothing() -> None:
    """An endpoint that returns logprobs with token text (OpenAI) gives no ids: nothing to record."""
    choice = {"logprobs": {"content": [{"token": "Hi", "logprob": -0.2}]}}
    assert token_turn({}, choice, 2) is None
