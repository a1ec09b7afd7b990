"""Index page context: every run (newest first), every demo, the compare links."""

from __future__ import annotations

from dataclasses import dataclass

from generator.site.compare_page import compare_slug
from generator.site.discover import DemoEvidence, Evidence, RunEvidence, Unreadable
from generator.site.numbers import Num
from generator.site.signatures import SignatureStatus

# run.json fields that may carry the run's date (ISO 8601 text); the first present wins.
DATE_FIELDS = ("createdAt", "date")


@dataclass(frozen=True)
class RunRow:
    run: RunEvidence
    title: str
    date: str
    verdict: str
    signature: SignatureStatus
    successes: Num | None
    seeds: Num | None
    slowest: Num | None
    demo_slug: str | None


@dataclass(frozen=True)
class DemoRow:
    demo: DemoEvidence
    title: str
    iterations: Num
    signature: SignatureStatus


@dataclass(frozen=True)
class CompareLink:
    slug: str
    a: str
    b: str


@dataclass(frozen=True)
class IndexPage:
    runs: tuple[RunRow, ...]
    demos: tuple[DemoRow, ...]
    compares: tuple[CompareLink, ...]
    verdicts: tuple[str, ...]
    trusted: tuple[str, ...] | None
    unreadable: tuple[Unreadable, ...]


def run_date(run: RunEvidence) -> str:
    """The run's recorded date, or "" when run.json records none."""
    for key in DATE_FIELDS:
        value = run.run.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def newest_first(runs: list[RunEvidence]) -> list[RunEvidence]:
    """Dated runs newest first, then undated runs in reverse folder order (for a demo:
    the last iteration first)."""
    dated = sorted((r for r in runs if run_date(r)), key=lambda r: (run_date(r), r.rel),
                   reverse=True)
    undated = sorted((r for r in runs if not run_date(r)),
                     key=lambda r: (r.demo_rel or r.rel, r.iteration or 0, r.rel), reverse=True)
    return dated + undated


def build_index_page(evidence: Evidence, runs: list[RunEvidence],
                     signatures: dict[str, SignatureStatus],
                     demo_signatures: dict[str, SignatureStatus],
                     demo_slugs: dict[str, str], trusted: list[str] | None) -> IndexPage:
    """``runs`` in display order; signatures keyed by folder ``rel``."""
    rows = []
    for run in runs:
        robot = run.cells["candidate"].doc("robot") if "candidate" in run.cells else None
        slowest = None
        if robot is not None:
            for i, check in enumerate(robot.get("checks") or []):
                if isinstance(check, dict) and check.get("id") == "cycle-time":
                    slowest = robot.num("checks", i, "observed", kind="s", unit="s")
        rows.append(RunRow(
            run, run.title, run_date(run) or "not recorded",
            str(run.run.get("verdict") or "unknown"), signatures[run.rel],
            robot.count("trials", key="success") if robot else None,
            robot.length("trials") if robot else None, slowest,
            demo_slugs.get(run.demo_rel) if run.demo_rel else None))
    demos = tuple(DemoRow(d, str(d.demo.get("title") or d.rel), d.demo.length("iterations"),
                          demo_signatures[d.rel]) for d in evidence.demos)
    older_first = list(reversed(runs))
    compares = tuple(CompareLink(compare_slug(a, b), a.title, b.title)
                     for i, a in enumerate(older_first) for b in older_first[i + 1:])
    verdicts = tuple(sorted({r.verdict for r in rows}))
    return IndexPage(tuple(rows), demos, compares, verdicts,
                     tuple(trusted) if trusted is not None else None,
                     tuple(evidence.unreadable))
