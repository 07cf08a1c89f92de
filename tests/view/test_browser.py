"""The viewer in a real browser: Debian's Chromium, headless, driven by Playwright for Python
(never `playwright install`: the browser is the system's). Each test clicks through the pages a
person would, checks what they show against the trajectories, and writes a screenshot of each
page to a folder under the test's tmp path, or to $MCPSIM_VIEW_SCREENSHOTS if set (docs/viewer.md
shows how docs/images/ is refreshed from them)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpsim.serve._app import serve_in_thread
from mcpsim.trajectories._journal import read_trajectories
from mcpsim.view._pages import run_viewer
from mcpsim.view._runs import RunFile
from mcpsim.world._registry import load_world
from tests.view import test_view
from tests.view.test_view import customer_of, new_address

demo_runs = test_view.demo_runs  # the same session fixture: `mcpsim demo` runs once
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 60_000  # generous: the machine may be loaded

# CI installs Chromium (.ci/run); elsewhere a machine without it skips these tests.
pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="Debian's chromium is not installed (/usr/bin/chromium)",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("MCPSIM_VIEW_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Page:
    """A browser tab that fails the test on any script error or failed request (but those
    whose message holds one of `expected`)."""

    def __init__(self, browser: Any, expected: tuple[str, ...] = ()) -> None:
        self.expected = expected
        self.page = browser.new_page(viewport={"width": 1280, "height": 860})
        self.page.set_default_timeout(WAIT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(f"script error: {e}"))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def __enter__(self) -> Any:
        return self.page

    def __exit__(self, *exc: object) -> None:
        self.page.close()
        if exc[0] is None:
            assert [e for e in self.errors if not any(x in e for x in self.expected)] == []


def shown(value: Any) -> str:
    """A value as the page writes it in a diff cell (`show` in viewer.js: JSON, strings bare)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, separators=(",", ":"))


def key_text(key: str) -> str:
    parsed = json.loads(key)
    return ", ".join(str(k) for k in parsed) if isinstance(parsed, list) else str(parsed)


def test_each_episode_of_a_run_page_is_a_link_to_its_page(browser, demo_runs):
    """Issue 35: an episode in the run's table is an <a href> to the episode's page, so it opens
    in a new tab (Ctrl+click leaves the run page where it is) and its address can be copied."""
    from urllib.parse import quote

    oracle, _, _ = demo_runs
    with serve_in_thread(run_viewer([RunFile.open(oracle)])) as url, Page(browser) as page:
        page.goto(url + "/#/runs/0")
        page.wait_for_selector("#episodes tr[data-eid]")
        rows = page.locator("#episodes tr[data-eid]")
        links = page.locator("#episodes tr[data-eid] td a.episode-link[href]")
        assert links.count() == rows.count() == 8
        eids = [rows.nth(i).get_attribute("data-eid") or "" for i in range(rows.count())]
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert hrefs == [f"#/runs/0/episodes/{quote(eid, safe='-_.!~*()')}" for eid in eids]

        with page.context.expect_page() as opened:
            links.nth(0).click(modifiers=["Control"])
        tab = opened.value
        tab.wait_for_selector("#checks", timeout=WAIT_MS)
        assert tab.url == f"{url}/{hrefs[0]}"
        tab.close()
        assert page.url == f"{url}/#/runs/0"  # the run page stays where it was

    with Page(browser) as copied:  # the address, pasted into a fresh tab
        with serve_in_thread(run_viewer([RunFile.open(oracle)])) as again:
            copied.goto(f"{again}/{hrefs[1]}")
            copied.wait_for_selector("#checks")
            assert eids[1].rsplit("@", 1)[0] in copied.locator("h1").first.inner_text()


def test_a_run_an_episode_a_call_its_diff_filters_and_a_comparison(browser, demo_runs, shots):
    oracle, noop, _ = demo_runs
    fault_task = next(
        t for t in read_trajectories(oracle / "trajectories.jsonl") if t.task_id == "fault-cancel-transient-retry"
    )
    writing = next(c for c in fault_task.calls if c.changes)
    with serve_in_thread(run_viewer([RunFile.open(oracle), RunFile.open(noop)])) as url, Page(browser) as page:
        page.goto(url + "/")
        page.wait_for_selector("text=Compare two runs")
        page.screenshot(path=shots / "runs.png")

        # the run page: figures, plots, the table
        page.click("a:text-is('oracle')")
        page.wait_for_selector("#stats")
        assert page.locator("[data-stat=pass_at_1] .v").inner_text() == "1"
        assert page.locator("#episodes tr[data-eid]").count() == 8
        assert page.locator("svg[aria-label='error rate per tool'] rect[data-tool=cancel_order]").count() == 1
        page.screenshot(path=shots / "run.png")

        # an episode, then one call by its link; the call's diff is the trajectory's
        page.click("tr[data-eid='fault-cancel-transient-retry@0']")
        page.wait_for_selector("#checks")
        assert page.locator("#checks tr[data-passed]").count() == len(fault_task.verdict["checks"])
        faulted = next(c for c in fault_task.calls if c.fault)
        assert page.locator(f"#call-{faulted.index} [data-fault=transient]").count() == 1
        page.click(f"#call-{writing.index} a.permalink")
        page.wait_for_function(f"location.hash.endsWith('/calls/{writing.index}')")
        page.wait_for_selector(f"#call-{writing.index}.selected")  # marked once the page reads the new hash
        call = page.locator(f"#call-{writing.index}")
        assert "selected" in (call.get_attribute("class") or "")
        for change in writing.changes:
            if change.table == "_faults":
                continue
            box = call.locator(f".change[data-table='{change.table}'][data-key='{key_text(change.key)}']")
            assert box.get_attribute("data-op") == change.op
            before, after = change.before or {}, change.after or {}
            if change.op == "update":
                changed = [c for c in after if before.get(c) != after.get(c)]
                assert changed and box.locator("> table tr[data-col]").count() == len(changed)
                for column in changed:
                    assert box.locator(f"tr[data-col='{column}'] td.before").inner_text() == shown(before[column])
                    assert box.locator(f"tr[data-col='{column}'] td.after").inner_text() == shown(after[column])
            else:
                row = after if change.op == "insert" else before
                for column, value in row.items():
                    assert box.locator(f"tr[data-col='{column}'] td").nth(1).inner_text() == shown(value)
        page.screenshot(path=shots / "episode.png")
        # the deep link opens the same call in a fresh tab
        with Page(browser) as other:
            other.goto(page.url)
            other.wait_for_selector(f"#call-{writing.index}.selected")

        # filtering and sorting the do-nothing run, on the server
        page.goto(url + "/#/runs/1")
        page.wait_for_selector("#episodes")
        page.select_option("select[name=failure]", "field_equals")
        page.wait_for_function("location.hash.includes('failure=field_equals')")
        page.wait_for_selector("#range")
        expected = httpx.get(url + "/api/runs/1/episodes?failure=field_equals").json()["total"]
        page.wait_for_function(f"document.querySelectorAll('#episodes tr[data-eid]').length === {expected}")
        assert page.locator("[data-stat=episodes] .v").inner_text() == f"0 / {expected} passed"
        page.click("th[data-sort=partial]")
        page.wait_for_function("location.hash.includes('sort=partial')")
        page.wait_for_selector("th.sorted-asc[data-sort=partial]")
        partials = [float(t) for t in page.locator("#episodes tr[data-eid] td:nth-child(7)").all_inner_texts()]
        assert partials == sorted(partials) and len(partials) == expected
        page.screenshot(path=shots / "filtered.png")

        # two runs compared, then one task side by side
        page.goto(url + "/#/")
        page.wait_for_selector("#compare")
        page.click("#compare")
        page.wait_for_selector("#comparison")
        assert page.locator("[data-stat=broke] .v").inner_text() == "8"
        page.select_option("select[name=only]", "flipped")
        page.wait_for_function("location.hash.includes('only=flipped')")
        page.wait_for_selector("#comparison tr[data-flipped=broke]")
        page.screenshot(path=shots / "compare.png")
        page.click("#comparison tr[data-task='cancel-pending-order']")
        page.wait_for_selector("#side-by-side")
        page.wait_for_selector("#side-by-side .pane[data-run='1'] #outcome")
        outcomes = page.locator("#side-by-side #outcome").all_inner_texts()
        assert outcomes == ["passed", "failed"]
        page.screenshot(path=shots / "side-by-side.png")


async def _act(mcp_url: str, customer_id: str) -> None:
    """An agent's calls over MCP (the SDK's own client on the episode's URL)."""
    from mcp import Client

    with anyio.fail_after(60):
        async with Client(mcp_url) as client:
            await client.call_tool("add_customer_address", new_address(customer_id))


def test_a_live_episode_updates_as_an_agent_acts(browser, serve_http, shots):
    server = serve_http([load_world("retail")], token="tok")
    auth = {"Authorization": "Bearer tok"}
    created = httpx.post(server.url + "/episodes", json={"world": "retail", "scale": "small"}, headers=auth).json()
    episode_id = created["id"]
    with Page(browser, expected=("401 (Unauthorized)",)) as page:
        # without the token: the page asks for it
        page.goto(server.url + "/ui/")
        page.wait_for_selector("form.token")
        page.fill("form.token input", "tok")
        page.click("form.token button")
        page.wait_for_selector(f"#live tr[data-id='{episode_id}']")
    with Page(browser) as page:
        # a link with the token: kept for the tab, dropped from the address bar
        page.goto(server.url + "/ui/#token=tok")
        page.wait_for_selector(f"#live tr[data-id='{episode_id}']")
        assert "tok" not in page.url
        page.screenshot(path=shots / "live-list.png")
        page.click(f"#live tr[data-id='{episode_id}']")
        page.wait_for_selector("#outcome:text-is('live')")
        assert page.locator(".call").count() == 0
        customer = customer_of(server.manager.get(episode_id))
        # in a thread of its own: Playwright's sync API holds this thread's event loop
        with ThreadPoolExecutor(1) as pool:
            pool.submit(anyio.run, _act, created["mcp_url"], customer["id"]).result(timeout=120)
        insert = page.locator("#call-0 .change[data-op=insert][data-table=addresses]")
        insert.wait_for()
        assert insert.locator("tr[data-col=city] td.after").inner_text() == "Traverse City"
        assert httpx.post(f"{server.url}/episodes/{episode_id}/end", headers=auth).status_code == 200
        page.wait_for_selector("#outcome:text-is('ended')")
        assert page.locator(".call").count() == 1
        page.screenshot(path=shots / "live-episode.png")


def test_text_from_a_run_is_shown_as_text_never_run_as_html(browser, demo_runs, tmp_path):
    """A recording (`serve --record`: no run id, episodes named by their id) whose messages and
    arguments hold markup: the page shows it verbatim and runs none of it."""
    line = json.loads((demo_runs[0] / "trajectories.jsonl").read_text().splitlines()[0])
    markup = '<img src=x onerror="window.pwned=1"><script>window.pwned=1</script>'
    line["run_id"] = None
    line["messages"][1]["content"] = markup
    line["calls"][0]["arguments"] = {"email": markup}
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(line) + "\n")
    eid = line["episode_id"]
    with serve_in_thread(run_viewer([RunFile.open(tmp_path)])) as url, Page(browser) as page:
        page.goto(f"{url}/#/runs/0/episodes/{eid}/calls/0")
        page.wait_for_selector("#call-0.selected")
        assert page.locator(".msg.user .text").first.inner_text() == markup
        assert json.dumps(markup) in page.locator("#call-0 pre.arguments").inner_text()  # as JSON
        assert page.locator("main img, main script").count() == 0
        assert page.evaluate("window.pwned") is None
