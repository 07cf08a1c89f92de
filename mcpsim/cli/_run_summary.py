"""A run's results as `mcpsim run` and `mcpsim demo` print them: the summary table, the episodes
that ended in errors, and `run`'s exit past --max-failures infrastructure failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table

from mcpsim.runner import RunConfig

INFRASTRUCTURE_FAILED = 3  # `mcpsim run`'s exit code past --max-failures infrastructure failures


def _report_run(result: Any, plan: RunConfig, as_json: bool, max_failures: int, server_url: str | None) -> None:
    """The run's summary (summary.json's JSON, or a table), a line if episodes ended in errors,
    and exit INFRASTRUCTURE_FAILED past `max_failures` infrastructure failures, with examples."""
    if as_json:
        click.echo(result.summary.model_dump_json(indent=2))
    else:
        _print_summary(result, plan.out)
    if result.summary.errors:
        click.echo(
            f"{result.summary.errors} episodes ended in errors (see termination and error in the JSONL)", err=True
        )
    failed = sum(result.failures.values())
    if failed > max_failures:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(result.failures.items()))
        where = f"the server at {server_url}" if server_url else f"the {plan.transport} server"
        server = f"; {where} failed or could not be reached" if result.failures.get("server_error") else ""
        click.echo(
            f"error: {failed} of {result.ran} episodes of this run ended in infrastructure failures ({kinds}"
            f"{server}), more than --max-failures {max_failures} (termination in "
            f"{plan.out / 'trajectories.jsonl'}); for example:",
            err=True,
        )
        for example in result.failure_examples:
            click.echo(f"  {example[:300]}", err=True)
        raise SystemExit(INFRASTRUCTURE_FAILED)


def _print_summary(result: Any, out: Path) -> None:
    s = result.summary
    tokens = s.tokens > 0  # scripted agents use none: keep the table narrow
    headers = ("n", "pass", "reward", "partial", "calls", "errors", *(["tokens"] if tokens else []))
    rows = []
    for t in s.tasks:
        ended = (
            next(iter(t.terminations))
            if len(t.terminations) == 1
            else ", ".join(f"{k} {v}" for k, v in sorted(t.terminations.items()))
        )
        numbers = [str(t.trials), str(t.passes), f"{t.mean_reward:.2f}", f"{t.mean_partial:.2f}"]
        numbers += [str(t.tool_calls), str(t.tool_errors), *([str(t.tokens)] if tokens else [])]
        rows.append((t.task_id, numbers, ended))
    # numbers are never cut: their columns keep their full width, and the text columns (task,
    # ended by) fold onto more lines when the terminal or a pipe (80 columns) is narrower
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", overflow="fold", ratio=3)
    for i, header in enumerate(headers):
        width = max([len(header), *(len(numbers[i]) for _, numbers, _ in rows)])
        table.add_column(header, justify="right", no_wrap=True, min_width=width)
    table.add_column("ended by", overflow="fold", ratio=1)
    for task_id, numbers, ended in rows:
        table.add_row(task_id, *numbers, ended)
    console = Console()
    console.print(table)
    hats = "  ".join(f"pass^{k} {v:.3f}" for k, v in s.pass_hat_k.items())
    console.print(
        f"[bold]{', '.join(s.agents)}[/bold] on {s.world}: {s.episodes} episodes, pass@1 {s.pass_at_1:.3f}  "
        f"{hats}  mean reward {s.mean_reward:.3f}  partial {s.mean_partial:.3f}  tool calls {s.tool_calls} "
        f"({s.tool_errors} errors)  tokens {s.tokens}  episode errors {s.errors}"
    )
    left_out = {
        "already done": result.skipped,
        "suspended (resume with --resume)": result.cancelled,
        "not started": result.not_started,
    }
    extra = [f"{n} {what}" for what, n in left_out.items() if n]
    if result.reruns:
        extra.append(f"{result.reruns} started again after their Ray worker died")
    console.print(f"trajectories: {out / 'trajectories.jsonl'}" + (f"  ({'; '.join(extra)})" if extra else ""))
