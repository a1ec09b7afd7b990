"""Asset manifest: parse JSON or TOML, validate at the boundary, return frozen dataclasses.

Every problem is collected (field, value, what is allowed) and raised once as
:class:`ManifestError`. Unknown keys are errors. Paths are relative to the manifest.

Schema ``workcell-evidence/asset/v1``::

    schema = "workcell-evidence/asset/v1"
    name = "mug"
    [geometry]
    kind = "mesh"              # "mesh" (binary STL / OBJ, one free rigid body) | "mjcf"
    file = "mug.stl"
    length_unit = "m"          # "m" | "mm": unit of the file's coordinates
    collision = "coacd"        # mesh only: "convex_hull" | "coacd"
    collision_parts = [...]    # optional precomputed CoACD parts (convex meshes)
    [[inertials]]              # one per body; for a mesh the body is "object"
    body = "object"
    mass_kg = 0.28
    com_m = [x, y, z]          # body (mesh) frame, metres
    inertia_kg_m2 = [[..],[..],[..]]   # about the COM, body axes
    source = "trimesh volume x density"
    density_kg_m3 = 2400       # optional
    [cavity]                   # optional
    probe_radius_m, entry_point_m, entry_direction, min_depth_m
    [hinge]                    # optional, mjcf only
    joint, axis, range_rad, target_rad, torque_limit_nm, tolerance_rad
    [engine]                   # optional engine parameters the asset carries
    friction = [slide, torsion, roll]; solref = [timeconst_s, dampratio]; gravcomp = 0..1
    [measurements]             # optional real-world measurements
    mass_kg = {value, uncertainty}; com_m = {value, uncertainty};
    friction_sliding = {value, uncertainty}; conditions = "..."
    restitution = {drop_height_m, rebound_height_m, tolerance}
                               # free drop from rest: drop / first-rebound apex heights [m]
                               # (same reference point, e.g. the lowest point); coefficient
                               # e = sqrt(rebound / drop); tolerance = allowed |e_sim - e|
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "workcell-evidence/asset/v1"
KINDS = ("mesh", "mjcf")
LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
COLLISIONS = ("convex_hull", "coacd")
MESH_SUFFIXES = (".stl", ".obj")
MESH_BODY = "object"  # name of the single body built for a mesh asset


class ManifestError(ValueError):
    """Every problem found in a manifest, reported at once."""

    def __init__(self, source: str, problems: list[str]):
        self.problems = problems
        super().__init__(f"{source}: {len(problems)} problem(s):\n  - " + "\n  - ".join(problems))


@dataclass(frozen=True)
class Inertial:
    """Declared inertial of one body: SI units, body frame, inertia about the COM."""

    body: str
    mass_kg: float
    com_m: tuple[float, float, float]
    inertia_kg_m2: tuple[tuple[float, float, float], ...]
    source: str
    density_kg_m3: float | None = None


@dataclass(frozen=True)
class Cavity:
    """A cavity that a ball of ``probe_radius_m`` must be able to enter.

    entry_point_m: a point on the opening, body frame [m]; entry_direction: unit vector into
    the cavity; min_depth_m: how far past the entry point the ball centre must get [m].
    """

    probe_radius_m: float
    entry_point_m: tuple[float, float, float]
    entry_direction: tuple[float, float, float]
    min_depth_m: float


@dataclass(frozen=True)
class Hinge:
    """A hinge that a limited torque must drive to ``target_rad`` within ``tolerance_rad``.

    axis: declared axis in the parent body frame (unit vector); range_rad: limits [rad];
    torque_limit_nm: drive torque bound [N m].
    """

    joint: str
    axis: tuple[float, float, float]
    range_rad: tuple[float, float]
    target_rad: float
    torque_limit_nm: float
    tolerance_rad: float


@dataclass(frozen=True)
class Measured:
    """A real-world measurement with its (one-sigma or bound) uncertainty, SI units."""

    value: float | tuple[float, ...]
    uncertainty: float


@dataclass(frozen=True)
class Bounce:
    """A measured free drop onto a rigid floor: released from rest ``drop_height_m`` above
    it, the first rebound apex ``rebound_height_m`` above it (same reference point) [m].
    ``tolerance`` bounds |e_sim - e| on the coefficient of restitution (dimensionless)."""

    drop_height_m: float
    rebound_height_m: float
    tolerance: float

    @property
    def coefficient(self) -> float:
        """e = sqrt(h_rebound / h_drop) (energy-free ballistic flight before and after)."""
        return (self.rebound_height_m / self.drop_height_m) ** 0.5


@dataclass(frozen=True)
class Measurements:
    """Real-world measurements for REAL_WORLD_FIT; None where not measured."""

    mass_kg: Measured | None = None
    com_m: Measured | None = None
    friction_sliding: Measured | None = None
    conditions: str = ""
    restitution: Bounce | None = None


@dataclass(frozen=True)
class Engine:
    """Engine parameters carried by the asset (MuJoCo semantics)."""

    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)  # MuJoCo defaults
    solref: tuple[float, float] = (0.02, 1.0)  # MuJoCo defaults [s, 1]
    gravcomp: float = 0.0


@dataclass(frozen=True)
class AssetManifest:
    """A validated asset manifest; ``root`` is the folder paths are relative to."""

    name: str
    kind: str
    file: str
    length_unit: str
    collision: str | None
    collision_parts: tuple[str, ...]
    inertials: tuple[Inertial, ...]
    cavity: Cavity | None
    hinge: Hinge | None
    engine: Engine
    measurements: Measurements | None
    root: Path
    description: str = ""

    @property
    def scale(self) -> float:
        """Metres per file length unit."""
        return LENGTH_UNITS[self.length_unit]

    def path(self, rel: str) -> Path:
        """Absolute path of a manifest-relative file."""
        return (self.root / rel).resolve()


class _Collector:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, where: str, value: Any, allowed: str) -> None:
        self.problems.append(f"{where} = {value!r}: expected {allowed}")

    def keys(self, where: str, table: Mapping[str, Any], required: set[str], optional: set[str]
             ) -> bool:
        ok = True
        for key in sorted(required - set(table)):
            self.problems.append(f"{where}.{key}: missing (required)")
            ok = False
        for key in sorted(set(table) - required - optional):
            allowed = ", ".join(sorted(required | optional))
            self.problems.append(f"{where}.{key}: unknown key (allowed: {allowed})")
        return ok

    def number(self, where: str, value: Any, lo: float = -math.inf, hi: float = math.inf,
               lo_open: bool = False) -> float:
        if value is None:  # a missing required key: already reported by keys()
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
                value):
            self.add(where, value, "a finite number")
            return math.nan
        bad_lo = value <= lo if lo_open else value < lo
        if bad_lo or value > hi:
            self.add(where, value, f"a number in {'(' if lo_open else '['}{lo}, {hi}]")
        return float(value)

    def vector(self, where: str, value: Any, n: int = 3, unit: bool = False) -> tuple[float, ...]:
        if value is None:  # a missing required key: already reported by keys()
            return (math.nan,) * n
        if not isinstance(value, (list, tuple)) or len(value) != n:
            self.add(where, value, f"a list of {n} numbers")
            return (math.nan,) * n
        out = tuple(self.number(f"{where}[{i}]", v) for i, v in enumerate(value))
        if unit and all(math.isfinite(v) for v in out):
            norm = math.sqrt(sum(v * v for v in out))
            if norm < 1e-9:
                self.add(where, value, "a non-zero direction")
            else:
                out = tuple(v / norm for v in out)
        return out

    def text(self, where: str, value: Any, choices: tuple[str, ...] | None = None) -> str:
        if value is None:  # a missing required key: already reported by keys()
            return ""
        if not isinstance(value, str) or not value:
            self.add(where, value, "a non-empty string")
            return ""
        if choices is not None and value not in choices:
            self.add(where, value, f"one of {', '.join(choices)}")
        return value


def load_manifest(path: Path) -> AssetManifest:
    """Read and validate a manifest file (``.json`` or ``.toml``)."""
    path = Path(path)
    try:
        raw_text = path.read_bytes()
    except OSError as exc:
        raise ManifestError(str(path), [f"cannot read the manifest: {exc.strerror}"]) from None
    try:
        data = tomllib.loads(raw_text.decode()) if path.suffix == ".toml" else json.loads(
            raw_text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError(str(path), [f"not valid {path.suffix[1:].upper()}: {exc}"]) from None
    return parse_manifest(data, path.parent.resolve(), str(path.name))


def parse_manifest(data: Any, root: Path, source: str = "manifest") -> AssetManifest:
    """Validate a manifest mapping; raise :class:`ManifestError` listing every problem."""
    c = _Collector()
    if not isinstance(data, Mapping):
        raise ManifestError(source, ["the manifest must be a table/object"])
    c.keys("", data, {"schema", "name", "geometry", "inertials"},
           {"description", "cavity", "hinge", "engine", "measurements"})
    if data.get("schema") != SCHEMA:
        c.add("schema", data.get("schema"), repr(SCHEMA))
    name = c.text("name", data.get("name"))
    geometry = data.get("geometry", {})
    kind, file, unit, collision, parts = _geometry(c, geometry if isinstance(geometry, Mapping)
                                                   else {})
    inertials = _inertials(c, data.get("inertials", []), kind)
    cavity = _cavity(c, data["cavity"]) if "cavity" in data else None
    hinge = _hinge(c, data["hinge"], kind) if "hinge" in data else None
    engine = _engine(c, data.get("engine", {}))
    measurements = _measurements(c, data["measurements"]) if "measurements" in data else None
    if c.problems:
        raise ManifestError(source, c.problems)
    return AssetManifest(name, kind, file, unit, collision, parts, inertials, cavity, hinge,
                         engine, measurements, root, str(data.get("description", "")))


def _geometry(c: _Collector, g: Mapping[str, Any]
              ) -> tuple[str, str, str, str | None, tuple[str, ...]]:
    c.keys("geometry", g, {"kind", "file"}, {"length_unit", "collision", "collision_parts"})
    kind = c.text("geometry.kind", g.get("kind"), KINDS)
    file = c.text("geometry.file", g.get("file"))
    unit = c.text("geometry.length_unit", g.get("length_unit", "m"), tuple(LENGTH_UNITS))
    if kind == "mesh" and file and not file.lower().endswith(MESH_SUFFIXES):
        c.add("geometry.file", file, f"a mesh file ({', '.join(MESH_SUFFIXES)})")
    if kind == "mjcf" and file and not file.lower().endswith(".xml"):
        c.add("geometry.file", file, "an MJCF file (.xml)")
    collision = None
    parts: tuple[str, ...] = ()
    if kind == "mesh":
        collision = c.text("geometry.collision", g.get("collision", "convex_hull"), COLLISIONS)
        raw_parts = g.get("collision_parts", [])
        if not isinstance(raw_parts, list) or not all(isinstance(p, str) for p in raw_parts):
            c.add("geometry.collision_parts", raw_parts, "a list of mesh file paths")
        else:
            parts = tuple(raw_parts)
        if parts and collision != "coacd":
            c.add("geometry.collision_parts", raw_parts, "only with collision = 'coacd'")
    elif "collision" in g or "collision_parts" in g:
        c.add("geometry.collision", g.get("collision"), "nothing for an MJCF asset (its geoms "
              "are its collision model)")
    return kind, file, unit, collision, parts


def _inertials(c: _Collector, raw: Any, kind: str) -> tuple[Inertial, ...]:
    if not isinstance(raw, list) or not raw:
        c.add("inertials", raw, "a non-empty list of {body, mass_kg, com_m, inertia_kg_m2, "
              "source}")
        return ()
    out = []
    for i, item in enumerate(raw):
        where = f"inertials[{i}]"
        if not isinstance(item, Mapping):
            c.add(where, item, "a table")
            continue
        c.keys(where, item, {"body", "mass_kg", "com_m", "inertia_kg_m2", "source"},
               {"density_kg_m3"})
        body = c.text(f"{where}.body", item.get("body"))
        if kind == "mesh" and body and body != MESH_BODY:
            c.add(f"{where}.body", body, f"{MESH_BODY!r} for a mesh asset")
        mass = c.number(f"{where}.mass_kg", item.get("mass_kg"), 0.0, lo_open=True)
        com = c.vector(f"{where}.com_m", item.get("com_m"))
        inertia = item.get("inertia_kg_m2")
        rows: tuple[tuple[float, float, float], ...] = ((math.nan,) * 3,) * 3
        if not isinstance(inertia, list) or len(inertia) != 3:
            c.add(f"{where}.inertia_kg_m2", inertia, "a 3x3 matrix (list of 3 rows)")
        else:
            rows = tuple(c.vector(f"{where}.inertia_kg_m2[{r}]", row)  # type: ignore[misc]
                         for r, row in enumerate(inertia))
            if all(math.isfinite(v) for row in rows for v in row) and any(
                    abs(rows[a][b] - rows[b][a]) > 1e-12 * max(1e-30, abs(rows[a][b]))
                    for a in range(3) for b in range(3)):
                c.add(f"{where}.inertia_kg_m2", inertia, "a symmetric matrix")
        source = c.text(f"{where}.source", item.get("source"))
        density = None
        if "density_kg_m3" in item:
            density = c.number(f"{where}.density_kg_m3", item["density_kg_m3"], 0.0, lo_open=True)
        out.append(Inertial(body, mass, com, rows, source, density))  # type: ignore[arg-type]
    if kind == "mesh" and len(out) != 1:
        c.add("inertials", f"{len(out)} entries", "exactly one entry for a mesh asset")
    return tuple(out)


def _cavity(c: _Collector, raw: Any) -> Cavity | None:
    if not isinstance(raw, Mapping):
        c.add("cavity", raw, "a table")
        return None
    c.keys("cavity", raw, {"probe_radius_m", "entry_point_m", "entry_direction", "min_depth_m"},
           set())
    return Cavity(
        c.number("cavity.probe_radius_m", raw.get("probe_radius_m"), 0.0, 1.0, lo_open=True),
        c.vector("cavity.entry_point_m", raw.get("entry_point_m")),  # type: ignore[arg-type]
        c.vector("cavity.entry_direction", raw.get("entry_direction"),  # type: ignore[arg-type]
                 unit=True),
        c.number("cavity.min_depth_m", raw.get("min_depth_m"), 0.0, 1.0, lo_open=True),
    )


def _hinge(c: _Collector, raw: Any, kind: str) -> Hinge | None:
    if not isinstance(raw, Mapping):
        c.add("hinge", raw, "a table")
        return None
    if kind != "mjcf":
        c.add("hinge", "declared", "an MJCF asset (a mesh asset is a single rigid body)")
    c.keys("hinge", raw, {"joint", "axis", "range_rad", "target_rad", "torque_limit_nm",
                          "tolerance_rad"}, set())
    lo, hi = c.vector("hinge.range_rad", raw.get("range_rad"), n=2)
    if math.isfinite(lo) and math.isfinite(hi) and lo >= hi:
        c.add("hinge.range_rad", raw.get("range_rad"), "[lower, upper] with lower < upper")
    target = c.number("hinge.target_rad", raw.get("target_rad"))
    if math.isfinite(target) and lo < hi and not lo <= target <= hi:
        c.add("hinge.target_rad", target, f"a target inside range_rad [{lo}, {hi}]")
    return Hinge(
        c.text("hinge.joint", raw.get("joint")),
        c.vector("hinge.axis", raw.get("axis"), unit=True),  # type: ignore[arg-type]
        (lo, hi), target,
        c.number("hinge.torque_limit_nm", raw.get("torque_limit_nm"), 0.0, lo_open=True),
        c.number("hinge.tolerance_rad", raw.get("tolerance_rad"), 0.0, math.pi, lo_open=True),
    )


def _engine(c: _Collector, raw: Any) -> Engine:
    if not isinstance(raw, Mapping):
        c.add("engine", raw, "a table")
        return Engine()
    c.keys("engine", raw, set(), {"friction", "solref", "gravcomp"})
    default = Engine()
    friction = c.vector("engine.friction", raw.get("friction", list(default.friction)))
    solref = c.vector("engine.solref", raw.get("solref", list(default.solref)), n=2)
    if any(v <= 0 for v in solref):
        c.add("engine.solref", raw.get("solref"), "[timeconst_s > 0, dampratio > 0]")
    if any(v < 0 for v in friction):
        c.add("engine.friction", raw.get("friction"), "non-negative coefficients")
    gravcomp = c.number("engine.gravcomp", raw.get("gravcomp", 0.0), 0.0, 1.0)
    return Engine(friction, solref, gravcomp)  # type: ignore[arg-type]


def _measured(c: _Collector, where: str, raw: Any, n: int | None) -> Measured | None:
    if not isinstance(raw, Mapping):
        c.add(where, raw, "a table {value, uncertainty}")
        return None
    c.keys(where, raw, {"value", "uncertainty"}, set())
    value: float | tuple[float, ...] = (c.number(f"{where}.value", raw.get("value")) if n is None
                                        else c.vector(f"{where}.value", raw.get("value"), n))
    return Measured(value, c.number(f"{where}.uncertainty", raw.get("uncertainty"), 0.0,
                                    lo_open=True))


def _measurements(c: _Collector, raw: Any) -> Measurements | None:
    if not isinstance(raw, Mapping):
        c.add("measurements", raw, "a table")
        return None
    c.keys("measurements", raw, set(), {"mass_kg", "com_m", "friction_sliding", "conditions",
                                        "restitution"})
    return Measurements(
        _measured(c, "measurements.mass_kg", raw["mass_kg"], None) if "mass_kg" in raw else None,
        _measured(c, "measurements.com_m", raw["com_m"], 3) if "com_m" in raw else None,
        _measured(c, "measurements.friction_sliding", raw["friction_sliding"], None)
        if "friction_sliding" in raw else None,
        str(raw.get("conditions", "")),
        _bounce(c, raw["restitution"]) if "restitution" in raw else None,
    )


MAX_DROP_HEIGHT_M = 2.0  # project choice: longer drops leave the short bounce experiment


def _bounce(c: _Collector, raw: Any) -> Bounce | None:
    where = "measurements.restitution"
    if not isinstance(raw, Mapping):
        c.add(where, raw, "a table {drop_height_m, rebound_height_m, tolerance}")
        return None
    c.keys(where, raw, {"drop_height_m", "rebound_height_m", "tolerance"}, set())
    drop = c.number(f"{where}.drop_height_m", raw.get("drop_height_m"), 0.0, MAX_DROP_HEIGHT_M,
                    lo_open=True)
    rebound = c.number(f"{where}.rebound_height_m", raw.get("rebound_height_m"), 0.0,
                       MAX_DROP_HEIGHT_M)
    if math.isfinite(drop) and math.isfinite(rebound) and 0 < drop < rebound:
        c.add(f"{where}.rebound_height_m", rebound,
              f"a rebound no higher than the drop height ({drop} m)")
    tolerance = c.number(f"{where}.tolerance", raw.get("tolerance"), 0.0, 1.0, lo_open=True)
    return Bounce(drop, rebound, tolerance)


def declared_mesh_inertial(mesh, density_kg_m3: float, scale: float, source: str
                           ) -> dict[str, Any]:
    """A manifest inertial declared from a mesh: trimesh signed-volume integrals x density.

    Args:
        mesh: a closed ``trimesh.Trimesh`` (as re-read from its STL).
        density_kg_m3: material density [kg/m^3].
        scale: mesh units to metres (0.001 for millimetres).
        source: how the numbers were obtained (written into the manifest).
    """
    m = mesh.copy()
    m.apply_scale(scale)
    m.density = density_kg_m3
    return {"body": MESH_BODY, "mass_kg": float(m.mass), "com_m": m.center_mass.tolist(),
            "inertia_kg_m2": m.moment_inertia.tolist(), "density_kg_m3": density_kg_m3,
            "source": source}
