"""A fingerprint of everything a restructuring must not move: for every installed world, each
task as `mcpsim tasks --json` prints it and the `mcpsim check --json` report; for a sample of
catalogue worlds, the specs `mcpsim gen --catalog` writes, their generated tasks and their
check reports. Only the command line is used, so the script runs unchanged across module moves.

    python tools/fingerprint.py OUT.json [--catalog N] [--worlds W ...]
    python tools/fingerprint.py --compare A.json B.json [--ignore world_version]

Timing fields are dropped; everything else must be byte-equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MCPSIM = [sys.executable, "-m", "mcpsim"]
VOLATILE = {"seconds", "elapsed", "elapsed_s", "cpu_seconds", "duration", "took", "time", "ms"}


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _json(args: list[str]) -> object:
    done = subprocess.run(MCPSIM + args, capture_output=True, text=True, check=False)
    if not done.stdout.strip():
        return {"exit": done.returncode, "stderr": done.stderr[-2000:]}
    try:
        return {"exit": done.returncode, "out": _strip(json.loads(done.stdout))}
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        return {"exit": done.returncode, "out": _strip(rows)}


def _world(world: str, extra: list[str]) -> dict[str, object]:
    return {
        "tasks": _json(["tasks", world, "--json", *extra]),
        "check": _json(["check", world, "--json", *extra]),
    }


def fingerprint(worlds: list[str], catalog: int) -> dict[str, object]:
    out: dict[str, object] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {w: pool.submit(_world, w, []) for w in worlds}
        out["worlds"] = {w: job.result() for w, job in jobs.items()}
    if catalog:
        with tempfile.TemporaryDirectory() as tmp:
            gen = subprocess.run(
                MCPSIM + ["gen", "--catalog", "--count", str(catalog), "--out", tmp, "--workers", "2"],
                capture_output=True,
                text=True,
                check=False,
            )
            worlds_dir = Path(tmp) / "worlds"
            specs = sorted(worlds_dir.glob("*")) if worlds_dir.is_dir() else []
            out["catalog_exit"] = gen.returncode
            out["catalog_specs"] = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in specs}
            names = [p.stem for p in specs if p.suffix in {".yaml", ".yml", ".json"}]
            extra = ["--worlds-dir", str(worlds_dir)]
            with ThreadPoolExecutor(max_workers=2) as pool:
                jobs = {n: pool.submit(_world, n, extra) for n in names}
                out["catalog"] = {n: job.result() for n, job in jobs.items()}
    return out


def compare(a: dict, b: dict, path: str = "", ignore: frozenset[str] = frozenset()) -> list[str]:
    diffs: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in ignore:
                continue
            if key not in a or key not in b:
                diffs.append(f"{path}/{key}: only in {'B' if key not in a else 'A'}")
            else:
                diffs += compare(a[key], b[key], f"{path}/{key}", ignore)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diffs += compare(x, y, f"{path}[{i}]", ignore)
    elif a != b:
        diffs.append(f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}")
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?")
    parser.add_argument("--catalog", type=int, default=4)
    parser.add_argument("--worlds", nargs="*", default=["airline", "bank", "retail", "workspace"])
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="KEY",
        help="a key left out of the comparison (world_version: it hashes the world's source files)",
    )
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(Path(p).read_text()) for p in args.compare)
        diffs = compare(a, b, ignore=frozenset(args.ignore))
        print("\n".join(diffs[:200]) or "identical")
        return 1 if diffs else 0
    if not args.out:
        parser.error("OUT is required")
    Path(args.out).write_text(json.dumps(fingerprint(args.worlds, args.catalog), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
