"""The public API of mcpsim, as docs/architecture.md lists it: each package's `__all__`.

python tools/public_api.py            # print the list
python tools/public_api.py --write    # rewrite it in docs/architecture.md
python tools/public_api.py --check    # exit 1 if the page is not current
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- public-api:begin -->", "<!-- public-api:end -->"


def packages() -> list[str]:
    """The top level and every public package, nested ones included (no `_` in the path)."""
    found = []
    for init in sorted((ROOT / "mcpsim").rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT).parts
        if "__pycache__" not in parts and not any(p.startswith("_") for p in parts):
            found.append(".".join(parts))
    return found


def listing() -> str:
    lines = ["| package | names |", "|---|---|"]
    total = 0
    for name in packages():
        exported = sorted(getattr(importlib.import_module(name), "__all__", []), key=str.lower)
        total += len(exported)
        lines.append(f"| `{name}` ({len(exported)}) | {', '.join(f'`{n}`' for n in exported)} |")
    lines.append(f"\n{total} names in all.")
    return "\n".join(lines)


def page_with(text: str, block: str) -> str:
    head, _, tail = text.partition(BEGIN)
    _, _, tail = tail.partition(END)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite the list in docs/architecture.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.md is not current")
    args = parser.parse_args()
    text = PAGE.read_text()
    wanted = page_with(text, listing())
    if args.write:
        PAGE.write_text(wanted)
    elif args.check:
        if wanted != text:
            print("docs/architecture.md's public API is stale: run python tools/public_api.py --write")
            return 1
    else:
        print(listing())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
