"""Compare page context for two runs: changed parameters, changed checks, per-seed deltas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.site.discover import SIDES, RunEvidence
from generator.site.numbers import Doc, Num, diff
from generator.site.run_page import CHECK_KINDS
from generator.site.tables import Cell, value_cell

SPEC_SECTIONS = ("reference", "candidate", "requirements", "tool")


@dataclass(frozen=True)
class ChangedParam:
    name: str
    a: Cell
    b: Cell


@dataclass(frozen=True)
class ChangedCheck:
    side: str
    id: str
    a_passed: bool | None
    b_passed: bool | None
    a_observed: Num
    b_observed: Num
    changed: bool


@dataclass(frozen=True)
class SeedDelta:
    seed: Num
    side: str
    a_success: bool | None
    b_success: bool | None
    a_cycle: Num
    b_cycle: Num
    cycle_delta: Num
    a_clearance: Num
    b_clearance: Num
    clearance_delta: Num


@dataclass(frozen=True)
class ComparePage:
    """Context of ``compare/<a>__vs__<b>.html`` (run a is the older one in the index)."""

    a: RunEvidence
    b: RunEvidence
    params: tuple[ChangedParam, ...]
    checks: tuple[ChangedCheck, ...]
    seeds: tuple[SeedDelta, ...]

    @property
    def slug(self) -> str:
        return compare_slug(self.a, self.b)


def compare_slug(a: RunEvidence, b: RunEvidence) -> str:
    return f"{a.slug}__vs__{b.slug}"


def build_compare_page(a: RunEvidence, b: RunEvidence) -> ComparePage:
    return ComparePage(a, b, _params(a.run, b.run), _checks(a.run, b.run), _seeds(a, b))


def _params(a: Doc, b: Doc) -> tuple[ChangedParam, ...]:
    rows = []
    for section in SPEC_SECTIONS:
        sa, sb = a.get("spec", section), b.get("spec", section)
        keys = list(sa) if isinstance(sa, dict) else []
        keys += [k for k in (sb if isinstance(sb, dict) else {}) if k not in keys]
        for key in keys:
            va = sa.get(key) if isinstance(sa, dict) else None
            vb = sb.get(key) if isinstance(sb, dict) else None
            if va != vb:
                rows.append(ChangedParam(f"{section}.{key}",
                                         value_cell(a, ("spec", section, key), "m"),
                                         value_cell(b, ("spec", section, key), "m")))
    if a.get("seeds") != b.get("seeds"):
        rows.append(ChangedParam("seeds", value_cell(a, ("seeds",)), value_cell(b, ("seeds",))))
    return tuple(rows)


def _check_index(doc: Doc, side: str) -> dict[str, int]:
    checks = doc.get("cells", side, "checks")
    return {c["id"]: i for i, c in enumerate(checks if isinstance(checks, list) else [])
            if isinstance(c, dict) and isinstance(c.get("id"), str)}


def _checks(a: Doc, b: Doc) -> tuple[ChangedCheck, ...]:
    rows = []
    for side in SIDES:
        ia, ib = _check_index(a, side), _check_index(b, side)
        for check_id in list(ia) + [c for c in ib if c not in ia]:
            ca: dict[str, Any] = a.get("cells", side, "checks", ia[check_id]) \
                if check_id in ia else {}
            cb: dict[str, Any] = b.get("cells", side, "checks", ib[check_id]) \
                if check_id in ib else {}
            kind = CHECK_KINDS.get(str(ca.get("unit", cb.get("unit"))), "default")
            rows.append(ChangedCheck(
                side, check_id, _flag(ca.get("passed")), _flag(cb.get("passed")),
                _observed(a, side, ia.get(check_id), kind),
                _observed(b, side, ib.get(check_id), kind),
                ca.get("passed") != cb.get("passed") or ca.get("observed") != cb.get("observed")))
    return tuple(rows)


def _observed(doc: Doc, side: str, index: int | None, kind: str) -> Num:
    if index is None:
        return Num(None, doc.src("cells", side, "checks"), "n/a")
    return doc.num("cells", side, "checks", index, "observed", kind=kind)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _seeds(a: RunEvidence, b: RunEvidence) -> tuple[SeedDelta, ...]:
    rows = []
    for side in SIDES:
        ra = a.cells[side].doc("robot") if side in a.cells else None
        rb = b.cells[side].doc("robot") if side in b.cells else None
        if ra is None or rb is None:
            continue
        index_b = {t.get("seed"): i for i, t in enumerate(rb.get("trials") or [])
                   if isinstance(t, dict)}
        for i, trial in enumerate(ra.get("trials") or []):
            j = index_b.get(trial.get("seed")) if isinstance(trial, dict) else None
            if j is None:
                continue
            cycle_a = ra.num("trials", i, "cycleSeconds", kind="s", unit="s")
            cycle_b = rb.num("trials", j, "cycleSeconds", kind="s", unit="s")
            clear_a = ra.num("trials", i, "minClearanceMm", kind="mm", unit="mm")
            clear_b = rb.num("trials", j, "minClearanceMm", kind="mm", unit="mm")
            rows.append(SeedDelta(
                ra.num("trials", i, "seed"), side, _flag(trial.get("success")),
                _flag(rb.get("trials", j, "success")), cycle_a, cycle_b,
                diff(cycle_b, cycle_a, "s"), clear_a, clear_b, diff(clear_b, clear_a, "mm")))
    return tuple(rows)
