"""Ledger tasks built in code, on the real ids of the seeded small world (seed 1), and playing a
task's steps through a verifier."""

from __future__ import annotations

from typing import Any

from mcpsim.engine._episode import Episode
from mcpsim.grading import Verdict, Verifier
from mcpsim.tasks import Step, Task, TaskFile, TaskSet
from mcpsim.tasks._scenario import oracle_answer, run_solution, task_episode

CANARY = "MCPSIM-CANARY ledger 5f0c2d8e9a7b4c1d"


def play(verifier: Verifier, task: Task, steps: list[Step]) -> tuple[Verdict, Episode]:
    """Run `steps` in a fresh episode of the task and grade them (with the oracle's answer)."""
    episode = task_episode(verifier.world, task, templates=verifier.templates)
    conversation = run_solution(episode, task, steps)
    return verifier.grade(episode, task, oracle_answer(task), conversation), episode


def gold_state_reason(verdict: Verdict) -> str:
    return next(c.reason for c in verdict.checks if c.type == "gold_state")


def ledger_tasks(world: Any, templates: Any) -> TaskSet:
    ep = Episode.create(world, seed=1, scale="small", templates=templates)
    a, b, c = [r["id"] for r in ep.tables()["account"]]
    total = sum(r["balance_cents"] for r in ep.tables()["account"])
    pay = {
        "type": "field_equals",
        "requirement": f"{b} holds 20.00 more",
        "table": "account",
        "where": {"id": b},
        "values": {"balance_cents": 0},
        "noop_passes": False,
    }  # the value is set from the setup below
    return TaskSet(
        world="ledger",
        files=[
            TaskFile.model_validate(
                {
                    "world": "ledger",
                    "canary": CANARY,
                    "volatile": ["*.opened_at"],
                    "tasks": [
                        {
                            "id": "pay-and-open",
                            "instruction": f"Look up my account {a}, send 20 dollars to {b}, "
                            "then open an account for Zoe.",
                            "seed": 1,
                            "scale": "small",
                            "setup": [{"update": "account", "where": {"id": b}, "set": {"balance_cents": 5000}}],
                            "gold": [
                                {"tool": "get_account", "args": {"account_id": a}},
                                {"tool": "transfer", "args": {"from_account": a, "to_account": b, "amount": 20}},
                                {"tool": "open_account", "args": {"owner": "Zoe"}},
                            ],
                            "answer": [{"number": 20}, "zoe"],
                            "rubric": [
                                {**pay, "values": {"balance_cents": 7000}},
                                {
                                    "type": "row_exists",
                                    "requirement": "An account for Zoe exists",
                                    "table": "account",
                                    "where": {"owner": "Zoe"},
                                    "noop_passes": False,
                                },
                                {
                                    "type": "gold_state",
                                    "requirement": "The final state equals the gold solution's",
                                    "noop_passes": False,
                                },
                                {"type": "allowed_changes", "requirement": "Nothing else changed", "noop_passes": True},
                                {
                                    "type": "call_order",
                                    "requirement": "The account was looked up before any write",
                                    "first": ["get_account"],
                                    "noop_passes": True,
                                },
                                {
                                    "type": "tool_not_called",
                                    "requirement": "No account was closed",
                                    "tools": ["close_*"],
                                    "noop_passes": True,
                                },
                                {
                                    "type": "tool_called",
                                    "requirement": "A transfer of 20 was made",
                                    "tool": "transfer",
                                    "args": {"amount": 20},
                                    "noop_passes": False,
                                },
                                {
                                    "type": "answer_facts",
                                    "requirement": "The agent confirms 20 dollars and Zoe's account",
                                    "noop_passes": False,
                                },
                                {
                                    "type": "custom",
                                    "requirement": "No money was created or destroyed",
                                    "name": "balances_conserved",
                                    "params": {
                                        "total_cents": total - ep.tables()["account"][1]["balance_cents"] + 5000
                                    },
                                    "noop_passes": True,
                                },
                            ],
                            "difficulty": "medium",
                            "split": "train",
                        },
                        {
                            "id": "refuse-overdraft",
                            "instruction": f"Send 1,000,000 dollars from {c} to {a}.",
                            "seed": 1,
                            "scale": "small",
                            "gold": [{"tool": "get_account", "args": {"account_id": c}}],
                            "answer": [{"any": ["insufficient", "not enough"]}],
                            "rubric": [
                                {"type": "gold_state", "requirement": "Nothing at all changed", "noop_passes": True},
                                {
                                    "type": "tool_not_called",
                                    "requirement": "No transfer was attempted",
                                    "tools": ["transfer"],
                                    "noop_passes": True,
                                },
                                {
                                    "type": "answer_facts",
                                    "requirement": "The agent says the funds are insufficient",
                                    "noop_passes": False,
                                },
                                {
                                    "type": "row_count",
                                    "requirement": "Still three accounts",
                                    "table": "account",
                                    "equals": 3,
                                    "noop_passes": True,
                                },
                                {
                                    "type": "column_sum",
                                    "requirement": "Total balance unchanged",
                                    "table": "account",
                                    "column": "balance_cents",
                                    "equals": total,
                                    "noop_passes": True,
                                },
                                {
                                    "type": "row_absent",
                                    "requirement": "No overdrawn account",
                                    "table": "account",
                                    "where": {"balance_cents": {"lt": 0}},
                                    "noop_passes": True,
                                },
                            ],
                            "difficulty": "easy",
                            "split": "test",
                        },
                        {
                            "id": "slow-check",
                            "instruction": "Nothing to do here at all.",
                            "seed": 1,
                            "scale": "small",
                            "gold": [],
                            "rubric": [
                                {
                                    "type": "custom",
                                    "requirement": "Takes its time",
                                    "name": "slow",
                                    "params": {"seconds": 2.0},
                                    "noop_passes": True,
                                }
                            ],
                            "difficulty": "easy",
                            "split": "dev",
                        },
                        {
                            "id": "heavy-check",
                            "instruction": "Nothing to do here, again.",
                            "seed": 1,
                            "scale": "small",
                            "gold": [],
                            "rubric": [
                                {
                                    "type": "custom",
                                    "requirement": "Counts to two million in SQL",
                                    "name": "heavy",
                                    "params": {"rows": 2_000_000},
                                    "noop_passes": True,
                                }
                            ],
                            "difficulty": "easy",
                            "split": "dev",
                        },
                        {
                            "id": "broken-check",
                            "instruction": "Nothing to do here either.",
                            "seed": 1,
                            "scale": "small",
                            "gold": [],
                            "rubric": [
                                {
                                    "type": "custom",
                                    "requirement": "The check crashes on purpose",
                                    "name": "broken",
                                    "noop_passes": True,
                                }
                            ],
                            "difficulty": "easy",
                            "split": "dev",
                        },
                    ],
                }
            )
        ],
    )
