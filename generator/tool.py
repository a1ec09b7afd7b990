"""The CAD part on the gripper: review store, gate, mounting and mass truth (design section 2).

Pipeline stage, in order:

1. :func:`gate_tool` finds the tool's review in the store (a folder of JSON records), refuses
   anything but a completed, accepted review of the run's project, checks the ranges,
   recomputes the STL's SHA-256 and checks the mesh is a closed binary STL. Every refusal
   is a :class:`ToolGateError` with a :class:`ToolErrorCode`; nothing is written.
2. :func:`mount_tool` welds a ``cad_tool`` body to the gripper holding the exact STL as a mesh
   geom (mesh inertia mode ``exact``, said explicitly) and the payload as a box.
3. :func:`tool_mass_table` reads the tool mass back from the compiled model, fails closed
   with ``TOOL_MASS_MISMATCH`` when it is more than 3 % from the B-Rep mass, and returns the
   mass table for robot.json.

Three representations, never mixed:

* the **B-Rep solid** (volume x density by the CAD kernel, stored in the review) is the
  mass reference;
* the **exact mesh volume** of the STL (MuJoCo ``exact`` inertia) gives mass, centre of mass
  and inertia for the dynamics;
* the **convex hull** of the STL is what MuJoCo collides with: MuJoCo's collision pipeline
  treats every mesh geom as its convex hull, whatever the inertia mode. The hull reaching
  into a guard is therefore a collision even where the real, non-convex part would not
  touch; that is the conservative side.

The convex-hull mass and MuJoCo's default-mode (``legacy``) mass are computed on small side
models and shown for contrast only: for the thin-walled sample they are several times the
true mass.

Units: STL and review geometry in millimetres, masses in the review in grams; the MuJoCo
model is SI (m, kg). The STL is scaled by 0.001 when mounted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn

import mujoco
import numpy as np
import trimesh

from generator.rules import MASS_TOLERANCE_REL, mass_within_tolerance, relative_to_brep
from generator.spec import ToolSpec

DEFAULT_REVIEW_STORE = Path(__file__).resolve().parents[1] / "evidence" / "reviews"
TOOL_BODY = "cad_tool"
TOOL_MESH = "cad_tool_mesh"  # name of both the mesh asset and the mesh geom
PAYLOAD_GEOM = "cad_payload"
TOOL_MESH_FILE = "tool.stl"  # exported scene.xml references the STL by this name
STL_TO_M = 0.001  # STL coordinates are millimetres

# Gate ranges, design section 2 (inclusive).
PAYLOAD_RANGE_KG = (0.0, 3.0)
MOTOR_AXIS_RANGE_MM = (5.0, 120.0)
BREP_MASS_RANGE_G = (1.0, 2000.0)
# The 3 % mass rule (MASS_TOLERANCE_REL) lives in generator.rules.

# Collision filter (cell convention): the static scene uses contype=1, conaffinity=2; the
# arm side (links, the part and its payload) uses contype=2, conaffinity=1, so arm geoms
# collide with the scene and not with each other.
ARM_CONTYPE = 2
ARM_CONAFFINITY = 1
TOOL_GEOM_GROUP = 1
# NEMA 17 body used as the payload box: 42.3 mm square (NEMA ICS 16), 40 mm long along the
# motor axis (tool-frame y in the samples) [m, half extents].
PAYLOAD_HALF_EXTENTS_M = (0.04230 / 2, 0.040 / 2, 0.04230 / 2)

REVIEW_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHA256_PATTERN = re.compile(r"[0-9a-f]{64}")
REVIEW_STATUSES = ("open", "in-review", "completed")
REVIEW_VERDICTS = ("pending", "changes-requested", "rejected", "accepted")
_STL_HEADER_BYTES = 84  # 80-byte header + uint32 triangle count
_STL_TRIANGLE_BYTES = 50  # normal + 3 vertices (12 float32) + uint16 attribute
_STL_DTYPE = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])


class ToolErrorCode(str, Enum):
    """Why the tool gate refused (each names one rule of design section 2)."""

    TOOL_INVALID_REVIEW_ID = "TOOL_INVALID_REVIEW_ID"
    TOOL_REVIEW_NOT_FOUND = "TOOL_REVIEW_NOT_FOUND"
    TOOL_BAD_RECORD = "TOOL_BAD_RECORD"
    TOOL_NOT_ACCEPTED = "TOOL_NOT_ACCEPTED"
    TOOL_OUT_OF_RANGE = "TOOL_OUT_OF_RANGE"
    TOOL_DIGEST_MISMATCH = "TOOL_DIGEST_MISMATCH"
    TOOL_BAD_MESH = "TOOL_BAD_MESH"
    TOOL_MASS_MISMATCH = "TOOL_MASS_MISMATCH"


class ToolGateError(Exception):
    """A refused tool: ``code`` says which rule, the message what would make it pass.

    The CLI exits with :attr:`exit_code` (2) and writes nothing.
    """

    exit_code = 2

    def __init__(self, code: ToolErrorCode, message: str):
        self.code = code
        self.detail = message
        super().__init__(f"{code.value}: {message}")


class MeshInertia(Enum):
    """Mesh inertia mode for the mounted STL. Only ``EXACT`` is right for a non-convex part.

    ``DEFAULT`` leaves the mode unset, so MuJoCo's default applies (``legacy`` in 4.0.0);
    it exists for the negative control and the contrast column of the mass table.
    """

    EXACT = "exact"
    CONVEX = "convex"
    LEGACY = "legacy"
    SHELL = "shell"
    DEFAULT = "default"

    def apply(self, mesh: mujoco.MjsMesh) -> None:
        """Set this mode on an MjSpec mesh (``DEFAULT`` leaves MuJoCo's default)."""
        if self is not MeshInertia.DEFAULT:
            mesh.inertia = getattr(mujoco.mjtMeshInertia, f"mjMESH_INERTIA_{self.name}")


@dataclass(frozen=True)
class ReviewRecord:
    """One CAD review (a JSON file ``<id>.json`` in the store); masses in g, lengths in mm."""

    id: str
    project: str
    status: str
    verdict: str
    stl: str
    stl_sha256: str
    brep_mass_g: float
    density_kg_m3: float
    motor_axis_mm: float
    reviewer: str
    reviewed_at: str

    def to_dict(self) -> dict[str, Any]:
        """The record in its stored JSON form (camelCase keys)."""
        return {json_key: getattr(self, attr) for json_key, attr in _RECORD_FIELDS.items()}


# JSON key -> attribute, and the JSON type each key must have.
_RECORD_FIELDS = {
    "id": "id", "project": "project", "status": "status", "verdict": "verdict", "stl": "stl",
    "stlSha256": "stl_sha256", "brepMassG": "brep_mass_g", "densityKgM3": "density_kg_m3",
    "motorAxisMm": "motor_axis_mm", "reviewer": "reviewer", "reviewedAt": "reviewed_at",
}
_NUMBER_FIELDS = ("brepMassG", "densityKgM3", "motorAxisMm")


@dataclass(frozen=True)
class MeshFacts:
    """What the gate measured on the STL: triangles, closed-surface volume [mm3], bounds [mm]."""

    triangles: int
    vertices: int
    volume_mm3: float
    bounds_mm: tuple[tuple[float, float, float], tuple[float, float, float]]


@dataclass(frozen=True)
class GatedTool:
    """A tool that passed the gate: the review, the STL bytes it digests to, payload, axis.

    ``stl_path`` is where the STL was read on this machine; it never goes into evidence
    (use :meth:`to_dict`).
    """

    record: ReviewRecord
    project: str
    stl_bytes: bytes = field(repr=False)
    stl_sha256: str
    stl_path: Path
    payload_kg: float
    motor_axis_mm: float
    mesh: MeshFacts

    def to_dict(self) -> dict[str, Any]:
        """Evidence-safe summary (no machine paths)."""
        return {"reviewId": self.record.id, "project": self.project, "stl": self.record.stl,
                "stlSha256": self.stl_sha256, "payloadKg": self.payload_kg,
                "motorAxisMm": self.motor_axis_mm, "brepMassG": self.record.brep_mass_g,
                "densityKgM3": self.record.density_kg_m3, "triangles": self.mesh.triangles,
                "meshVolumeMm3": self.mesh.volume_mm3}


# --------------------------------------------------------------------------- review store


def check_review_id(review_id: object) -> str:
    """Return ``review_id`` if it is a plain identifier, else raise TOOL_INVALID_REVIEW_ID.

    A review id is an identifier, never a path: ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` with no
    ``..``; slashes, backslashes, NUL, leading dots and absolute paths are refused.
    """
    if not isinstance(review_id, str) or not _is_plain_name(review_id):
        raise ToolGateError(
            ToolErrorCode.TOOL_INVALID_REVIEW_ID,
            f"review id {review_id!r} is not an identifier: use 1-128 characters from "
            "A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..' "
            "(a review id is never a path)")
    return review_id


def _is_plain_name(name: str) -> bool:
    return REVIEW_ID_PATTERN.fullmatch(name) is not None and ".." not in name


def parse_review(raw: Any, source: str) -> ReviewRecord:
    """Validate one review mapping; raise TOOL_BAD_RECORD listing every problem.

    Args:
        raw: the decoded JSON of one record.
        source: the record's file name, for messages.
    """
    if not isinstance(raw, Mapping):
        _bad_record(source, [f"must be a JSON object, got {type(raw).__name__}"])
    problems = [f"{key}: unknown field (allowed: {', '.join(_RECORD_FIELDS)})"
                for key in sorted(set(raw) - set(_RECORD_FIELDS))]
    for key in _RECORD_FIELDS:
        problems += _field_problems(key, raw.get(key), key in raw)
    if problems:
        _bad_record(source, problems)
    values = {attr: float(raw[key]) if key in _NUMBER_FIELDS else raw[key]
              for key, attr in _RECORD_FIELDS.items()}
    return ReviewRecord(**values)


def _field_problems(key: str, value: Any, present: bool) -> list[str]:
    if not present:
        return [f"{key}: missing (required)"]
    if key in _NUMBER_FIELDS:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            return [f"{key}: {value!r} must be a finite number"]
        if key == "densityKgM3" and value <= 0:
            return [f"{key}: {value!r} must be > 0 kg/m3"]
        return []
    if not isinstance(value, str) or not value.strip():
        return [f"{key}: {value!r} must be a non-empty string"]
    return _string_problems(key, value)


def _string_problems(key: str, value: str) -> list[str]:
    if key == "id" and not _is_plain_name(value):
        return [f"id: {value!r} is not an identifier ([A-Za-z0-9][A-Za-z0-9._-]{{0,127}})"]
    if key == "stl" and not (_is_plain_name(value) and value.lower().endswith(".stl")):
        return [f"stl: {value!r} must be a plain .stl file name in the store folder"]
    if key == "stlSha256" and SHA256_PATTERN.fullmatch(value) is None:
        return [f"stlSha256: {value!r} must be 64 lowercase hex digits"]
    if key == "status" and value not in REVIEW_STATUSES:
        return [f"status: {value!r} not one of {', '.join(REVIEW_STATUSES)}"]
    if key == "verdict" and value not in REVIEW_VERDICTS:
        return [f"verdict: {value!r} not one of {', '.join(REVIEW_VERDICTS)}"]
    if key == "reviewedAt":
        try:
            date.fromisoformat(value)
        except ValueError:
            return [f"reviewedAt: {value!r} must be an ISO date (YYYY-MM-DD)"]
    return []


def _bad_record(source: str, problems: Sequence[str]) -> NoReturn:
    lines = "\n".join(f"  - {p}" for p in problems)
    raise ToolGateError(ToolErrorCode.TOOL_BAD_RECORD,
                        f"review record {source} is malformed; fix these fields:\n{lines}")


def _inside_store(store_dir: Path, name: str) -> Path:
    """``store_dir/name``, refusing a link that resolves outside the store folder."""
    path = store_dir / name
    if path.exists() and path.resolve().parent != store_dir.resolve():
        raise ToolGateError(ToolErrorCode.TOOL_BAD_RECORD,
                            f"{name} in the review store resolves outside the store folder")
    return path


def load_review(store_dir: Path, review_id: str) -> ReviewRecord:
    """Load and validate the record ``<review_id>.json`` from the store folder.

    Raises:
        ToolGateError: TOOL_INVALID_REVIEW_ID, TOOL_REVIEW_NOT_FOUND or TOOL_BAD_RECORD.
    """
    store_dir = Path(store_dir)
    check_review_id(review_id)
    path = _inside_store(store_dir, f"{review_id}.json")
    if not path.is_file():
        known = sorted(p.stem for p in store_dir.glob("*.json")) if store_dir.is_dir() else []
        raise ToolGateError(
            ToolErrorCode.TOOL_REVIEW_NOT_FOUND,
            f"no review {review_id!r} in the review store ({len(known)} records: "
            f"{', '.join(known[:12]) or 'none'}); use the id of an existing review")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        _bad_record(path.name, [f"not readable JSON: {exc}"])
    record = parse_review(raw, path.name)
    if record.id != review_id:
        _bad_record(path.name, [f"id: {record.id!r} does not match the file name {path.name}"])
    return record


def load_review_store(store_dir: Path = DEFAULT_REVIEW_STORE) -> dict[str, ReviewRecord]:
    """Load every ``*.json`` record of a store; report all malformed records at once."""
    records: dict[str, ReviewRecord] = {}
    problems: list[str] = []
    for path in sorted(Path(store_dir).glob("*.json")):
        try:
            records[path.stem] = load_review(store_dir, path.stem)
        except ToolGateError as exc:
            problems.append(exc.detail)
    if problems:
        raise ToolGateError(ToolErrorCode.TOOL_BAD_RECORD, "\n".join(problems))
    return records


# --------------------------------------------------------------------------- gate


def gate_tool(tool: ToolSpec, project: str, store_dir: Path = DEFAULT_REVIEW_STORE) -> GatedTool:
    """Admit a run's tool or refuse it with one code (design section 2).

    Args:
        tool: the spec's ``ToolSpec`` (``cadReviewId``, ``payloadKg`` [kg], ``motorAxisMm``
            [mm] or None to take the review's motor axis).
        project: the run spec's project; the review must belong to it.
        store_dir: the review store folder.

    Raises:
        ToolGateError: with TOOL_INVALID_REVIEW_ID, TOOL_REVIEW_NOT_FOUND, TOOL_BAD_RECORD,
            TOOL_NOT_ACCEPTED, TOOL_OUT_OF_RANGE, TOOL_DIGEST_MISMATCH or TOOL_BAD_MESH.
    """
    store_dir = Path(store_dir)
    record = load_review(store_dir, tool.cadReviewId)
    _check_accepted(record, project)
    axis_mm = record.motor_axis_mm if tool.motorAxisMm is None else float(tool.motorAxisMm)
    _check_ranges(record, float(tool.payloadKg), axis_mm)
    stl_path = _inside_store(store_dir, record.stl)
    try:
        data = stl_path.read_bytes()
    except OSError as exc:
        raise ToolGateError(ToolErrorCode.TOOL_BAD_MESH,
                            f"review {record.id}: cannot read its STL {record.stl} from the "
                            f"review store ({exc.strerror}); restore the reviewed file") from exc
    digest = _check_digest(record, data)
    mesh = inspect_stl(data, record.stl)
    return GatedTool(record=record, project=project, stl_bytes=data, stl_sha256=digest,
                     stl_path=stl_path, payload_kg=float(tool.payloadKg), motor_axis_mm=axis_mm,
                     mesh=mesh)


def _check_accepted(record: ReviewRecord, project: str) -> None:
    reasons = []
    if record.project != project:
        reasons.append(f"it belongs to project {record.project!r}, not {project!r}")
    if record.status != "completed":
        reasons.append(f"its status is {record.status!r}, not 'completed'")
    if record.verdict != "accepted":
        reasons.append(f"its verdict is {record.verdict!r}, not 'accepted'")
    if reasons:
        raise ToolGateError(
            ToolErrorCode.TOOL_NOT_ACCEPTED,
            f"review {record.id} cannot be mounted: {'; '.join(reasons)}. Use a completed, "
            f"accepted review of project {project!r}")


def _check_ranges(record: ReviewRecord, payload_kg: float, axis_mm: float) -> None:
    checks = (("payloadKg", payload_kg, PAYLOAD_RANGE_KG, "kg"),
              ("motorAxisMm", axis_mm, MOTOR_AXIS_RANGE_MM, "mm"),
              (f"brepMassG (review {record.id})", record.brep_mass_g, BREP_MASS_RANGE_G, "g"))
    problems = [f"{name} = {value:g} {unit} is outside [{lo:g}, {hi:g}] {unit}"
                for name, value, (lo, hi), unit in checks
                if not (math.isfinite(value) and lo <= value <= hi)]
    if problems:
        raise ToolGateError(ToolErrorCode.TOOL_OUT_OF_RANGE,
                            f"tool of review {record.id}: {'; '.join(problems)}; bring each "
                            "value into its range")


def _check_digest(record: ReviewRecord, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    if digest != record.stl_sha256:
        raise ToolGateError(
            ToolErrorCode.TOOL_DIGEST_MISMATCH,
            f"review {record.id}: {record.stl} has SHA-256 {digest}, the review approved "
            f"{record.stl_sha256}; mount the exact reviewed file or get the changed part "
            "reviewed")
    return digest


def inspect_stl(data: bytes, name: str) -> MeshFacts:
    """Check ``data`` is a closed binary STL and measure it; raise TOOL_BAD_MESH if not.

    MuJoCo reads binary STL only, and ``exact`` inertia silently accepts an open mesh (a
    missing triangle gave -2.5 % in a trial), so closure is checked here.

    Args:
        data: the file's bytes (coordinates in mm).
        name: the file name, for messages.
    """
    triangles = _stl_triangles(data, name)
    if not np.all(np.isfinite(triangles)):
        _bad_mesh(name, "has non-finite vertex coordinates")
    mesh = trimesh.Trimesh(vertices=triangles.reshape(-1, 3),
                           faces=np.arange(3 * len(triangles)).reshape(-1, 3), process=True)
    if not mesh.is_watertight:
        open_edges = int((np.bincount(mesh.edges_unique_inverse) == 1).sum())
        _bad_mesh(name, f"is not a closed surface ({open_edges} open edges); an exact mass "
                        "needs a watertight mesh, re-export it from the B-Rep solid")
    if not mesh.is_winding_consistent or mesh.volume <= 0:
        _bad_mesh(name, f"has inconsistent or inverted triangle winding (volume "
                        f"{mesh.volume:.3f} mm3); re-export it from the B-Rep solid")
    return MeshFacts(triangles=len(triangles), vertices=len(mesh.vertices),
                     volume_mm3=_round(mesh.volume),
                     bounds_mm=(_triple(mesh.bounds[0]), _triple(mesh.bounds[1])))


def _stl_triangles(data: bytes, name: str) -> np.ndarray:
    """Triangles of a binary STL as an (n, 3, 3) float64 array [mm]."""
    if len(data) < _STL_HEADER_BYTES:
        _bad_mesh(name, f"is {len(data)} bytes, shorter than a binary STL header (84 bytes)")
    (count,) = struct.unpack_from("<I", data, 80)
    expected = _STL_HEADER_BYTES + _STL_TRIANGLE_BYTES * count
    if len(data) != expected:
        kind = "an ASCII STL" if data[:5].lower() == b"solid" else "not a binary STL"
        _bad_mesh(name, f"is {kind} or truncated: its header announces {count} triangles "
                        f"({expected} bytes) but the file has {len(data)} bytes; MuJoCo reads "
                        "binary STL only")
    if count < 4:
        _bad_mesh(name, f"has {count} triangles; a closed solid needs at least 4")
    tri = np.frombuffer(data, dtype=_STL_DTYPE, count=count, offset=_STL_HEADER_BYTES)
    return tri["vertices"].astype(np.float64)


def _bad_mesh(name: str, problem: str) -> NoReturn:
    raise ToolGateError(ToolErrorCode.TOOL_BAD_MESH, f"STL {name} {problem}")


# --------------------------------------------------------------------------- mounting


def mount_tool(
    spec: mujoco.MjSpec,
    parent: mujoco.MjsBody,
    gated: GatedTool,
    frame_pos: Sequence[float] = (0.0, 0.0, 0.0),
    frame_quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
    *,
    mesh_file: str = TOOL_MESH_FILE,
    assets: dict[str, bytes] | None = None,
    mesh_inertia: MeshInertia = MeshInertia.EXACT,
) -> mujoco.MjsBody:
    """Weld the gated part and its payload to ``parent`` as the body ``cad_tool``.

    The mesh geom carries the part's mass at the review's density with mesh inertia mode
    ``mesh_inertia`` (``EXACT`` unless a test forces another); MuJoCo places the recentred
    mesh back at its STL coordinates in the body frame, so the body frame is the tool frame.
    The payload is a NEMA 17-sized box of ``payload_kg`` centred on the tool z axis at the
    motor axis. Both geoms are arm side (contype 2, conaffinity 1, group 1); MuJoCo collides
    the mesh geom as its convex hull.

    Args:
        spec: the model being built; the STL bytes are added to ``spec.assets``.
        parent: body to weld to (the gripper / flange).
        gated: a tool admitted by :func:`gate_tool`.
        frame_pos: tool frame origin in the parent frame [m].
        frame_quat: tool frame orientation in the parent frame (w, x, y, z).
        mesh_file: file name the mesh is referenced by (``tool.stl`` beside scene.xml).
        assets: optional extra asset map (e.g. an exporter's) that also receives the bytes.
        mesh_inertia: mesh inertia mode; only ``EXACT`` passes :func:`tool_mass_table`
            for a non-convex part.

    Returns:
        The new ``cad_tool`` body (no joint: welded).
    """
    if not _is_plain_name(mesh_file):
        raise ValueError(f"mesh_file {mesh_file!r} must be a plain file name such as tool.stl")
    spec.assets = {**spec.assets, mesh_file: gated.stl_bytes}
    if assets is not None:
        assets[mesh_file] = gated.stl_bytes
    mesh = spec.add_mesh(name=TOOL_MESH, file=mesh_file, scale=[STL_TO_M] * 3)
    mesh_inertia.apply(mesh)
    body = parent.add_body(name=TOOL_BODY, pos=list(frame_pos), quat=list(frame_quat))
    arm_side = {"contype": ARM_CONTYPE, "conaffinity": ARM_CONAFFINITY, "group": TOOL_GEOM_GROUP}
    body.add_geom(name=TOOL_MESH, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=TOOL_MESH,
                  density=gated.record.density_kg_m3, rgba=[0.75, 0.77, 0.80, 1.0], **arm_side)
    body.add_geom(name=PAYLOAD_GEOM, type=mujoco.mjtGeom.mjGEOM_BOX,
                  size=list(PAYLOAD_HALF_EXTENTS_M), pos=[0.0, 0.0, gated.motor_axis_mm * STL_TO_M],
                  mass=gated.payload_kg, rgba=[0.15, 0.15, 0.17, 1.0], **arm_side)
    return body


# --------------------------------------------------------------------------- mass truth


@dataclass(frozen=True)
class PartInertia:
    """The part alone under one mesh inertia mode: mass [g], COM [mm], principal inertia."""

    mode: str
    mass_g: float
    com_mm: tuple[float, float, float]
    principal_inertia_kg_m2: tuple[float, float, float]


def part_inertia(gated: GatedTool, mode: MeshInertia) -> PartInertia:
    """Compile a side model holding only the part and read its inertia back.

    Used for the exact, convex-hull and default-mode columns of the mass table; the COM is
    in the tool (STL) frame.

    Raises:
        ToolGateError: TOOL_BAD_MESH when MuJoCo refuses the mesh.
    """
    side = mujoco.MjSpec()
    side.assets = {TOOL_MESH_FILE: gated.stl_bytes}
    mesh = side.add_mesh(name=TOOL_MESH, file=TOOL_MESH_FILE, scale=[STL_TO_M] * 3)
    mode.apply(mesh)
    body = side.worldbody.add_body(name=TOOL_BODY)
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=TOOL_MESH,
                  density=gated.record.density_kg_m3)
    model = _compile(side, gated.record.stl)
    used = mode.value if mode is not MeshInertia.DEFAULT else _default_mode_name(mesh)
    return PartInertia(mode=used, mass_g=_round(model.body_mass[1] * 1000.0),
                       com_mm=_triple(model.body_ipos[1] * 1000.0),
                       principal_inertia_kg_m2=_sig(model.body_inertia[1]))


def _default_mode_name(mesh: mujoco.MjsMesh) -> str:
    return mesh.inertia.name.removeprefix("mjMESH_INERTIA_").lower()


def _compile(spec: mujoco.MjSpec, name: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except ValueError as exc:
        raise ToolGateError(ToolErrorCode.TOOL_BAD_MESH,
                            f"MuJoCo refused the STL {name}: {exc}") from exc


def _triple(values: np.ndarray, digits: int = 6) -> tuple[float, float, float]:
    return (_round(values[0], digits), _round(values[1], digits), _round(values[2], digits))


def _round(value: float, digits: int = 6) -> float:
    """Round for evidence: drops float noise (1e-15 mm) so tables diff cleanly; +0.0 for -0.0."""
    return round(float(value), digits) + 0.0


def _sig(values: np.ndarray, digits: int = 9) -> tuple[float, float, float]:
    """Three values to ``digits`` significant digits (inertia [kg m2])."""
    return tuple(float(f"{float(v):.{digits}g}") for v in values)  # type: ignore[return-value]


def tool_mass_table(model: mujoco.MjModel, gated: GatedTool) -> dict[str, Any]:
    """Check the compiled tool mass against the B-Rep mass and build robot.json's ``tool``.

    Args:
        model: the compiled model holding the ``cad_tool`` body from :func:`mount_tool`.
        gated: the same gated tool.

    Returns:
        The mass table: masses [g], payload [kg], centre of mass [mm], principal inertia
        [kg m2], differences relative to the B-Rep mass, and each representation's purpose.

    Raises:
        ToolGateError: TOOL_MASS_MISMATCH when the compiled part mass (tool body minus
            payload) is more than 3 % from the B-Rep mass.
    """
    body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, TOOL_BODY)
    if body_id < 0:
        raise ValueError(f"the model has no body {TOOL_BODY!r}; mount the tool first")
    body_g = _round(model.body_mass[body_id] * 1000.0)
    used_g = _round(body_g - gated.payload_kg * 1000.0)
    brep_g = gated.record.brep_mass_g
    _check_mass(gated, used_g, body_g, brep_g)
    exact = part_inertia(gated, MeshInertia.EXACT)
    convex = part_inertia(gated, MeshInertia.CONVEX)
    default = part_inertia(gated, MeshInertia.DEFAULT)
    return {
        **gated.to_dict(),
        "inertiaMode": MeshInertia.EXACT.value,
        "massToleranceRel": MASS_TOLERANCE_REL,
        "massesG": {"brep": brep_g, "exactMesh": exact.mass_g, "used": used_g,
                    "convexHull": convex.mass_g, "defaultMode": default.mass_g,
                    "toolBody": body_g},
        "defaultModeName": default.mode,
        "relativeToBrep": relative_to_brep({"exactMesh": exact.mass_g, "used": used_g,
                                            "convexHull": convex.mass_g,
                                            "defaultMode": default.mass_g}, brep_g),
        "part": {"centreOfMassMm": exact.com_mm,
                 "principalInertiaKgM2": exact.principal_inertia_kg_m2},
        "toolBody": {"massKg": _round(body_g / 1000.0, 9),
                     "centreOfMassMm": _triple(model.body_ipos[body_id] * 1000.0),
                     "principalInertiaKgM2": _sig(model.body_inertia[body_id]),
                     "principalAxesQuat": [_round(q, 9) for q in model.body_iquat[body_id]]},
        "representations": {
            "brep": "mass reference (kernel volume x density, from the review)",
            "exactMesh": "dynamics: mass, centre of mass and inertia (MuJoCo inertia='exact')",
            "convexHull": "collision only (MuJoCo collides mesh geoms as their convex hull)",
            "defaultMode": "contrast only, never used (MuJoCo's default mesh inertia mode)",
        },
        "passed": mass_within_tolerance(used_g, brep_g),
    }


def _check_mass(gated: GatedTool, used_g: float, body_g: float, brep_g: float) -> None:
    rel = _rel(used_g, brep_g)
    if not mass_within_tolerance(used_g, brep_g):
        raise ToolGateError(
            ToolErrorCode.TOOL_MASS_MISMATCH,
            f"tool mass mismatch: the compiled model gives {used_g:.3f} g for the part of "
            f"review {gated.record.id} ({body_g:.3f} g tool body minus "
            f"{gated.payload_kg * 1000.0:.3f} g payload), its B-Rep mass is {brep_g:.3f} g "
            f"({rel * 100:+.2f} %, limit {MASS_TOLERANCE_REL * 100:g} %); mount the reviewed "
            "STL with mesh inertia 'exact' at the review's density")


def _rel(value: float, reference: float) -> float:
    """Relative difference of ``value`` from ``reference`` (1 = 100 %), to 1e-8."""
    return _round((value - reference) / reference, 8)
