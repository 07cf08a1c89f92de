"""What every section shares: the mode, the worlds that load, one template cache (memory and a
disk directory, so subprocesses reuse what this process built), and notes for the report."""

from __future__ import annotations

import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Context:
    quick: bool
    cache_dir: Path
    results_dir: Path
    worlds: dict[str, Any] = field(default_factory=dict)  # name -> World, those that loaded
    skipped: list[dict[str, str]] = field(default_factory=list)  # what was skipped, and why
    _templates: Any = None
    _scratch: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def create(cls, quick: bool, cache_dir: Path | None, results_dir: Path) -> Context:
        scratch = tempfile.TemporaryDirectory(prefix="mcpsim-bench-")
        ctx = cls(
            quick=quick,
            cache_dir=Path(cache_dir or Path(scratch.name) / "templates"),
            results_dir=results_dir,
            _scratch=scratch,
        )
        ctx.cache_dir.mkdir(parents=True, exist_ok=True)
        ctx.load_worlds()
        return ctx

    @property
    def scratch(self) -> Path:
        assert self._scratch is not None
        return Path(self._scratch.name)

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()

    def skip(self, section: str, what: str, why: str) -> None:
        self.skipped.append({"section": section, "what": what, "why": why})

    def load_worlds(self) -> None:
        from mcpsim.world import load_world, world_names

        for name in world_names():
            try:
                world = load_world(name)
                world.version  # noqa: B018  (hashes the world's sources: fails for a broken world)
                if "default" not in world.scales:
                    raise ValueError("no default scale")
            except Exception as exc:
                self.skip("worlds", name, f"load failed: {type(exc).__name__}: {exc}".strip()[:300])
                traceback.print_exc()
                continue
            self.worlds[name] = world

    @property
    def templates(self) -> Any:
        """The suite's shared template cache (memory + the disk directory)."""
        if self._templates is None:
            from mcpsim.engine import TemplateCache

            self._templates = TemplateCache(self.cache_dir)
        return self._templates

    def retail_app(self, max_episodes: int) -> Any:
        """mcpsim's HTTP app serving retail episodes from this suite's template cache (token "bench")."""
        from mcpsim.serve import ServeConfig, create_app

        return create_app(
            ServeConfig(
                world="retail",
                scale="small",
                cache_dir=str(self.cache_dir),
                max_episodes=max_episodes,
                ttl_seconds=None,
                token="bench",
            )
        )

    def scales(self) -> list[str]:
        return ["default"] if self.quick else ["default", "large"]

    def world_scales(self, world: Any) -> list[str]:
        return [s for s in self.scales() if s in world.scales]

    def retail(self) -> Any | None:
        return self.worlds.get("retail")
