"""Run page context: everything one run page shows, read from its evidence files.

Sections whose evidence file (or field) is absent are None here and "not recorded in
this run" on the page; nothing is filled in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from generator.site import plots
from generator.site.discover import SIDES, SIGNATURE_FILE, RunEvidence, join
from generator.site.numbers import Doc, Num
from generator.site.signatures import SignatureStatus
from generator.site.tables import Cell, Table, flatten, value_cell

# Display precision by the unit a check records.
CHECK_KINDS = {"mm": "mm", "s": "s", "fraction of seeds": "fraction"}
FILES_DIR = "files"  # evidence files are copied under this folder of the site


@dataclass(frozen=True)
class CheckSide:
    passed: bool | None
    observed: Num
    required: Num


@dataclass(frozen=True)
class CheckRow:
    id: str
    unit: str
    method: str
    sides: dict[str, CheckSide | None]


@dataclass(frozen=True)
class SeedSide:
    success: bool | None
    reached: bool | None
    ik_error: Num
    failure: str
    collisions: Num
    first_contact: str
    first_contact_time: Num
    min_clearance: Num
    clearance_pair: str
    cycle: Num


@dataclass(frozen=True)
class SeedRow:
    seed: Num
    anchor: str
    change: str
    failed: bool
    sides: dict[str, SeedSide | None]


@dataclass(frozen=True)
class ScopeSide:
    side: str
    scope: str
    physical_validation: str
    limits: str


@dataclass(frozen=True)
class SuccessSide:
    rate: Num
    successes: Num
    seeds: Num
    passed: bool | None


@dataclass(frozen=True)
class MassRow:
    name: str
    mass_g: Num
    relative: Num
    role: str


@dataclass(frozen=True)
class MassTable:
    side: str
    rows: tuple[MassRow, ...]
    details: Table
    passed: bool | None


@dataclass(frozen=True)
class ParamRow:
    name: str
    reference: Cell
    candidate: Cell
    changed: bool


@dataclass(frozen=True)
class PhysvalCheck:
    id: str
    group: str
    status: str
    reason: str
    method: str
    measured: Table
    threshold: Table | None
    control: str


@dataclass(frozen=True)
class PhysvalSubject:
    """One validated subject (an asset such as the mounted part, or the robot model)."""

    name: str
    source: str
    status: str
    states: tuple[tuple[str, str], ...]
    checks: tuple[PhysvalCheck, ...]


@dataclass(frozen=True)
class FileRow:
    path: str
    href: str
    sha256: str
    size: Num | None


@dataclass(frozen=True)
class RunPage:
    """Context of ``runs/<slug>.html``."""

    run: RunEvidence
    title: str
    notes: str
    project: str
    verdict: str
    reasons: tuple[str, ...]
    signature: SignatureStatus
    scope: tuple[ScopeSide, ...]
    checks: tuple[CheckRow, ...]
    success: dict[str, SuccessSide | None]
    seeds: tuple[SeedRow, ...]
    params: tuple[ParamRow, ...]
    requirements: Table
    stages: tuple[StageRow, ...]
    mass: tuple[MassTable, ...]
    exports: dict[str, Table | None]
    newton: dict[str, Table | None]
    dynamics: dict[str, Table | None]
    physval: tuple[PhysvalSubject, ...]
    model: dict[str, Table | None]
    files: tuple[FileRow, ...]
    provenance: Table | None
    command: str
    plots: dict[str, Any]
    seed_keys: tuple[str, ...]
    demo_slug: str | None
    signature_file: str | None


def file_href(rel_file: str, depth: int = 1) -> str:
    """Relative link from a page ``depth`` folders below the site root to a copied file."""
    return "../" * depth + FILES_DIR + "/" + quote(rel_file)


def build_run_page(run: RunEvidence, signature: SignatureStatus,
                   demo_slug: str | None = None) -> RunPage:
    """Gather every section of a run page from the run's evidence files."""
    doc = run.run
    robots = {side: run.cells[side].doc("robot") if side in run.cells else None
              for side in SIDES}
    return RunPage(
        run=run, title=run.title, notes=_text(doc.get("notes")),
        project=_text(doc.get("project")), verdict=_text(doc.get("verdict")) or "unknown",
        reasons=tuple(str(r) for r in doc.get("reasons") or []), signature=signature,
        scope=_scope(robots), checks=_checks(doc), success=_success(doc, robots),
        seeds=_seeds(doc, robots), params=_params(doc),
        requirements=flatten(doc, "spec", "requirements"),
        stages=_stages(doc),
        mass=_mass(robots), exports=_cell_tables(robots, "exports"),
        newton=_file_tables(run, "newton"), dynamics=_file_tables(run, "dynamics"),
        physval=_physval(run),
        model={side: flatten(r, "model", skip=("geoms",)) if r and r.get("model") else None
               for side, r in robots.items()},
        files=_files(run), provenance=flatten(doc, "provenance")
        if doc.get("provenance") else None,
        command=_command(doc.get("command")), plots=_plots(run, robots),
        seed_keys=_seed_keys(robots), demo_slug=demo_slug,
        signature_file=join(run.rel, SIGNATURE_FILE)
        if (run.path / SIGNATURE_FILE).is_file() else None,
    )


@dataclass(frozen=True)
class StageRow:
    """One validation stage that can reject the run (run.json ``stages``)."""

    name: str
    passed: bool | None
    reason: str
    file: str


def _stages(doc: Doc) -> tuple[StageRow, ...]:
    stages = doc.get("stages")
    if not isinstance(stages, list):
        return ()
    return tuple(StageRow(_text(s.get("name")), s.get("passed") if isinstance(
        s.get("passed"), bool) else None, _text(s.get("reason")), _text(s.get("file")))
        for s in stages if isinstance(s, dict))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _command(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return _text(value)


def _scope(robots: dict[str, Doc | None]) -> tuple[ScopeSide, ...]:
    out = []
    for side, robot in robots.items():
        if robot is None:
            continue
        physical = robot.get("physicalValidation")
        out.append(ScopeSide(
            side, _text(robot.get("scope")) or "not recorded",
            "not recorded" if physical is None else str(physical).lower(),
            _text(robot.get("limits")) or "not recorded"))
    return tuple(out)


def _checks(doc: Doc) -> tuple[CheckRow, ...]:
    order: list[str] = []
    found: dict[str, dict[str, tuple[int, dict]]] = {}
    for side in SIDES:
        for i, check in enumerate(doc.get("cells", side, "checks") or []):
            if isinstance(check, dict) and isinstance(check.get("id"), str):
                if check["id"] not in order:
                    order.append(check["id"])
                found.setdefault(check["id"], {})[side] = (i, check)
    rows = []
    for check_id in order:
        sides: dict[str, CheckSide | None] = {}
        unit, method = "", ""
        for side in SIDES:
            if side not in found[check_id]:
                sides[side] = None
                continue
            i, check = found[check_id][side]
            unit, method = _text(check.get("unit")), _text(check.get("method"))
            kind = CHECK_KINDS.get(unit, "default")
            sides[side] = CheckSide(
                check.get("passed") if isinstance(check.get("passed"), bool) else None,
                doc.num("cells", side, "checks", i, "observed", kind=kind),
                doc.num("cells", side, "checks", i, "required", kind=kind))
        rows.append(CheckRow(check_id, unit, method, sides))
    return tuple(rows)


def _success(doc: Doc, robots: dict[str, Doc | None]) -> dict[str, SuccessSide | None]:
    out: dict[str, SuccessSide | None] = {}
    for side, robot in robots.items():
        if robot is None:
            out[side] = None
            continue
        passed = doc.get("cells", side, "passed")
        out[side] = SuccessSide(robot.num("successRate", kind="rate"),
                                robot.count("trials", key="success"), robot.length("trials"),
                                passed if isinstance(passed, bool) else None)
    return out


def _trial_index(robot: Doc | None) -> dict[Any, int]:
    trials = robot.get("trials") if robot else None
    return {t.get("seed"): i for i, t in enumerate(trials or []) if isinstance(t, dict)}


def _seed_side(robot: Doc, i: int) -> SeedSide:
    trial = robot.get("trials", i)
    contacts = trial.get("collisions") or []
    first = contacts[0] if contacts and isinstance(contacts[0], dict) else None
    return SeedSide(
        success=trial.get("success") if isinstance(trial.get("success"), bool) else None,
        reached=trial.get("reached") if isinstance(trial.get("reached"), bool) else None,
        ik_error=robot.num("trials", i, "ikErrorMm", kind="mm", unit="mm"),
        failure=_text(trial.get("failureReason")),
        collisions=robot.length("trials", i, "collisions"),
        first_contact=" / ".join(str(g) for g in (first or {}).get("geoms") or []),
        first_contact_time=robot.num("trials", i, "collisions", 0, "timeS", kind="s", unit="s"),
        min_clearance=robot.num("trials", i, "minClearanceMm", kind="mm", unit="mm"),
        clearance_pair=" / ".join(str(g) for g in trial.get("minClearancePair") or []),
        cycle=robot.num("trials", i, "cycleSeconds", kind="s", unit="s"),
    )


def _seeds(doc: Doc, robots: dict[str, Doc | None]) -> tuple[SeedRow, ...]:
    index = {side: _trial_index(robot) for side, robot in robots.items()}
    pairing = {p.get("seed"): p for p in doc.get("pairing") or [] if isinstance(p, dict)}
    seeds = doc.get("seeds") if isinstance(doc.get("seeds"), list) else []
    rows = []
    for k, seed in enumerate(seeds):
        sides: dict[str, SeedSide | None] = {}
        for side, robot in robots.items():
            i = index[side].get(seed)
            sides[side] = _seed_side(robot, i) if robot is not None and i is not None else None
        failed = any(s is None or s.success is not True for s in sides.values())
        rows.append(SeedRow(doc.num("seeds", k), f"seed-{seed}",
                            _text(pairing.get(seed, {}).get("change")), failed, sides))
    return tuple(rows)


def _params(doc: Doc) -> tuple[ParamRow, ...]:
    ref, cand = doc.get("spec", "reference"), doc.get("spec", "candidate")
    names = list(ref) if isinstance(ref, dict) else []
    names += [n for n in (cand if isinstance(cand, dict) else {}) if n not in names]
    return tuple(ParamRow(name, value_cell(doc, ("spec", "reference", name), "m"),
                          value_cell(doc, ("spec", "candidate", name), "m"),
                          (ref or {}).get(name) != (cand or {}).get(name)) for name in names)


def _mass(robots: dict[str, Doc | None]) -> tuple[MassTable, ...]:
    out = []
    for side, robot in robots.items():
        tool = robot.get("tool") if robot else None
        if robot is None or not isinstance(tool, dict):
            continue
        masses = tool.get("massesG") if isinstance(tool.get("massesG"), dict) else {}
        roles = tool.get("representations") if isinstance(tool.get("representations"),
                                                          dict) else {}
        rows = tuple(MassRow(name, robot.num("tool", "massesG", name, kind="g", unit="g"),
                             robot.num("tool", "relativeToBrep", name, kind="fraction"),
                             _text(roles.get(name))) for name in masses)
        details = flatten(robot, "tool", skip=("massesG", "relativeToBrep", "representations"))
        passed = tool.get("passed")
        out.append(MassTable(side, rows, details, passed if isinstance(passed, bool) else None))
    return tuple(out)


def _cell_tables(robots: dict[str, Doc | None], key: str) -> dict[str, Table | None]:
    return {side: flatten(robot, key) if robot is not None and robot.get(key) else None
            for side, robot in robots.items()}


def _file_tables(run: RunEvidence, role: str) -> dict[str, Table | None]:
    out: dict[str, Table | None] = {}
    for side in SIDES:
        doc = run.cells[side].doc(role) if side in run.cells else None
        out[side] = flatten(doc) if doc is not None else None
    return out


def _physval(run: RunEvidence) -> tuple[PhysvalSubject, ...]:
    """Subjects of the run's physval.json (``assets`` by role, then ``robot``), and of any
    per-cell physval.json."""
    docs = [d for d in [run.docs.get("physval")] if d is not None]
    docs += [run.cells[s].doc("physval") for s in SIDES
             if s in run.cells and run.cells[s].doc("physval") is not None]  # type: ignore
    subjects: list[PhysvalSubject] = []
    for doc in docs:
        assets = doc.get("assets")
        for role in assets if isinstance(assets, dict) else {}:
            subjects.append(_subject(doc, role, ("assets", role)))
        if isinstance(doc.get("robot"), dict):
            subjects.append(_subject(doc, "robot model", ("robot",)))
    return tuple(subjects)


def _subject(doc: Doc, name: str, path: tuple[str, ...]) -> PhysvalSubject:
    record = doc.get(*path)
    states = tuple((str(st.get("name")), str(st.get("status")))
                   for st in record.get("states") or [] if isinstance(st, dict))
    checks = []
    for i, check in enumerate(record.get("checks") or []):
        if not isinstance(check, dict):
            continue
        control = check.get("negativeControl")
        control_text = ""
        if isinstance(control, dict):
            control_text = (f"negative control {control.get('asset', '')}: "
                            f"{control.get('status', '')}"
                            + (" (failed as expected)" if control.get("failedAsExpected") is True
                               else " (did NOT fail as expected)"
                               if control.get("failedAsExpected") is False else ""))
        checks.append(PhysvalCheck(
            str(check.get("id")), _text(check.get("group")), str(check.get("status")),
            _text(check.get("reason")), _text(check.get("method")),
            flatten(doc, *path, "checks", i, "measured"),
            flatten(doc, *path, "checks", i, "threshold") if check.get("threshold") else None,
            control_text))
    status = record.get("status")
    return PhysvalSubject(name, doc.src(*path), _text(status), states, tuple(checks))


def _files(run: RunEvidence) -> tuple[FileRow, ...]:
    manifest = run.manifest
    entries = manifest.get("files") if manifest else None
    rows = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        rel_file = join(run.rel, entry["path"])
        rows.append(FileRow(entry["path"], file_href(rel_file), _text(entry.get("sha256")),
                            manifest.num("files", i, "size", kind="count", unit="bytes")))
    return tuple(rows)


def _seed_keys(robots: dict[str, Doc | None]) -> tuple[str, ...]:
    keys = []
    for side in ("candidate", "reference"):
        robot = robots.get(side)
        for trial in (robot.get("trials") or []) if robot else []:
            if isinstance(trial, dict):
                keys.append(f"{side}:{trial.get('seed')}")
    return tuple(keys)


def _plots(run: RunEvidence, robots: dict[str, Doc | None]) -> dict[str, Any]:
    robot = robots.get("candidate") or robots.get("reference")
    max_cycle = robot.get("requirements", "maxCycleSeconds") if robot else None
    tolerance = None
    for check in (robot.get("checks") or []) if robot else []:
        if isinstance(check, dict) and check.get("id") == "reach":
            tolerance = check.get("required")
    joints = plots.joint_figures(run.cells)
    return {
        "plot-cycle": plots.cycle_time_figure(run.cells, max_cycle),
        "plot-tcp": plots.tcp_error_figure(run.cells, tolerance),
        "plot-clearance": plots.clearance_figure(run.cells),
        "plot-joints": {"variants": joints["angles"]},
        "plot-torques": {"variants": joints["torques"]},
        "plot-cell": {"variants": plots.cell_figures(run.cells)},
    }
