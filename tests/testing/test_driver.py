"""mcpsim.testing._driver, the driver and fixtures world authors use: each helper fails loudly for the
reason it names, and a simulator bug never passes a test silently."""

from __future__ import annotations

import pytest

from mcpsim.testing._driver import WorldDriver, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def drv(ledger, templates):
    with WorldDriver(ledger, seed=1, templates=templates) as d:
        yield d


def test_ok_returns_the_value_and_names_the_error_when_a_call_fails(drv):
    opened = drv.ok("open_account", owner="Ada")
    assert drv.ok("get_account", account_id=opened.id).owner == "Ada"
    with pytest.raises(AssertionError, match="get_account failed: Account acc_nope not found"):
        drv.ok("get_account", account_id="acc_nope")


def test_fails_demands_a_business_error_with_the_message_and_no_change(drv):
    result = drv.fails("get_account", "not found", account_id="acc_nope")
    assert result.is_error and not result.bug
    with pytest.raises(AssertionError, match="succeeded but should fail"):
        drv.fails("open_account", "anything", owner="Bo")
    with pytest.raises(AssertionError, match="without 'overdrawn'"):
        drv.fails("get_account", "overdrawn", account_id="acc_nope")
    account = drv.value("SELECT id FROM account ORDER BY id")
    with pytest.raises(AssertionError, match="hit a simulator bug instead of a business error"):
        drv.fails("close_account_buggy", "whatever", account_id=account)


def test_invalid_demands_a_schema_refusal(drv):
    assert "owner" in drv.invalid("open_account", owner="")
    with pytest.raises(AssertionError, match="should refuse the arguments as invalid"):
        drv.invalid("open_account", owner="Cy")


def test_reads_name_the_query_that_found_nothing(drv):
    assert drv.rows("SELECT * FROM account WHERE id = ?", "acc_nope") == []
    with pytest.raises(AssertionError, match="the seeded data has no row for: SELECT"):
        drv.row("SELECT * FROM account WHERE id = ?", "acc_nope")
    assert drv.select("account", owner={"like": "%"}) == drv.rows("SELECT * FROM account")


def test_the_fixture_fails_a_test_whose_episode_hit_a_simulator_bug(pytester):
    pytester.makeconftest('pytest_plugins = ["mcpsim.testing._driver"]')
    pytester.makepyfile(f"""
        import sys
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parents[1] / "support")!r})
        import toyworld

        def test_bug(world_driver):
            d = world_driver(toyworld.world, seed=1)
            account = d.value("SELECT id FROM account ORDER BY id")
            assert d.call("close_account_buggy", account_id=account).bug

        def test_clean(world_driver):
            assert world_driver(toyworld.world, seed=1).state_hash()
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*episode hit a simulator bug*"])


async def test_mcp_reaches_the_drivers_episode(drv):
    async with drv.mcp() as client:
        opened = await client.call_tool("open_account", {"owner": "Dee"})
        assert client.instructions == drv.world.policy
    assert drv.row("SELECT owner FROM account WHERE id = ?", opened.structured_content["id"])["owner"] == "Dee"


def test_stdio_server_launches_this_interpreter_without_mcpsim_settings(monkeypatch):
    monkeypatch.setenv("MCPSIM_TOKEN", "secret")
    params = stdio_server("retail", seed=7, scale="small")
    assert params.args[:4] == ["-m", "mcpsim", "serve", "retail"] and "--no-cache" in params.args
    assert params.args[params.args.index("--seed") + 1] == "7"
    assert params.env is not None and "MCPSIM_TOKEN" not in params.env
