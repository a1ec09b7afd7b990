"""Find run and demo folders under an evidence folder and read their JSON files.

A run folder holds ``run.json``; a demo folder holds ``demo.json`` and one run folder
per iteration. Both may sit at any depth. Folders that are neither (``reviews/``,
``keys/``, assets) are walked through but never shown as runs; hidden folders (such as
unfinished ``.NAME.partial-PID`` staging folders) are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.site.numbers import Doc

RUN_FILE = "run.json"
DEMO_FILE = "demo.json"
MANIFEST_FILE = "manifest.json"
SIGNATURE_FILE = "signature.dsse.json"
SIDES = ("reference", "candidate")
# Per-cell evidence files the site reads, by role (absent files are "not recorded").
CELL_FILES = {"robot": "robot.json", "timeseries": "timeseries.json",
              "newton": "newton.json", "dynamics": "dynamics.json",
              "physval": "physval.json"}
# Run-level evidence files (beside run.json), by role.
RUN_FILES = {"physval": "physval.json"}
_ITERATION = re.compile(r"iteration-(\d+)$")


@dataclass(frozen=True)
class CellEvidence:
    """The JSON files of one cell folder (``reference/`` or ``candidate/``)."""

    side: str
    docs: dict[str, Doc]

    def doc(self, role: str) -> Doc | None:
        return self.docs.get(role)


@dataclass(frozen=True)
class RunEvidence:
    """One run folder.

    Attributes:
        rel: folder path relative to the evidence folder (POSIX; ``.`` for the top).
        path: the folder on disk.
        run: run.json.
        cells: cell evidence by side.
        manifest: manifest.json, or None when absent.
        demo_rel: the demo folder this run is an iteration of, or None.
        iteration: the iteration number within its demo, or None.
        docs: run-level JSON files beside run.json (``RUN_FILES``), by role.
    """

    rel: str
    path: Path
    run: Doc
    cells: dict[str, CellEvidence]
    manifest: Doc | None
    demo_rel: str | None = None
    iteration: int | None = None
    docs: dict[str, Doc] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return slug(self.rel, self.path)

    @property
    def title(self) -> str:
        title = self.run.get("title")
        return title if isinstance(title, str) and title else self.rel


@dataclass(frozen=True)
class DemoEvidence:
    """One demo folder: demo.json and its iteration runs (in iteration order)."""

    rel: str
    path: Path
    demo: Doc
    manifest: Doc | None
    runs: tuple[RunEvidence, ...]

    @property
    def slug(self) -> str:
        return slug(self.rel, self.path)


@dataclass(frozen=True)
class Unreadable:
    """A folder that looked like evidence but whose JSON could not be read."""

    rel: str
    reason: str


@dataclass
class Evidence:
    """Everything found under the evidence folder."""

    root: Path
    runs: list[RunEvidence] = field(default_factory=list)
    demos: list[DemoEvidence] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)


def discover(root: Path) -> Evidence:
    """Walk ``root`` (sorted, deterministic) and read every run and demo folder."""
    root = Path(root)
    found = Evidence(root)
    _walk(root, root, found)
    return found


def _walk(folder: Path, root: Path, found: Evidence) -> None:
    if (folder / DEMO_FILE).is_file():
        _add_demo(folder, root, found)
        return
    if (folder / RUN_FILE).is_file():
        run = _read_run(folder, root, found)
        if run is not None:
            found.runs.append(run)
        return
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
            _walk(child, root, found)


def _add_demo(folder: Path, root: Path, found: Evidence) -> None:
    rel = relpath(folder, root)
    try:
        demo = Doc(join(rel, DEMO_FILE), read_json(folder / DEMO_FILE))
    except ValueError as exc:
        found.unreadable.append(Unreadable(rel, str(exc)))
        return
    runs = []
    children = [c for c in folder.iterdir() if c.is_dir() and (c / RUN_FILE).is_file()]
    for child in sorted(children, key=_iteration_order):
        run = _read_run(child, root, found, demo_rel=rel)
        if run is not None:
            runs.append(run)
            found.runs.append(run)
    found.demos.append(DemoEvidence(rel, folder, demo, _manifest(folder, rel), tuple(runs)))


def _iteration_order(path: Path) -> tuple[int, str]:
    match = _ITERATION.search(path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def _read_run(folder: Path, root: Path, found: Evidence,
              demo_rel: str | None = None) -> RunEvidence | None:
    rel = relpath(folder, root)
    try:
        run = Doc(join(rel, RUN_FILE), read_json(folder / RUN_FILE))
        cells = {side: _read_cell(folder / side, join(rel, side), side) for side in SIDES
                 if (folder / side).is_dir()}
        docs = {role: Doc(join(rel, name), read_json(folder / name))
                for role, name in RUN_FILES.items() if (folder / name).is_file()}
    except ValueError as exc:
        found.unreadable.append(Unreadable(rel, str(exc)))
        return None
    match = _ITERATION.search(folder.name) if demo_rel is not None else None
    return RunEvidence(rel, folder, run, cells, _manifest(folder, rel), demo_rel,
                       int(match.group(1)) if match else None, docs)


def _read_cell(folder: Path, rel: str, side: str) -> CellEvidence:
    docs = {role: Doc(join(rel, name), read_json(folder / name))
            for role, name in CELL_FILES.items() if (folder / name).is_file()}
    return CellEvidence(side, docs)


def _manifest(folder: Path, rel: str) -> Doc | None:
    if not (folder / MANIFEST_FILE).is_file():
        return None
    try:
        return Doc(join(rel, MANIFEST_FILE), read_json(folder / MANIFEST_FILE))
    except ValueError:
        return None


def read_json(path: Path) -> object:
    """Parse a JSON file; ValueError naming the file when unreadable."""
    try:
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot read ({exc.strerror})") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: not valid JSON ({exc})") from exc


def relpath(path: Path, root: Path) -> str:
    """POSIX path of ``path`` relative to ``root`` (``.`` for the root itself)."""
    rel = path.relative_to(root).as_posix()
    return rel if rel else "."


def join(rel: str, name: str) -> str:
    """``rel/name`` without a leading ``./``."""
    return name if rel == "." else f"{rel}/{name}"


def slug(rel: str, path: Path) -> str:
    """File-name-safe, unique page name for a folder path."""
    text = path.name if rel == "." else rel
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.replace("/", "--")).strip("-") or "run"
