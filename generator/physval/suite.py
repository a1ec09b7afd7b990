"""The object suite: every group of protocol 004 on one asset, plus negative controls.

``run_object_suite(manifest)`` returns the physval record of one asset (plain JSON types);
``physval_for_run(...)`` assembles physval.json for a run folder (mounted CAD part,
workpiece, robot model); ``validate_object(path, out_dir)`` is the CLI's single call.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mujoco

from generator.physval import (
    cavity,
    controls,
    hinge,
    inertia,
    material,
    numerics,
    passive,
    realfit,
    response,
    structure,
)
from generator.physval.manifest import AssetManifest, load_manifest
from generator.physval.results import CheckResult, derive_states
from generator.physval.scene import MESH_INERTIA_NAME
from generator.physval.thresholds import PROTOCOL, SIM_TIMESTEP_S

SCHEMA = "workcell-evidence/physval/v1"
ASSET_SCHEMA = "workcell-evidence/physval-asset/v1"
SCOPE = (
    "Self-consistency of a simulated rigid-body asset in MuJoCo (structure, mass properties, "
    "passive and impulse response, timestep, declared cavity/hinge function). Not a claim "
    "about the real object: REAL_WORLD_FIT stays UNVERIFIED without real measurements."
)


def object_checks(manifest: AssetManifest) -> tuple[list[CheckResult], list[dict[str, Any]]]:
    """Run every group on the asset; return the checks and the declared task records."""
    checks, loaded = structure.run_structure(manifest)
    ok = loaded.model is not None
    checks += inertia.run_inertia(manifest, loaded.model)
    checks += passive.run_passive(manifest, ok)
    checks += response.run_response(manifest, ok)
    checks.append(numerics.check_timestep(manifest, ok))
    checks.append(cavity.check_cavity(manifest, ok))
    checks += hinge.run_hinge(manifest, ok)
    checks += material.run_material(manifest, ok)
    checks += realfit.check_real(manifest, ok)
    return checks, task_records(manifest)


def task_records(manifest: AssetManifest) -> list[dict[str, Any]]:
    """TASK_VALIDATED(task, fixture, conditions) records for the declared tasks."""
    tasks = []
    if manifest.cavity is not None:
        c = manifest.cavity
        tasks.append({
            "task": f"contain a {c.probe_radius_m * 1000:g} mm-radius ball "
                    f"{c.min_depth_m * 1000:g} mm deep",
            "fixture": "asset welded to the world; gravity along the entry direction",
            "conditions": f"MuJoCo {mujoco.__version__}, dt {SIM_TIMESTEP_S} s, collision "
                          f"model {manifest.collision}, water-dense ball, one probe position",
            "checks": ["geometry.cavity"]})
    if manifest.hinge is not None:
        h = manifest.hinge
        tasks.append({
            "task": f"open hinge {h.joint!r} to {h.target_rad:g} rad (+- {h.tolerance_rad:g}) "
                    f"with <= {h.torque_limit_nm:g} N m and close it again",
            "fixture": "base as modelled (fixed to the world), gravity on",
            "conditions": f"MuJoCo {mujoco.__version__}, dt {SIM_TIMESTEP_S} s, torque-limited "
                          "position servo; no real opening torque measured",
            "checks": ["mechanism.hinge_axis", "mechanism.hinge_sweep"]})
    return tasks


def _digests(manifest: AssetManifest) -> list[dict[str, Any]]:
    out = []
    try:
        files = structure.referenced_files(manifest)
    except ValueError:
        files = [manifest.file]
    for rel in sorted(set(files)):
        path = manifest.path(rel)
        if path.is_file():
            data = path.read_bytes()
            out.append({"path": Path(rel).as_posix(), "sha256": hashlib.sha256(data).hexdigest(),
                        "size": len(data)})
        else:
            out.append({"path": Path(rel).as_posix(), "sha256": None, "size": None})
    return out


def run_object_suite(manifest: AssetManifest | Path, *, negative_controls: bool = True
                     ) -> dict[str, Any]:
    """The physval record of one asset.

    Args:
        manifest: a validated manifest, or the path of a manifest file (JSON/TOML).
        negative_controls: also run (once per process, cached) every check's known-bad
            control and attach the record to the check; False marks them not run.

    Returns:
        ``{schema, scope, asset, engine, checks, states, summary}``; every check carries
        ``negativeControl {ran, failedAsExpected, ...}``.
    """
    if not isinstance(manifest, AssetManifest):
        manifest = load_manifest(Path(manifest))
    checks, tasks = object_checks(manifest)
    ctl = controls.negative_controls() if negative_controls else {}
    records = []
    for c in checks:
        rec = c.to_json()
        rec["negativeControl"] = ctl.get(c.id, {"ran": False, "failedAsExpected": False,
                                               "reason": "negative controls not requested"})
        records.append(rec)
    states = [s.to_json() for s in derive_states(checks, tasks)]
    return {
        "schema": ASSET_SCHEMA, "scope": SCOPE, "protocol": PROTOCOL,
        "asset": {"name": manifest.name, "kind": manifest.kind, "description":
                  manifest.description, "lengthUnit": manifest.length_unit,
                  "collision": manifest.collision, "files": _digests(manifest),
                  "declaredInertials": [{"body": i.body, "massKg": i.mass_kg, "comM": i.com_m,
                                         "inertiaKgM2": i.inertia_kg_m2, "source": i.source,
                                         "densityKgM3": i.density_kg_m3}
                                        for i in manifest.inertials]},
        "engine": {"name": "mujoco", "version": mujoco.__version__,
                   "meshInertia": MESH_INERTIA_NAME, "integrator": "Euler",
                   "timestepS": SIM_TIMESTEP_S},
        "checks": records,
        "states": states,
        "summary": dict(sorted(Counter(c.status.value for c in checks).items())),
    }


def physval_for_run(assets: Mapping[str, AssetManifest | Path],
                    robot: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """physval.json content for one cell side.

    Args:
        assets: role -> manifest, e.g. ``{"mountedPart": ..., "workpiece": ...}``.
        robot: the robot-model record (``generator.physval.robot.robot_model_checks``), or
            None when it was not run (then recorded as UNVERIFIED, never as passed).
    """
    return {
        "schema": SCHEMA, "protocol": PROTOCOL, "scope": SCOPE,
        "assets": {role: run_object_suite(m) for role, m in sorted(assets.items())},
        "robot": dict(robot) if robot is not None else
        {"status": "UNVERIFIED", "reason": "robot-model checks were not run for this side"},
    }


def validate_object(manifest_path: Path, out_dir: Path) -> dict[str, Any]:
    """Run the suite on one manifest and write ``out_dir/physval.json``; return the record."""
    from generator.evidence.canonical import write_json

    record = {"schema": SCHEMA, "protocol": PROTOCOL, "scope": SCOPE,
              "assets": {"object": run_object_suite(Path(manifest_path))}}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "physval.json", record)
    return record
