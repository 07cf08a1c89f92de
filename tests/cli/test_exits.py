"""Exit codes and messages of the `mcpsim` commands that a script can trust (in-process, click's
CliRunner; the model is the real HTTP fake, tests/support/fake_openai.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from tests.support.fake_openai import FakeModel, fake_openai

TASK = "cancel-pending-order"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "retail", "--tasks", TASK, *args], env={"OPENAI_API_KEY": "sk-test"})
    return result.exit_code, result.output


def test_run_exits_3_past_max_failures_and_0_within(tmp_path: Path) -> None:
    refusing = FakeModel(then=lambda body: {"status": 400})  # model_error at once (a 4xx is not retried)
    with fake_openai(refusing) as url:
        agent = ["--agent", "openai:m", "--base-url", url]
        code, output = _run(*agent, "--out", str(tmp_path / "strict"))
        assert code == 3, output
        assert "1 of 1 episodes of this run ended in infrastructure failures (1 model_error)" in output
        assert "more than --max-failures 0" in output and f"{TASK}#0 model_error:" in output
        code, output = _run(*agent, "--out", str(tmp_path / "tolerant"), "--max-failures", "1")
        assert code == 0, output
    line = json.loads((tmp_path / "tolerant" / "trajectories.jsonl").read_text().splitlines()[0])
    assert line["termination"] == "model_error"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    code, output = _run("--agent", "noop", "--max-failures", "-1", "--out", str(tmp_path))
    assert code == 2 and "--max-failures" in output


def test_an_unknown_world_is_named_with_the_known_ones() -> None:
    for command in (["tasks", "retial"], ["run", "retial"], ["tools", "retial"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2
        assert "unknown world 'retial' (known: airline, bank, research, retail, workspace" in result.output, (
            result.output
        )


@pytest.mark.system
def test_serve_refuses_a_port_in_use_before_claiming_to_serve() -> None:
    import socket
    import subprocess
    import sys

    from mcpsim.testing._driver import clean_env

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "mcpsim", "serve", "retail", "--http", "--port", str(port), "--no-auth"],
            capture_output=True,
            text=True,
            timeout=300,
            env=clean_env(),
        )
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in out.stderr
    assert "serving" not in out.stderr


def test_sampling_settings_and_extra_fields_reach_the_model(tmp_path: Path) -> None:
    model = FakeModel()  # answers at once: one request per episode
    extra = '{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}, "max_tokens": 1}'
    with fake_openai(model) as url:
        code, output = _run(
            *("--agent", "openai:m", "--base-url", url, "--out", str(tmp_path)),
            *("--temperature", "0.3", "--max-tokens", "256", "--extra-body", extra),
        )
    assert code == 0, output
    body = model.requests[0]
    assert body["temperature"] == 0.3 and body["top_k"] == 20
    assert body["max_tokens"] == 256  # the option wins over the same field in --extra-body
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    code, output = _run("--agent", "noop", "--out", str(tmp_path / "x"), "--extra-body", "[1]")
    assert code == 2 and "a JSON object is needed" in output


def test_failed_tasks_are_results_and_the_summary_fits_80_columns_or_prints_json(tmp_path: Path) -> None:
    code, output = _run("--agent", "noop", "--out", str(tmp_path / "table"))  # CliRunner: a pipe, 80 columns
    assert code == 0, output  # the task failed; the run did not
    assert all(len(line) <= 80 for line in output.splitlines()), output
    assert "…" not in output and "0.00" in output
    code, output = _run("--agent", "noop", "--out", str(tmp_path / "json"), "--json")
    assert code == 0 and json.loads(output)["episodes"] == 1
