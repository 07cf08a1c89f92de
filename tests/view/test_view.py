"""The viewer's JSON, on real runs (`mcpsim demo`), a synthetic 10,000-episode run made of real
episodes, and a live server: `mcpsim view` as a real process, the pages' API over real HTTP
(uvicorn on 127.0.0.1). The pages themselves are driven in a browser by test_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.grading._scores import pass_at_1, pass_hat_k
from mcpsim.runner._summary import summarize as run_summary
from mcpsim.serve._app import serve_in_thread
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._journal import read_trajectories
from mcpsim.view._pages import run_viewer
from mcpsim.view._runs import SHOWN_K, RunFile, episode_key, failure_kind, shown_pass_hat_k
from mcpsim.world._registry import load_world
from tests.conftest import CLEAN_ENV

_DEMO: list[tuple[Path, Path, str]] = []  # test_browser.py uses the fixture too: the demo runs once


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """`mcpsim demo` as a user runs it: the oracle's and the do-nothing agent's runs, and what it printed."""
    if not _DEMO:
        out = tmp_path_factory.mktemp("demo") / "runs" / "demo"
        result = CliRunner().invoke(main, ["demo", "--out", str(out), "--no-cache"])
        assert result.exit_code == 0, result.output
        _DEMO.append((out / "oracle", out / "noop", result.output))
    return _DEMO[0]


@pytest.fixture(scope="module")
def viewer(demo_runs: tuple[Path, Path, str]) -> Iterator[str]:
    oracle, noop, _ = demo_runs
    with serve_in_thread(run_viewer([RunFile.open(oracle), RunFile.open(noop)])) as url:
        yield url


def test_runs_viewed_together_read_each_worlds_task_files_once(demo_runs):
    oracle, noop, _ = demo_runs
    together = RunFile.open_all([oracle, noop], ["oracle run", "noop run"])
    assert [run.name for run in together] == ["oracle run", "noop run"]
    assert together[0].labels is together[1].labels
    assert RunFile.open(oracle).labels is not RunFile.open(noop).labels  # opened apart, each reads its own


def get(url: str, path: str, status: int = 200, **headers: str) -> dict:
    response = httpx.get(url + path, headers=headers, timeout=60)
    assert response.status_code == status, response.text
    return response.json()


def test_the_demo_ends_by_pointing_at_the_viewer(demo_runs):
    oracle, noop, output = demo_runs
    assert f"mcpsim view {oracle} {noop}" in output


def test_run_figures_agree_with_the_runners_summary(viewer, demo_runs):
    for run, path in enumerate(demo_runs[:2]):
        expected = json.loads((path / "summary.json").read_text())
        s = get(viewer, f"/api/runs/{run}/summary")["summary"]
        assert s["pass_at_1"] == expected["pass_at_1"]
        assert {str(k): v for k, v in s["pass_hat_k"].items()} == expected["pass_hat_k"]
        assert (s["mean_reward"], s["mean_partial"]) == (expected["mean_reward"], expected["mean_partial"])
        assert (s["calls"], s["errors"], s["tokens"]) == (
            expected["tool_calls"],
            expected["tool_errors"],
            expected["tokens"],
        )
        assert s["episodes"] == expected["episodes"] == sum(b["count"] for b in s["partial_histogram"])
        assert sum(b["count"] for b in s["calls_histogram"]) == s["episodes"]
    oracle = get(viewer, "/api/runs/0/summary")["summary"]
    # the demo's fault task: cancel_order hit by a transient fault, then retried
    cancel = next(t for t in oracle["tools"] if t["tool"] == "cancel_order")
    assert cancel["errors"] == cancel["faults"] == oracle["faults"] == 1
    assert cancel["error_rate"] == round(1 / cancel["calls"], 6)
    assert oracle["tools"][0]["tool"] == "cancel_order"  # the highest error rate first


def test_the_episode_table_filters_sorts_and_pages_on_the_server(viewer, demo_runs):
    noop = {t.task_id: t for t in read_trajectories(demo_runs[1] / "trajectories.jsonl")}
    facets = get(viewer, "/api/runs/1/summary")["facets"]
    kinds = {f["value"]: f["count"] for f in facets["failure"]}
    assert (
        kinds == Counter(failure_kind(t.status, t.reward, t.termination, t.verdict) for t in noop.values())
        and "" not in kinds
    )
    kind = next(iter(kinds))
    page = get(viewer, f"/api/runs/1/episodes?failure={kind}")
    assert page["total"] == kinds[kind] and {r["failure"] for r in page["rows"]} == {kind}
    summary = get(viewer, f"/api/runs/1/summary?failure={kind}")["summary"]
    assert summary["episodes"] == kinds[kind]  # the figures follow the filters
    assert get(viewer, "/api/runs/1/episodes?passed=yes")["total"] == 0
    assert "fault" in {t["value"] for t in facets["tag"]}  # tags and splits come from the task files
    tagged = get(viewer, "/api/runs/0/episodes?tag=fault")["rows"]
    assert [r["task_id"] for r in tagged] == ["fault-cancel-transient-retry"]
    by_calls = get(viewer, "/api/runs/0/episodes?sort=calls&order=desc&limit=3")
    assert by_calls["total"] == 8 and len(by_calls["rows"]) == 3
    calls = [r["calls"] for r in by_calls["rows"]]
    assert calls == sorted(calls, reverse=True) and calls[0] == max(
        len(t.calls) for t in read_trajectories(demo_runs[0] / "trajectories.jsonl")
    )
    second = get(viewer, "/api/runs/0/episodes?sort=calls&order=desc&limit=3&offset=3")["rows"]
    assert not {r["eid"] for r in second} & {r["eid"] for r in by_calls["rows"]}
    for query, message in [
        ("sort=nothing", "sort must be one of"),
        ("order=up", "order must be asc or desc"),
        ("limit=0", "limit must be an integer from 1 to 500"),
        ("limit=501", "limit must be an integer from 1 to 500"),
        ("offset=-1", "offset must be an integer"),
        ("passed=maybe", "passed must be yes or no"),
    ]:
        assert message in get(viewer, f"/api/runs/0/episodes?{query}", 422)["error"]
    assert "no run '7'" in get(viewer, "/api/runs/7/episodes", 404)["error"]
    assert "has no episode 'nope@0'" in get(viewer, "/api/runs/0/episodes/nope@0", 404)["error"]


def test_an_episode_is_its_trajectory_with_its_labels(viewer, demo_runs):
    splits = {task.id: task.split for task in load_tasks("retail").tasks}
    for t in read_trajectories(demo_runs[0] / "trajectories.jsonl"):
        data = get(viewer, f"/api/runs/0/episodes/{t.task_id}@{t.trial}")
        view = data.pop("view")
        assert data == t.model_dump(mode="json")
        assert (
            view["eid"] == episode_key(t.run_id, t.episode_id, t.task_id, t.trial) == f"{t.task_id}@{t.trial}"
            and view["split"] == splits[t.task_id]
            and view["tags"]
        )


def test_two_runs_compared_task_by_task(viewer):
    data = get(viewer, "/api/compare/0/1?limit=3")
    assert data["counts"] == {"fixed": 0, "broke": 8, "only_a": 0, "only_b": 0, "matched": 8}
    assert data["total"] == 8 and len(data["rows"]) == 3
    deltas = [abs(r["partial_delta"]) for r in data["rows"]]
    assert deltas == sorted(deltas, reverse=True)  # the biggest change first
    row = data["rows"][0]
    assert row["flipped"] == "broke" and row["reward_delta"] == -1.0
    assert row["partial_delta"] == round(row["b"]["partial_reward"] - row["a"]["partial_reward"], 6)
    back = get(viewer, "/api/compare/1/0?only=flipped")
    assert back["counts"]["fixed"] == 8 and {r["flipped"] for r in back["rows"]} == {"fixed"}
    assert get(viewer, "/api/compare/0/1?only=changed&q=gift")["total"] == 1
    assert "only must be" in get(viewer, "/api/compare/0/1?only=some", 422)["error"]


def test_the_page_and_its_assets_are_served_from_the_package(viewer):
    page = httpx.get(viewer + "/", timeout=30)
    assert page.status_code == 200 and "static/viewer.js" in page.text
    for asset, kind in (("viewer.js", "javascript"), ("viewer.css", "text/css")):
        response = httpx.get(f"{viewer}/static/{asset}", timeout=30)
        assert response.status_code == 200 and kind in response.headers["content-type"]
    # offline: nothing is loaded from another origin
    assert not re.search(r"(src|href)=\"https?://", page.text)
    assert "http://" not in httpx.get(viewer + "/static/viewer.js").text.replace("http://www.w3.org/2000/svg", "")


# -- a large run ---------------------------------------------------------------------------------

EPISODES = 10_000


@pytest.fixture(scope="module")
def large_run(demo_runs, tmp_path_factory) -> tuple[Path, list[dict]]:
    """10,000 episodes made of the demo's 16 real lines: 2,500 tasks (each one of the 8 real
    tasks under a new id) of 4 trials, each trial the oracle's line or the do-nothing agent's,
    so a task passes 0 to 4 times. Lines are copied as written, only their task id and trial
    replaced (both come before the messages)."""
    lines: dict[tuple[str, str], str] = {}
    calls: dict[tuple[str, str], int] = {}
    for run in demo_runs[:2]:
        for line in (run / "trajectories.jsonl").read_text().splitlines():
            head = json.loads(line)
            lines[(head["agent"], head["task_id"])] = line
            calls[(head["agent"], head["task_id"])] = len(head["calls"])
    tasks = sorted({task for _, task in lines})
    path = tmp_path_factory.mktemp("large") / "trajectories.jsonl"
    expected = []
    with path.open("w") as f:
        for n in range(EPISODES):
            number, trial = divmod(n, 4)
            task = tasks[number % len(tasks)]
            agent = "oracle" if (number >> trial) & 1 else "noop"
            task_id = f"{task}-{number:04d}"
            line = lines[(agent, task)].replace(
                f'"task_id":"{task}","trial":0,', f'"task_id":"{task_id}","trial":{trial},', 1
            )
            assert task_id in line
            expected.append(
                {"task_id": task_id, "trial": trial, "reward": float(agent == "oracle"), "calls": calls[(agent, task)]}
            )
            f.write(line + "\n")
    return path, expected


def test_a_run_of_10000_episodes_is_filtered_and_paged_on_the_server(large_run):
    path, expected = large_run
    run = RunFile.open(path, "large")
    with serve_in_thread(run_viewer([run])) as url:
        first = get(url, "/api/runs/0/episodes?limit=100")
        assert first["total"] == EPISODES and len(first["rows"]) == 100
        last = get(url, f"/api/runs/0/episodes?limit=100&offset={EPISODES - 30}")
        assert len(last["rows"]) == 30
        ordered = sorted(expected, key=lambda e: (e["task_id"], e["trial"]))
        assert [(r["task_id"], r["trial"]) for r in last["rows"]] == [(e["task_id"], e["trial"]) for e in ordered[-30:]]
        passed = sum(1 for e in expected if e["reward"] == 1.0)
        assert get(url, "/api/runs/0/episodes?passed=yes&limit=1")["total"] == passed
        by_task: dict[str, list[float]] = {}
        for e in expected:
            by_task.setdefault(e["task_id"], []).append(e["reward"])
        summary = get(url, "/api/runs/0/summary")["summary"]
        assert summary["episodes"] == EPISODES and summary["tasks"] == EPISODES // 4
        assert summary["pass_at_1"] == round(sum(sum(r) / 4 for r in by_task.values()) / len(by_task), 6)
        assert summary["pass_hat_k"]["4"] == round(sum(all(r) for r in by_task.values()) / len(by_task), 6)
        most = get(url, "/api/runs/0/episodes?sort=calls&order=desc&limit=1")["rows"][0]
        assert most["calls"] == max(e["calls"] for e in expected)
        one = get(url, "/api/runs/0/episodes?q=-0042&limit=10")
        assert one["total"] == 4 and {r["task_id"].endswith("-0042") for r in one["rows"]} == {True}
        episode = get(url, f"/api/runs/0/episodes/{one['rows'][0]['eid']}")
        assert episode["task_id"] == one["rows"][0]["task_id"]


def test_a_growing_run_is_read_on_and_its_latest_line_wins(demo_runs, tmp_path):
    lines = (demo_runs[0] / "trajectories.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "trajectories.jsonl"
    path.write_text("".join(lines[:3]))
    run = RunFile.open(tmp_path)
    assert len(run.rows()) == 3
    with path.open("a") as f:  # a run in progress: one more episode, and half of the next line
        f.write(lines[3] + lines[4][:100])
    assert len(run.rows()) == 4
    retried = json.loads(lines[0])
    retried["reward"], retried["verdict"]["passed"] = 0.0, False
    with path.open("a") as f:
        f.write(lines[4][100:] + json.dumps(retried) + "\n")
    rows = {r.eid: r for r in run.rows()}
    assert len(rows) == 5 and rows[f"{retried['task_id']}@0"].reward == 0.0
    assert run.episode(f"{retried['task_id']}@0").reward == 0.0
    # the runner's own summary agrees with the viewer's latest-line rule
    assert run_summary(read_trajectories(path)).episodes == len(rows)


# -- the command -----------------------------------------------------------------------------------


@pytest.mark.system
def test_mcpsim_view_serves_runs_on_loopback_until_stopped(demo_runs, tmp_path):
    oracle, noop, _ = demo_runs
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpsim", "view", str(oracle), str(noop), "--no-open"],
        env=CLEAN_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the runs are indexed, before serving
        match = re.search(r"2 runs, 16 episodes at (http://127\.0\.0\.1:\d+/)", line)
        assert match, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = match[1].rstrip("/")
        info = None
        for _ in range(600):  # polled, bounded to about 60 s
            try:
                info = httpx.get(url + "/api/info", timeout=2).json()
                break
            except httpx.TransportError:
                assert proc.poll() is None
                time.sleep(0.1)
        assert info is not None and [r["name"] for r in info["runs"]] == ["oracle", "noop"]
        rebinding = httpx.get(url + "/api/info", headers={"Host": "evil.example"}, timeout=10)
        assert rebinding.status_code == 403 and "DNS-rebinding" in rebinding.json()["error"]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # and closes the pipes


def test_mcpsim_view_refuses_what_is_not_a_run(tmp_path):
    result = CliRunner().invoke(main, ["view", str(tmp_path), "--no-open"])
    assert result.exit_code == 1 and "holds no trajectories.jsonl" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a trajectory"}\n')
    result = CliRunner().invoke(main, ["view", str(bad), "--no-open"])
    assert result.exit_code == 1 and f"{bad}:1 is not a trajectory" in result.output
    result = CliRunner().invoke(main, ["view"])
    assert result.exit_code == 2 and "Missing argument" in result.output


def test_two_runs_of_the_same_folder_name_get_names_apart(demo_runs, tmp_path):
    from mcpsim.cli._viewing import _names

    a, b = tmp_path / "x" / "oracle", tmp_path / "y" / "oracle"
    a.mkdir(parents=True), b.mkdir(parents=True)
    assert _names([a, b]) == ["x/oracle", "y/oracle"]
    assert _names([a, demo_runs[1]]) == ["oracle", "noop"]


# -- live episodes ---------------------------------------------------------------------------------


def customer_of(episode) -> dict:
    return episode.tables(["customers"], 1)["customers"][0]


def new_address(customer_id: str) -> dict:
    return {
        "customer_id": customer_id,
        "line1": "88 Harbor View Rd",
        "city": "Traverse City",
        "state": "MI",
        "zip": "49684",
    }


def test_live_pages_need_the_token_and_follow_the_episode(serve_http):
    retail = load_world("retail")
    server = serve_http([retail], token="tok")
    auth = {"Authorization": "Bearer tok"}
    created = httpx.post(server.url + "/episodes", json={"world": "retail", "scale": "small"}, headers=auth).json()
    # the page itself is public (it holds no data); everything it reads needs the token
    assert httpx.get(server.url + "/ui", follow_redirects=True).status_code == 200
    for path in ("/ui/api/info", "/ui/api/live", f"/ui/api/live/{created['id']}"):
        refused = httpx.get(server.url + path)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert httpx.get(server.url + path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert get(server.url, "/ui/api/info", **auth)["mode"] == "live"
    listed = get(server.url, "/ui/api/live", **auth)["episodes"]
    assert [(e["id"], e["calls"], e["ended"]) for e in listed] == [(created["id"], 0, False)]
    first = get(server.url, f"/ui/api/live/{created['id']}", **auth)
    assert first["calls"] == [] and first["episode_id"] == created["id"]
    again = get(server.url, f"/ui/api/live/{created['id']}?since={first['version']}", **auth)
    assert again == {"unchanged": True, "version": first["version"]}
    episode = server.manager.get(created["id"])
    customer = customer_of(episode)
    episode.call("add_customer_address", new_address(customer["id"]))
    episode.call("add_customer_address", {"customer_id": customer["id"]})  # refused: arguments missing
    news = get(server.url, f"/ui/api/live/{created['id']}?since={first['version']}", **auth)
    assert news["version"] != first["version"] and [c["ok"] for c in news["calls"]] == [True, False]
    (change,) = news["calls"][0]["changes"]
    assert (change["table"], change["op"], change["after"]["city"]) == ("addresses", "insert", "Traverse City")
    assert get(server.url, "/ui/api/live", **auth)["episodes"][0]["calls"] == 2
    assert "episode nope does not exist" in get(server.url, "/ui/api/live/nope", 404, **auth)["error"]
    # the Host check of every route covers the pages too
    assert httpx.get(server.url + "/ui/", headers={"Host": "evil.example"}).status_code == 403


def test_live_verdicts_are_shown_in_the_servers_verdict_detail(serve_http):
    """An open server (--no-auth) needs no token for the pages, and tells them what it tells any
    caller of a verdict: which checks passed, never what they expected."""
    server = serve_http([load_world("retail")], tasks={"retail": load_tasks("retail")})
    created = httpx.post(server.url + "/episodes", json={"world": "retail", "task": "cancel-pending-order"}).json()
    assert httpx.post(f"{server.url}/episodes/{created['id']}/verify", json={"answer": "Done."}).status_code == 200
    episode = get(server.url, f"/ui/api/live/{created['id']}")
    verdict = episode["verdict"]
    assert verdict["detail"] == "summary" and verdict["passed"] is False
    assert "requirement" not in json.dumps(verdict) and "diff" not in verdict
    first_failed = next(c["check"] for c in verdict["checks"] if not c["passed"])
    assert episode["view"]["failure"] == first_failed.partition(":")[2] and episode["live"]["ended"] is True
    (listed,) = get(server.url, "/ui/api/live")["episodes"]
    assert (listed["ended"], listed["passed"], listed["reward"]) == (True, False, 0.0)


def test_pass_hat_k_is_the_one_in_grading_metrics_for_the_runner_and_the_viewer():
    outcomes = [(3, 4), (4, 4), (0, 4)]
    # pass^2: (C(3,2)/C(4,2) + 1 + 0) / 3 = (0.5 + 1) / 3
    assert pass_hat_k(outcomes) == {1: round(7 / 12, 6), 2: 0.5, 3: round(1.25 / 3, 6), 4: round(1 / 3, 6)}
    assert pass_at_1(outcomes) == round(7 / 12, 6) and pass_at_1([]) == 0.0 and pass_hat_k([]) == {}
    assert pass_hat_k(outcomes, [4, 1]) == {1: round(7 / 12, 6), 4: round(1 / 3, 6)}
    # the viewer shows k up to SHOWN_K and the largest k every task allows
    many = [(9, 12), (12, 12)]
    assert list(shown_pass_hat_k(many)) == [*range(1, SHOWN_K + 1), 12]
    assert shown_pass_hat_k(many)[12] == pass_hat_k(many, [12])[12] == 0.5
    with pytest.raises(ValueError, match="1 <= k <= 4"):
        pass_hat_k(outcomes, [5])
    with pytest.raises(ValueError, match="0 <= passes <= trials"):
        pass_hat_k([(5, 4)])
