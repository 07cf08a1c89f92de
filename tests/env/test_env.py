"""The in-process environment API (mcpsim.env._environment): reset/step over real worlds and tasks, the
verifier's reward at the end, fork, snapshot and restore of a live environment."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import pytest

from mcpsim.engine._templates import TemplateCache
from mcpsim.env._environment import AsyncEnv, Env, EnvError, MessageAction, StepResult, ToolCallAction
from mcpsim.runner._agents import oracle_steps
from mcpsim.runner._llm import ModelError
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import Say, load_tasks

TASK = "add-address-make-default"  # needs a confirmation before the write
LOOKUP = "gift-card-balance"  # reads only, then an answer


def _oracle_actions(task_id: str) -> list:
    task = load_tasks("retail").get(task_id)
    steps = [
        MessageAction(s.say) if isinstance(s, Say) else ToolCallAction(s.tool, s.args)
        for s in oracle_steps(task, "retail")
    ]
    return [*steps, MessageAction(task.oracle_answer())]


def _play(env: Env, actions: list) -> StepResult:
    result = None
    for action in actions:
        assert not env.done
        result = env.step(action)
    assert result is not None
    return result


@pytest.fixture(scope="module")
def manager(templates: TemplateCache) -> Iterator[EpisodeManager]:
    """One home for every environment of this module: each task's gold solution is replayed once."""
    manager = EpisodeManager(templates, ttl_seconds=None)
    yield manager
    manager.close()


def test_the_oracle_passes_and_the_reward_comes_at_the_end(manager: EpisodeManager) -> None:
    with Env("retail", manager=manager) as env:
        obs = env.reset(TASK)
        assert obs.task_id == TASK and obs.world == "retail"
        assert [m.role for m in obs.messages] == ["system", "user"]
        assert obs.messages[0].content == obs.policy and "policy" in obs.policy.lower()
        assert obs.messages[1].content == load_tasks("retail").get(TASK).instruction
        assert {t.function["name"] for t in obs.tools} >= {"find_customer_by_email", "add_customer_address"}
        actions = _oracle_actions(TASK)
        rewards = [env.step(a) for a in actions[:-1]]
        assert all(r.reward == 0.0 and not r.done for r in rewards)
        # the confirmation question got the scripted user's yes
        asked = next(
            r for r in rewards if isinstance(r.observation.new[0].content, str) and r.observation.new[0].content
        )
        assert asked.observation.new[-1].role == "user" and "yes" in asked.observation.new[-1].content.lower()
        final = env.step(actions[-1])
        assert final.done and final.reward == 1.0
        assert final.info["passed"] is True and final.info["partial_reward"] == 1.0
        assert final.info["termination"] == "answered" and final.info["state_hash"]
        with pytest.raises(EnvError, match="the episode is over"):
            env.step(MessageAction("again"))
        record = env.trajectory()
        assert record.reward == 1.0 and record.status == "completed"
        assert [c.tool for c in record.calls] == [a.name for a in actions if isinstance(a, ToolCallAction)]
        assert record.calls[-1].changes  # the write's row changes, from the server's record


def test_strict_and_partial_rewards_of_a_wrong_answer(manager: EpisodeManager) -> None:
    wrong = [a for a in _oracle_actions(LOOKUP)[:-1]] + [MessageAction("You have $12.00 left.")]
    with Env("retail", manager=manager) as env:
        env.reset(LOOKUP)
        strict = _play(env, wrong)
    with Env("retail", manager=manager, reward="partial") as env:
        env.reset(LOOKUP)
        partial = _play(env, wrong)
    assert strict.done and strict.reward == 0.0
    assert 0.0 < partial.reward < 1.0 and partial.reward == strict.info["partial_reward"]
    failed = [c["type"] for c in strict.info["verdict"]["checks"] if not c["passed"]]
    assert failed == ["answer_facts"], failed


def test_doing_nothing_fails(manager: EpisodeManager) -> None:
    with Env("retail", manager=manager) as env:
        env.reset(TASK)
        result = env.step(MessageAction(""))
    assert result.done and result.reward == 0.0 and result.info["passed"] is False


def test_fork_branches_a_live_environment(manager: EpisodeManager) -> None:
    actions = _oracle_actions(TASK)
    with Env("retail", manager=manager) as env:
        env.reset(TASK)
        for action in actions[:-2]:  # up to the write and the answer
            env.step(action)
        branch = env.fork()
        # the branch refuses the write: no change, a failing verdict; the source is untouched
        bad = branch.step(MessageAction("I cannot help with that."))
        assert bad.done and bad.reward == 0.0
        assert bad.observation.messages[: len(actions) + 1] != []
        good = _play(env, actions[-2:])
        assert good.done and good.reward == 1.0
        assert good.info["state_hash"] != bad.info["state_hash"]
        # each has its own conversation: the branch never saw the source's last steps
        assert len(bad.observation.messages) < len(good.observation.messages)


def test_snapshot_and_restore_give_the_same_end(manager: EpisodeManager) -> None:
    actions = _oracle_actions(TASK)
    with Env("retail", manager=manager) as env:
        env.reset(TASK)
        for action in actions[:3]:
            env.step(action)
        kept = env.snapshot()
        straight = _play(env, actions[3:])
        straight_calls = [c.tool for c in env.trajectory().calls]
    with Env("retail", manager=manager) as other:
        obs = other.restore(kept)
        assert [m.model_dump() for m in obs.messages] == [m.model_dump() for m in kept.messages]
        resumed = _play(other, actions[3:])
        resumed_calls = other.trajectory().calls
    assert resumed.reward == straight.reward == 1.0
    assert resumed.info["state_hash"] == straight.info["state_hash"]
    # the resumed record holds every call, the earlier ones matched to the server's record too
    assert [c.tool for c in resumed_calls] == straight_calls
    assert all(c.call_seq is not None for c in resumed_calls)


def test_bad_actions_get_precise_errors(manager: EpisodeManager) -> None:
    with Env("retail", manager=manager, max_steps=3) as env:
        with pytest.raises(EnvError, match=r"call reset\(task\) before step"):
            env.step(MessageAction("hi"))
        with pytest.raises(EnvError, match="unknown task 'nope'"):
            env.reset("nope")
        env.reset(TASK)
        bad_json = env.step(ToolCallAction("find_customer_by_email", '{"email": '))
        assert "not a valid JSON object" in bad_json.observation.new[-1].content
        action = {"role": "assistant", "tool_calls": [{"function": {"name": "nope", "arguments": {}}}]}
        unknown = env.step(action)
        assert action == {"role": "assistant", "tool_calls": [{"function": {"name": "nope", "arguments": {}}}]}
        assert unknown.observation.new[-1].role == "tool" and "nope" in unknown.observation.new[-1].content
        last = env.step(ToolCallAction("find_customer_by_email", {"email": "derek.smith@yahoo.com"}))
        assert last.done and last.info["termination"] == "step_limit" and last.reward == 0.0
        calls = env.trajectory().calls
        assert [c.ok for c in calls] == [False, False, True]
        with pytest.raises(EnvError, match="not a tool message"):
            from mcpsim.trajectories._records import Message

            env.reset(TASK)
            env.step(Message(role="tool", content="x", tool_call_id="c"))
    with pytest.raises(ValueError, match="reward must be 'strict' or 'partial'"):
        Env("retail", reward="best")  # type: ignore[arg-type]
        AsyncEnv("retail", reward="best")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_async_env_steps_from_other_tasks(manager: EpisodeManager) -> None:
    """reset in one task, steps in others, forks stepped concurrently: the environment holds its
    episodes open in a task of its own."""
    actions = _oracle_actions(LOOKUP)
    async with AsyncEnv("retail", manager=manager) as env:
        await env.reset(LOOKUP)
        results: dict[int, float] = {}
        forks = [await env.fork() for _ in range(3)]

        async def finish(i: int, fork: AsyncEnv) -> None:
            result = None
            for action in actions:
                result = await fork.step(action)
            assert result is not None and result.done
            results[i] = result.reward

        async with anyio.create_task_group() as tg:
            for i, fork in enumerate(forks):
                tg.start_soon(finish, i, fork)
        assert results == {0: 1.0, 1: 1.0, 2: 1.0}
        assert json.dumps(env.trajectory().model_dump(mode="json"))  # the parent is still live, ungraded


@pytest.mark.anyio
async def test_close_and_the_end_of_the_block_delete_the_episodes(manager: EpisodeManager) -> None:
    before = len(manager)
    async with AsyncEnv("retail", manager=manager) as env:
        await env.reset(LOOKUP)
        fork = await env.fork()
        assert len(manager) == before + 2
        await fork.close()
        assert len(manager) == before + 1
        await env.reset(LOOKUP)  # a new episode replaces the previous one
        assert len(manager) == before + 1
        await env.fork()  # left open: the block's end deletes it
    assert len(manager) == before


def test_the_end_says_why_and_gives_the_verdicts_parts(manager: EpisodeManager) -> None:
    with Env("retail", manager=manager) as env:
        env.reset(TASK)
        answered = _play(env, _oracle_actions(TASK))
    info = answered.info
    assert (info["ending"], info["truncated"], info["strict"], info["partial"]) == ("answered", False, 1.0, 1.0)
    assert info["failure"] is None and info["checks"]["7:confirmed"] == 1.0 and set(info["checks"].values()) == {1.0}
    assert len(info["checks"]) == len(info["verdict"]["checks"])  # one part per check, by numbered name
    with Env("retail", manager=manager, max_steps=1) as env:
        env.reset(TASK)
        cut = env.step(ToolCallAction("find_customer_by_email", {"email": "derek.smith@yahoo.com"}))
    assert cut.done and cut.info["ending"] == "step_limit" and cut.info["truncated"] is True
    assert cut.reward == 0.0 and cut.info["checks"]["1:row_exists"] == 0.0  # graded as it stood


class _BrokenUser:
    """A simulated user whose model endpoint fails for good (or times out)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def reply(self, messages: object, usage: object) -> str | None:
        raise self.error

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    ("error", "ending", "termination"),
    [(ModelError("the model endpoint failed 5 times"), "error", "model_error"), (TimeoutError(), "timeout", "timeout")],
)
def test_a_failed_user_ends_the_episode_ungraded_not_as_a_failure(
    manager: EpisodeManager, error: Exception, ending: str, termination: str
) -> None:
    with Env("retail", manager=manager, make_user=lambda task: _BrokenUser(error)) as env:
        env.reset(TASK)
        result = env.step(MessageAction("Shall I add the address?"))
        assert result.done and result.reward == 0.0 and env.verdict is None
        assert result.info["ending"] == ending and result.info["truncated"] is False
        assert result.info["termination"] == termination and "checks" not in result.info
        assert env.trajectory().termination == termination
        with pytest.raises(EnvError, match="the episode is over"):
            env.step(MessageAction("again"))
