"""Fixtures for the research world's tests: a fresh small-scale episode per test (`desk`), and
queries that find documents by what they are instead of hard-coding ids."""

from __future__ import annotations

from mcpsim_worlds.research import world as research_world

from mcpsim.testing._driver import WorldDriver, world_fixtures


class Desk(WorldDriver):
    """A research episode plus the queries the tests keep needing."""

    def doc(self, title_like: str) -> str:
        return self.value("SELECT id FROM documents WHERE title LIKE ? ORDER BY id LIMIT 1", title_like)

    def spent(self) -> int:
        return self.value("SELECT COALESCE(SUM(amount), 0) FROM mcpsim_billing_charges")

    def set_budget(self, budget: int) -> None:
        self.ep.edit("INSERT OR REPLACE INTO mcpsim_billing_account (id, budget) VALUES (1, ?)", (budget,))


research, desk, episode = world_fixtures(research_world, Desk, names=("research", "desk"))
