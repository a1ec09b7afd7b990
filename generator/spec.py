"""Run spec: parse TOML or JSON, validate at the boundary, return frozen dataclasses.

Every problem is collected (field path, value, allowed range or type) and reported
at once through :class:`SpecError`; nothing is written for an invalid spec.
Unknown keys are errors: a typo must never fall back to a default silently.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Design section 1: the eight bounded cell parameters and their ranges (SI units).
CELL_RANGES: dict[str, tuple[float, float, str]] = {
    "pickDistance": (0.25, 1.1, "m"),
    "placeDistance": (0.25, 1.1, "m"),
    "pickHeight": (0.6, 1.2, "m"),
    "placeHeight": (0.6, 1.2, "m"),
    "pedestalHeight": (0.3, 1.0, "m"),
    "guardClearance": (0.1, 1.5, "m"),
    "speedFraction": (0.1, 1.0, "1"),
    "jitter": (0.0, 0.08, "m"),
}
REQUIREMENT_RANGES: dict[str, tuple[float, float, str]] = {
    "maxCycleSeconds": (0.1, 600.0, "s"),
    "minSuccessRate": (0.0, 1.0, "1"),
}
# Tool ranges are the gate's (design section 2); the spec only checks types here
# so that an out-of-range tool is refused by the gate with TOOL_OUT_OF_RANGE.
TOOL_FIELDS = {"cadReviewId": str, "payloadKg": float, "motorAxisMm": float}
DEFAULT_PAYLOAD_KG = 0.28  # NEMA 17 motor, design section 2
DEFAULT_SEEDS = tuple(range(10))
MAX_SEEDS = 1000
TOP_LEVEL = {"title", "notes", "project", "reference", "candidate", "requirements", "seeds",
             "tool"}
SCHEMA = "workcell-evidence/spec/v1"


@dataclass(frozen=True)
class CellParams:
    """The eight bounded parameters of one cell (metres, or a fraction)."""

    pickDistance: float
    placeDistance: float
    pickHeight: float
    placeHeight: float
    pedestalHeight: float
    guardClearance: float
    speedFraction: float
    jitter: float

    @property
    def guard_distance_m(self) -> float:
        """Distance of each guard panel's inner face from the robot axis [m]."""
        return max(self.pickDistance, self.placeDistance) + self.guardClearance


@dataclass(frozen=True)
class Requirements:
    maxCycleSeconds: float
    minSuccessRate: float


@dataclass(frozen=True)
class ToolSpec:
    cadReviewId: str
    payloadKg: float = DEFAULT_PAYLOAD_KG
    motorAxisMm: float | None = None  # None: take the review record's motor axis


@dataclass(frozen=True)
class RunSpec:
    reference: CellParams
    candidate: CellParams
    requirements: Requirements
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    tool: ToolSpec | None = None
    project: str = "default"
    title: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("extra")
        out["seeds"] = list(self.seeds)
        if self.tool is None:
            out.pop("tool")
        else:  # an absent motor axis means "from the review": keep it absent
            out["tool"] = {k: v for k, v in out["tool"].items() if v is not None}
        return out

    def digest(self) -> str:
        """SHA-256 of the canonical JSON form of the validated spec."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


class SpecError(ValueError):
    """Raised with every validation problem found in a spec."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid run spec:\n" + "\n".join(f"  - {p}" for p in problems))


def load_spec(path: Path) -> RunSpec:
    """Read a TOML (``.toml``) or JSON spec file and validate it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([f"cannot read spec file {path.name}: {exc.strerror}"]) from exc
    except UnicodeDecodeError as exc:
        raise SpecError([f"{path.name} is not UTF-8 text: {exc.reason} at byte {exc.start}"]) \
            from exc
    try:
        raw = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SpecError([f"{path.name} is not valid {path.suffix.lstrip('.').upper()}: {exc}"]) \
            from exc
    return parse_spec(raw)


def parse_spec(raw: Any) -> RunSpec:
    """Validate a spec mapping; raise :class:`SpecError` listing every problem."""
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        raise SpecError([f"spec must be a table/object, got {type(raw).__name__}"])
    _unknown(raw, TOP_LEVEL, "", problems)
    for required in ("reference", "candidate", "requirements"):
        if required not in raw:
            problems.append(f"{required}: missing (required table)")
    reference = _cell(raw.get("reference"), "reference", problems)
    candidate = _cell(raw.get("candidate"), "candidate", problems)
    requirements = _requirements(raw.get("requirements"), problems)
    seeds = _seeds(raw.get("seeds", list(DEFAULT_SEEDS)), problems)
    tool = _tool(raw.get("tool"), problems) if "tool" in raw else None
    texts = {k: _text(raw.get(k, default), k, problems)
             for k, default in (("title", ""), ("notes", ""), ("project", "default"))}
    if problems:
        raise SpecError(problems)
    return RunSpec(reference=reference, candidate=candidate, requirements=requirements,
                   seeds=seeds, tool=tool, **texts)


def _unknown(table: Mapping, allowed: set[str] | dict, path: str, problems: list[str]) -> None:
    for key in sorted(set(table) - set(allowed)):
        problems.append(
            f"{path}{key}: unknown key (allowed: {', '.join(sorted(allowed))})")


def _number(value: Any, path: str, lo: float, hi: float, unit: str,
            problems: list[str]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{path}: expected a number in [{lo}, {hi}] {unit}, got {value!r}")
        return None
    if not math.isfinite(value) or not lo <= value <= hi:
        problems.append(f"{path}: {value!r} is outside the allowed range [{lo}, {hi}] {unit}")
        return None
    return float(value)


def _table(value: Any, path: str, problems: list[str]) -> Mapping | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        problems.append(f"{path}: expected a table, got {type(value).__name__}")
        return None
    return value


def _bounded_table(value: Any, path: str, ranges: dict, problems: list[str]) -> dict | None:
    table = _table(value, path, problems)
    if table is None:
        return None
    _unknown(table, ranges, f"{path}.", problems)
    out = {}
    for key, (lo, hi, unit) in ranges.items():
        if key not in table:
            problems.append(f"{path}.{key}: missing (a number in [{lo}, {hi}] {unit})")
            continue
        out[key] = _number(table[key], f"{path}.{key}", lo, hi, unit, problems)
    return out if all(v is not None for v in out.values()) and len(out) == len(ranges) else None


def _cell(value: Any, path: str, problems: list[str]) -> CellParams | None:
    values = _bounded_table(value, path, CELL_RANGES, problems)
    return CellParams(**values) if values else None


def _requirements(value: Any, problems: list[str]) -> Requirements | None:
    values = _bounded_table(value, "requirements", REQUIREMENT_RANGES, problems)
    return Requirements(**values) if values else None


def _seeds(value: Any, problems: list[str]) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        problems.append(f"seeds: expected a non-empty list of integers, got {value!r}")
        return ()
    if len(value) > MAX_SEEDS:
        problems.append(f"seeds: {len(value)} seeds given, at most {MAX_SEEDS} allowed")
    bad = [s for s in value if isinstance(s, bool) or not isinstance(s, int) or s < 0
           or s >= 2**32]
    for s in bad:
        problems.append(f"seeds: {s!r} is not an integer in [0, 2^32)")
    valid = [s for s in value if s not in bad]
    if len(set(valid)) != len(valid):
        problems.append("seeds: duplicate seeds are not allowed")
    return tuple(value)


def _tool(value: Any, problems: list[str]) -> ToolSpec | None:
    table = _table(value, "tool", problems)
    if table is None:
        return None
    _unknown(table, TOOL_FIELDS, "tool.", problems)
    review_id = table.get("cadReviewId")
    if not isinstance(review_id, str) or not review_id:
        problems.append(f"tool.cadReviewId: expected a non-empty string, got {review_id!r}")
        review_id = None
    numbers = {}
    for key in ("payloadKg", "motorAxisMm"):
        if key in table:
            v = table[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                problems.append(f"tool.{key}: expected a finite number, got {v!r}")
            else:
                numbers[key] = float(v)
    if review_id is None:
        return None
    return ToolSpec(cadReviewId=review_id, **numbers)


def _text(value: Any, path: str, problems: list[str]) -> str:
    if not isinstance(value, str):
        problems.append(f"{path}: expected a string, got {type(value).__name__}")
        return ""
    return value
