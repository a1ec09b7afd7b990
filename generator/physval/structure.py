"""Group 1 (file and structure): load, resources, units, watertightness, parts.

Protocol 004 group 1: load in the target engine; resolve every dependency, unit, part,
collision and joint graph; a required part that is missing blocks the task tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import trimesh

from generator.physval.manifest import MESH_BODY, AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged, not_applicable
from generator.physval.scene import (
    MESH_INERTIA_NAME,
    Placement,
    compile_spec,
    load_trimesh,
    mesh_spec,
    mjcf_spec,
)
from generator.physval.thresholds import SIM_TIMESTEP_S

SRC = "protocol 004 group 1"
# Project choice: a rigid asset handled by this cell is between 1 mm and 2 m across; a mesh
# in millimetres declared as metres (1000x too large) or the reverse falls outside.
EXTENT_RANGE_M = (1e-3, 2.0)


@dataclass(frozen=True)
class Loaded:
    """The compiled asset (None when it did not load) and the load error."""

    model: mujoco.MjModel | None
    error: str


def load_asset(manifest: AssetManifest) -> Loaded:
    """Compile the asset as a free body (mesh) or as written (MJCF)."""
    try:
        spec = (mesh_spec(manifest, Placement()) if manifest.kind == "mesh"
                else mjcf_spec(manifest))
        model, _ = compile_spec(spec, SIM_TIMESTEP_S)
    except (ValueError, OSError) as exc:  # mujoco raises ValueError on compile errors
        # Evidence never holds machine paths: report files relative to the manifest.
        return Loaded(None, str(exc).strip().replace(f"{manifest.root}/", ""))
    return Loaded(model, "")


def check_load(manifest: AssetManifest, loaded: Loaded) -> CheckResult:
    """structure.load: the asset compiles in MuJoCo."""
    return judged(
        "structure.load", Group.STRUCTURE, loaded.model is not None,
        {"mujocoVersion": mujoco.__version__, "error": loaded.error,
         "meshInertia": MESH_INERTIA_NAME},
        Threshold("compiles", "", "==", SRC),
        f"mujoco {mujoco.__version__} MjSpec compile; mesh inertia mode {MESH_INERTIA_NAME}",
        f"the asset does not load: {loaded.error}",
    )


def referenced_files(manifest: AssetManifest) -> list[str]:
    """Manifest-relative files the asset needs (manifest files plus MJCF mesh files)."""
    files = [manifest.file, *manifest.collision_parts]
    if manifest.kind == "mjcf" and manifest.path(manifest.file).is_file():
        spec = mujoco.MjSpec.from_file(str(manifest.path(manifest.file)))
        base = manifest.path(manifest.file).parent / (spec.meshdir or "")
        root = manifest.root
        for mesh in spec.meshes:
            if mesh.file:
                files.append(str((base / mesh.file).resolve().relative_to(root, walk_up=True)))
    return files


def check_resources(manifest: AssetManifest) -> CheckResult:
    """structure.resources: every referenced file exists."""
    try:
        files = referenced_files(manifest)
    except ValueError as exc:
        files, parse_error = [manifest.file], str(exc).strip()
    else:
        parse_error = ""
    missing = [f for f in files if not manifest.path(f).is_file()]
    return judged(
        "structure.resources", Group.STRUCTURE, not missing and not parse_error,
        {"files": sorted(files), "missing": sorted(missing), "parseError": parse_error},
        Threshold(0, "missing files", "==", SRC), "every file named by the manifest or MJCF",
        f"unresolved resources: {missing or parse_error}",
    )


def check_units(manifest: AssetManifest, loaded: Loaded) -> CheckResult:
    """structure.units: declared length unit gives a plausible size; SI mass; radians."""
    if loaded.model is None:
        return _blocked("structure.units")
    m = loaded.model
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    data = mujoco.MjData(m)
    mujoco.mj_forward(m, data)
    for g in range(m.ngeom):
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        r = m.geom_rbound[g]
        lo = np.minimum(lo, data.geom_xpos[g] - r)
        hi = np.maximum(hi, data.geom_xpos[g] + r)
    extent = float(np.max(hi - lo))
    ok = EXTENT_RANGE_M[0] <= extent <= EXTENT_RANGE_M[1]
    return judged(
        "structure.units", Group.STRUCTURE, ok,
        {"lengthUnit": manifest.length_unit, "metresPerUnit": manifest.scale,
         "extentM": extent, "massUnit": "kg", "angleUnit": "rad (compiled model)"},
        Threshold(list(EXTENT_RANGE_M), "m", "within",
                  f"{SRC} (units); range is a project choice"),
        "largest extent of the bounding spheres of all non-plane geoms after unit scaling",
        f"asset is {extent:.4g} m across: the declared length unit "
        f"{manifest.length_unit!r} is probably wrong",
    )


def check_watertight(manifest: AssetManifest) -> CheckResult:
    """structure.watertight: the mass-carrying mesh is closed and consistently wound.

    STACK.md: MuJoCo's exact inertia does not reject an open mesh (one missing triangle gave
    -2.5 % mass), so closure is checked here before any mass is trusted.
    """
    if manifest.kind != "mesh":
        return not_applicable("structure.watertight", Group.STRUCTURE,
                              "MJCF asset: its geoms are checked by the engine")
    try:
        mesh = load_trimesh(manifest)
    except (ValueError, OSError) as exc:
        return _blocked("structure.watertight", f"mesh does not load: {exc}")
    closed = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
    ok = bool(closed.is_watertight and closed.is_winding_consistent and closed.volume > 0)
    return judged(
        "structure.watertight", Group.STRUCTURE, ok,
        {"watertight": bool(closed.is_watertight),
         "windingConsistent": bool(closed.is_winding_consistent),
         "volumeM3": float(closed.volume), "faces": len(closed.faces)},
        Threshold(True, "", "==", f"{SRC}; STACK.md (exact inertia accepts open meshes)"),
        f"trimesh {trimesh.__version__} after merging duplicate vertices",
        "mesh is open or inconsistently wound: its volume, mass and inertia are not defined",
    )


def check_parts(manifest: AssetManifest, loaded: Loaded) -> CheckResult:
    """structure.parts: body/joint/geom counts; declared bodies and joints exist."""
    if loaded.model is None:
        return _blocked("structure.parts")
    m = loaded.model
    names = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m.nbody)}
    missing = [i.body for i in manifest.inertials if i.body not in names]
    problems = [f"body {b!r} declared in inertials is not in the model" for b in missing]
    if manifest.kind == "mesh":
        ncoll = int(np.sum(m.geom_contype + m.geom_conaffinity > 0))
        if ncoll == 0:
            problems.append("no collision geom")
        if MESH_BODY not in names:
            problems.append("no object body")
    hinge = manifest.hinge
    if hinge is not None:
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, hinge.joint)
        if j < 0:
            problems.append(f"declared hinge joint {hinge.joint!r} is missing")
        elif m.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE:
            problems.append(f"joint {hinge.joint!r} is not a hinge")
    return judged(
        "structure.parts", Group.STRUCTURE, not problems,
        {"bodies": int(m.nbody - 1), "joints": int(m.njnt), "geoms": int(m.ngeom),
         "collisionGeoms": int(np.sum(m.geom_contype + m.geom_conaffinity > 0)),
         "meshes": int(m.nmesh), "problems": problems},
        Threshold(0, "missing parts", "==", SRC),
        "compiled model counts (bodies exclude the world body)", "; ".join(problems),
    )


def _blocked(check_id: str, why: str = "the asset did not load") -> CheckResult:
    from generator.physval.results import not_run

    return not_run(check_id, Group.STRUCTURE, why)


def run_structure(manifest: AssetManifest) -> tuple[list[CheckResult], Loaded]:
    """All group-1 checks, and the loaded model for the later groups."""
    loaded = load_asset(manifest)
    checks = [check_load(manifest, loaded), check_resources(manifest),
              check_units(manifest, loaded), check_watertight(manifest),
              check_parts(manifest, loaded)]
    return checks, loaded
