"""Demo page context: the revision story as a timeline of iterations (from demo.json)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.site.discover import DemoEvidence
from generator.site.numbers import Num
from generator.site.signatures import SignatureStatus
from generator.site.tables import Cell, Table, flatten, value_cell


@dataclass(frozen=True)
class DiffRow:
    field: str
    before: Cell
    after: Cell


@dataclass(frozen=True)
class Contact:
    seed: Num
    geoms: str
    time: Num


@dataclass(frozen=True)
class Iteration:
    """One iteration of the demo, as demo.json records it."""

    index: Num
    title: str
    run_slug: str | None
    verdict: str
    reasons: tuple[str, ...]
    compared_with: str
    diff: tuple[DiffRow, ...]
    relaxed: bool | None
    reference_cycle: Num
    candidate_cycle: Num
    speed_up: Num
    reference_successes: Num
    candidate_successes: Num
    colliding: Num
    seeds: Num
    contact_count: Num
    contacts: tuple[Contact, ...]


@dataclass(frozen=True)
class DemoPage:
    """Context of ``demos/<slug>.html``."""

    demo: DemoEvidence
    title: str
    signature: SignatureStatus
    requirements: Table | None
    reference: Table | None
    iterations: tuple[Iteration, ...]


def build_demo_page(demo: DemoEvidence, signature: SignatureStatus,
                    run_slugs: dict[str, str]) -> DemoPage:
    """Gather the demo page; ``run_slugs`` maps run folder names to run page slugs."""
    doc = demo.demo
    items = doc.get("iterations")
    iterations = tuple(_iteration(demo, i, run_slugs)
                       for i, item in enumerate(items if isinstance(items, list) else [])
                       if isinstance(item, dict))
    title = doc.get("title")
    return DemoPage(
        demo, title if isinstance(title, str) and title else demo.rel, signature,
        flatten(doc, "requirements") if doc.get("requirements") else None,
        flatten(doc, "reference") if doc.get("reference") else None, iterations)


def _iteration(demo: DemoEvidence, i: int, run_slugs: dict[str, str]) -> Iteration:
    doc = demo.demo
    item: dict[str, Any] = doc.get("iterations", i)
    folder = item.get("runFolder", item.get("folder"))
    diffs = item.get("parameterDiff") if isinstance(item.get("parameterDiff"), list) else []
    contacts = item.get("firstContacts") if isinstance(item.get("firstContacts"), list) else []
    relaxed = item.get("requirementsRelaxed")
    path = ("iterations", i)
    return Iteration(
        index=doc.num(*path, "index"), title=str(item.get("title", "")),
        run_slug=run_slugs.get(str(folder)), verdict=str(item.get("verdict", "not recorded")),
        reasons=tuple(str(r) for r in item.get("reasons") or []),
        compared_with=str(item.get("comparedWith", "")),
        diff=tuple(DiffRow(str(d.get("field")),
                           value_cell(doc, (*path, "parameterDiff", k, "from"), "m"),
                           value_cell(doc, (*path, "parameterDiff", k, "to"), "m"))
                   for k, d in enumerate(diffs) if isinstance(d, dict)),
        relaxed=relaxed if isinstance(relaxed, bool) else None,
        reference_cycle=doc.num(*path, "referenceSlowestCycleS", kind="s", unit="s"),
        candidate_cycle=doc.num(*path, "candidateSlowestCycleS", kind="s", unit="s"),
        speed_up=doc.percent(*path, "speedUp"),
        reference_successes=doc.num(*path, "referenceSuccesses"),
        candidate_successes=doc.num(*path, "candidateSuccesses"),
        colliding=doc.num(*path, "candidateCollidingSeeds"),
        seeds=doc.num(*path, "seeds"),
        contact_count=doc.length(*path, "firstContacts"),
        contacts=tuple(Contact(doc.num(*path, "firstContacts", k, "seed"),
                               " / ".join(str(g) for g in c.get("geoms") or []),
                               doc.num(*path, "firstContacts", k, "timeS", kind="s", unit="s"))
                       for k, c in enumerate(contacts) if isinstance(c, dict)),
    )
