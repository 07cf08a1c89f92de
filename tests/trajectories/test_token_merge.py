"""Token trajectories a trainer can load: the `tokens` export merges an episode's turns into one
sequence with a loss mask when each prompt extends the previous prompt and completion, names
the turns where a chat template breaks that, and carries the policy version of each turn when
the endpoint reported it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsim.runner._llm import ModelError, token_turn
from mcpsim.trajectories._export import ExportError, export
from mcpsim.trajectories._records import FunctionCall, Message, TokenTurn, ToolCall, Trajectory, Usage
from tests.support.fake_openai import FakeModel
from tests.support.records import a_trajectory
from tests.trajectories.test_tokens import SCRIPT, _run


def _call(n: int) -> ToolCall:
    return ToolCall(id=f"call_{n}", function=FunctionCall(name="lookup", arguments="{}"))


def _episode(*turns: TokenTurn) -> Trajectory:
    """system, user, then per turn an assistant message (a tool call, the last a final answer)
    each followed by its tool result: the assistant messages are at 2, 4, 6..."""
    messages = [Message(role="system", content="Be brief."), Message(role="user", content="Hi")]
    for n in range(len(turns)):
        if n == len(turns) - 1:
            messages.append(Message(role="assistant", content="Done."))
        else:
            messages.append(Message(role="assistant", tool_calls=[_call(n)]))
            messages.append(Message(role="tool", tool_call_id=f"call_{n}", content="{}"))
    assert [i for i, m in enumerate(messages) if m.role == "assistant"] == [t.message_index for t in turns]
    return a_trajectory(
        episode_id="ep-1",
        world="retail",
        world_version="v1",
        task_id="t",
        agent="openai:m",
        messages=messages,
        reward=1.0,
        usage=Usage(model_calls=len(turns), tokens=list(turns)),
    )


def _exported(tmp_path: Path, trajectory: Trajectory) -> dict:
    source = tmp_path / "trajectories.jsonl"
    source.write_text(trajectory.model_dump_json() + "\n", encoding="utf-8")
    export(source, "tokens", tmp_path / "tokens.jsonl")
    (line,) = (tmp_path / "tokens.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(line)


def test_turns_that_extend_each_other_merge_into_one_masked_sequence(tmp_path) -> None:
    trajectory = _episode(
        TokenTurn(message_index=2, prompt_token_ids=[1, 2, 3], token_ids=[10, 11], logprobs=[-0.5, -0.25]),
        # the tool result adds 20, 21
        TokenTurn(message_index=4, prompt_token_ids=[1, 2, 3, 10, 11, 20, 21], token_ids=[30], logprobs=[-0.125]),
        # no logprobs for this turn; the tool result adds 40
        TokenTurn(message_index=6, prompt_token_ids=[1, 2, 3, 10, 11, 20, 21, 30, 40], token_ids=[50, 51]),
    )
    record = _exported(tmp_path, trajectory)
    assert record["template_breaks"] == [] and record["prompts_missing"] == []
    assert record["merged"] == {
        "token_ids": [1, 2, 3, 10, 11, 20, 21, 30, 40, 50, 51],
        "loss_mask": [0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1],
        "logprobs": [None, None, None, -0.5, -0.25, None, None, -0.125, None, None, None],
    }
    # the turns are still there, one by one
    assert [t["completion_token_ids"] for t in record["turns"]] == [[10, 11], [30], [50, 51]]
    assert all("policy_version" not in t for t in record["turns"])  # none recorded, none written


def test_a_prompt_that_does_not_extend_the_previous_one_is_a_template_break(tmp_path) -> None:
    trajectory = _episode(
        TokenTurn(message_index=2, prompt_token_ids=[1, 2, 3], token_ids=[10, 11]),
        # the template re-rendered the earlier completion (as Qwen3's drops earlier reasoning)
        TokenTurn(message_index=4, prompt_token_ids=[1, 2, 3, 10, 99, 20], token_ids=[30]),
        TokenTurn(message_index=6, prompt_token_ids=[1, 2, 3, 10, 99, 20, 30, 40], token_ids=[50]),
    )
    record = _exported(tmp_path, trajectory)
    assert record["merged"] is None
    assert record["template_breaks"] == [4] and record["prompts_missing"] == []
    assert len(record["turns"]) == 3  # still trainable turn by turn


def test_turns_without_prompt_ids_are_listed_and_not_merged(tmp_path) -> None:
    trajectory = _episode(
        TokenTurn(message_index=2, prompt_token_ids=None, token_ids=[10]),
        TokenTurn(message_index=4, prompt_token_ids=[5, 6], token_ids=[30]),  # nothing to check it against
    )
    record = _exported(tmp_path, trajectory)
    assert record["merged"] is None
    assert record["prompts_missing"] == [2] and record["template_breaks"] == []


def test_logprobs_that_do_not_match_the_ids_make_the_episode_unusable(tmp_path) -> None:
    trajectory = _episode(TokenTurn(message_index=2, prompt_token_ids=[1], token_ids=[10, 11], logprobs=[-0.5]))
    with pytest.raises(ExportError, match=r"token records \[2\] have not one log-probability per completion token"):
        _exported(tmp_path, trajectory)


def test_a_run_through_the_fake_flags_its_template_and_records_policy_versions(tmp_path) -> None:
    """The fake's prompt is the JSON of the messages, closed by "]": no later prompt extends the
    previous prompt and completion, so every turn after the first is a break."""
    model = FakeModel(script=list(SCRIPT), tokens="token_ids", policy_version=lambda n: 100 + n)
    trajectory, _ = _run(tmp_path, model, "--token-ids")
    turns = trajectory.usage.tokens
    assert turns is not None and [t.policy_version for t in turns] == [101, 102, 103]
    export(tmp_path / "run", "tokens", tmp_path / "tokens.jsonl")
    (record,) = [json.loads(line) for line in (tmp_path / "tokens.jsonl").read_text().splitlines()]
    assistant = [i for i, m in enumerate(trajectory.messages) if m.role == "assistant"]
    assert record["merged"] is None
    assert record["template_breaks"] == assistant[1:] and record["prompts_missing"] == []
    assert [t["policy_version"] for t in record["turns"]] == [101, 102, 103]


@pytest.mark.parametrize(
    ("data", "choice", "version"),
    [({"policy_version": 7}, {}, 7), ({}, {"policy_version": "ckpt-0042"}, "ckpt-0042"), ({}, {}, None)],
)
def test_policy_version_is_read_from_the_answer_or_its_choice(data: dict, choice: dict, version) -> None:
    turn = token_turn(data, {"token_ids": [1], **choice}, 2)
    assert turn is not None and turn.policy_version == version
    assert ('"policy_version"' in turn.model_dump_json()) == (version is not None)  # left out when absent


@pytest.mark.parametrize("version", [1.5, True, "v" * 201, {"step": 3}, [1]])
def test_a_malformed_policy_version_is_refused(version) -> None:
    with pytest.raises(ModelError, match="policy_version that is not an integer or a string of at most 200"):
        token_turn({"policy_version": version}, {"token_ids": [1]}, 2)
