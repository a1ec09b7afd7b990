"""run(spec) -> evidence folder: the stages in order, nothing else.

Stages: tool gate -> cell preparation (start pose, servos) and mass truth -> per-seed
trials (in parallel processes when more than one core is available; results are
identical to a serial run) -> checks and pairing -> exports and cross-checks ->
physical validation -> evidence files -> manifest and signature (atomic rename).
Everything is computed before anything is written.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import trimesh

from generator import cell, checks, rules, simulate, tool
from generator.evidence import provenance
from generator.evidence.atomic import RunExistsError, staged_run
from generator.evidence.canonical import write_json
from generator.evidence.sign import load_private_key
from generator.spec import CellParams, RunSpec

ROBOT_SCHEMA = "workcell-evidence/robot/v1"
RUN_SCHEMA = "workcell-evidence/run/v1"
SCOPE = "rigid-body-simulation"
LIMITS = (
    "Rigid-body simulation of a generic UR5e-class arm (datasheet link lengths, masses, joint "
    "limits, rated speeds and torque limits; link inertias approximated as cylinders) with a "
    "generic joint position controller and gravity compensation, not a vendor controller. "
    "The workpiece is attached kinematically while gripped: no grasp physics; its mass is "
    "added to the gripper at the TCP from grasp to place and it has no collision geometry. "
    "The mounted CAD part uses its nominal "
    "density; collisions use its convex hull. Not a safety assessment, not a certification, "
    "not a statement about any specific product."
)
SIDES = ("reference", "candidate")

Progress = Callable[[str, dict], None]


@dataclass(frozen=True)
class SideResult:
    side: str
    params: CellParams
    prepared: simulate.PreparedCell
    trials: list[dict]
    series: list[dict]
    checks: list[dict]
    tool_table: dict | None


def make_mounter(gated: tool.GatedTool | None):
    """The cell builder's tool hook for a gated part (None: no tool)."""
    if gated is None:
        return None

    def mount(spec: mujoco.MjSpec, gripper: mujoco.MjsBody) -> None:
        body = tool.mount_tool(spec, gripper, gated, cell.TOOL_MOUNT_POS, cell.TOOL_MOUNT_QUAT)
        body.gravcomp = 1.0

    return mount


def prepare_side(params: CellParams, gated: tool.GatedTool | None) -> simulate.PreparedCell:
    return simulate.prepare(params, make_mounter(gated))


# Worker-process state: each worker prepares its cell once.
_WORKER: dict[str, Any] = {}


def _init_worker(params: CellParams, gated, requirements) -> None:
    _WORKER["prepared"] = prepare_side(params, gated)
    _WORKER["requirements"] = requirements


def _run_one(seed: int):
    return simulate.run_seed(_WORKER["prepared"], seed, _WORKER["requirements"])


def run_trials(params: CellParams, gated, prepared: simulate.PreparedCell, seeds, requirements,
               workers: int, on_seed: Callable[[dict], None] | None = None):
    """Trials for every seed, in seed order. ``workers > 1`` uses processes."""
    if workers <= 1 or len(seeds) == 1:
        results = []
        for seed in seeds:
            results.append(simulate.run_seed(prepared, seed, requirements))
            if on_seed:
                on_seed(results[-1][0])
        return results
    ctx = get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(params, gated, requirements)) as pool:
        futures = {pool.submit(_run_one, seed): i for i, seed in enumerate(seeds)}
        results: list = [None] * len(seeds)
        for future in as_completed(futures):  # progress as seeds finish, results in order
            results[futures[future]] = future.result()
            if on_seed:
                on_seed(results[futures[future]][0])
        return results


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def simulate_side(side: str, params: CellParams, spec: RunSpec, gated, workers: int,
                  progress: Progress | None = None) -> SideResult:
    prepared = prepare_side(params, gated)
    table = tool.tool_mass_table(prepared.cell.model, gated) if gated is not None else None
    requirements = _req(spec)

    def on_seed(trial: dict) -> None:
        if progress:
            progress(side, trial)

    results = run_trials(params, gated, prepared, list(spec.seeds), requirements, workers,
                         on_seed)
    trials = [r[0] for r in results]
    series = [r[1] for r in results]
    return SideResult(side, params, prepared, trials, series,
                      checks.evaluate_checks(trials, requirements), table)


def _req(spec: RunSpec) -> dict:
    return {"maxCycleSeconds": spec.requirements.maxCycleSeconds,
            "minSuccessRate": spec.requirements.minSuccessRate}


def robot_record(result: SideResult, spec: RunSpec) -> dict:
    """robot.json for one side (CONTRACTS.md)."""
    requirements = _req(spec)
    prepared = result.prepared
    return {
        "schema": ROBOT_SCHEMA,
        "scope": SCOPE,
        "physicalValidation": False,
        "limits": LIMITS,
        "side": result.side,
        "cell": vars(result.params) | {"guardDistance": result.params.guard_distance_m},
        "requirements": requirements,
        "seeds": list(spec.seeds),
        "trials": result.trials,
        "checks": result.checks,
        "successRate": checks.success_rate(result.trials, requirements),
        "passed": checks.cell_passed(result.checks),
        "tool": result.tool_table,
        "model": model_summary(prepared),
    }


def model_summary(prepared: simulate.PreparedCell) -> dict:
    """Model facts a reviewer needs: timestep, integrator, servo gains, start pose, geoms."""
    model = prepared.cell.model
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    arm_geoms = set(prepared.cell.arm_geoms)
    geoms = []
    for g in range(model.ngeom):
        body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g])
        if g in arm_geoms:
            role = "arm"
        elif model.geom_contype[g] == cell.STATIC_CONTYPE:
            role = "guard" if body == "guards" else "equipment"
        else:
            role = "other"
        geoms.append({
            "name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g), "body": body,
            "type": mujoco.mjtGeom(model.geom_type[g]).name.removeprefix("mjGEOM_").lower(),
            "size": np.round(model.geom_size[g], 6), "pos": np.round(data.geom_xpos[g], 6),
            "mat": np.round(data.geom_xmat[g], 6), "role": role})
    return {
        "timestepS": model.opt.timestep,
        "integrator": mujoco.mjtIntegrator(model.opt.integrator).name,
        "gravityCompensation": "actuatorgravcomp (inside the joint torque limits)",
        "servo": "PD with velocity feed-forward: kp (q_d - q) + kv (qd_d - qd)",
        "servoKp": [float(model.actuator_gainprm[i, 0]) for i in range(0, model.nu, 2)],
        "servoKv": [float(model.actuator_gainprm[i, 0]) for i in range(1, model.nu, 2)],
        "settleToleranceRad": simulate.SETTLE_POSITION_RAD,
        "settleToleranceRadS": simulate.SETTLE_VELOCITY_RAD_S,
        "settleHoldS": simulate.SETTLE_HOLD_S,
        "settleWindowS": simulate.SETTLE_WINDOW_S,
        "startPoseRad": prepared.start_q,
        "startClearanceMm": prepared.start_clearance_m * 1000.0,
        "startClearancePair": list(prepared.start_clearance_pair),
        "bodyMassesKg": {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b):
                         float(model.body_mass[b]) for b in range(1, model.nbody)},
        "geoms": geoms,
    }


def verdict_for(sides: dict[str, SideResult], stages: list[dict]) -> tuple[str, list[str]]:
    """Accepted iff the candidate passes all four checks and every stage passed."""
    reasons = []
    for check in sides["candidate"].checks:
        if not check["passed"]:
            reasons.append(f"candidate {check['id']} failed: observed {check['observed']} "
                           f"{check['unit']}, required {check['required']}")
    for stage in stages:
        if not stage["passed"]:
            reasons.append(f"{stage['name']} failed: {stage.get('reason', '')}".rstrip(": "))
    return ("accepted" if not reasons else "rejected"), reasons


def compute(spec: RunSpec, store_dir: Path = tool.DEFAULT_REVIEW_STORE,
            workers: int | None = None, progress: Progress | None = None,
            reuse: dict | None = None):
    """All stages up to (not including) writing; raises ToolGateError/SpecError first.

    ``reuse`` (optional, caller-owned) holds side results by everything they depend on
    (cell, tool, seeds, requirements); the simulation is deterministic, so a cell that
    occurs in several runs (the demo's reference) is simulated once.
    """
    gated = tool.gate_tool(spec.tool, spec.project, store_dir) if spec.tool else None
    workers = default_workers() if workers is None else workers
    sides = {}
    for side in SIDES:
        params = getattr(spec, side)
        key = (params, None if gated is None else gated.to_dict().__repr__(), spec.seeds,
               spec.requirements)
        if reuse is not None and key in reuse:
            sides[side] = dataclasses.replace(reuse[key], side=side)
            continue
        sides[side] = simulate_side(side, params, spec, gated, workers, progress)
        if reuse is not None:
            reuse[key] = sides[side]
    return gated, sides


WORKPIECE_MANIFEST = Path(__file__).resolve().parents[1] / "evidence" / "assets" / \
    "workpiece.json"
_PHYSVAL_CACHE: dict[tuple, dict] = {}


def part_manifest(gated: tool.GatedTool, folder: Path):
    """An asset manifest for the mounted part: its STL beside it, inertia declared from the
    STL's volume integrals at the review's density (what the engine must reproduce)."""
    from generator.physval.manifest import declared_mesh_inertial, parse_manifest

    (folder / tool.TOOL_MESH_FILE).write_bytes(gated.stl_bytes)
    mesh = trimesh.load(folder / tool.TOOL_MESH_FILE, force="mesh")
    source = (f"trimesh {trimesh.__version__} volume integrals of the reviewed STL "
              f"x {gated.record.density_kg_m3} kg/m^3 (review {gated.record.id})")
    data = {"schema": "workcell-evidence/asset/v1", "name": gated.record.id,
            "description": "The CAD part mounted on the gripper (from its accepted review).",
            "geometry": {"kind": "mesh", "file": tool.TOOL_MESH_FILE, "length_unit": "mm",
                         "collision": "convex_hull"},
            "inertials": [declared_mesh_inertial(mesh, gated.record.density_kg_m3,
                                                 tool.STL_TO_M, source)]}
    return parse_manifest(data, folder, "mounted part")


def physval_record(params: CellParams, gated: tool.GatedTool | None) -> dict:
    """physval.json: the object suite on the mounted part and the workpiece, and the robot
    model checks on the arm as mounted. The arm, tool and workpiece are the same in both
    cells of a run, so this is computed once per run (and cached per process)."""
    from generator.physval.robot import robot_model_checks
    from generator.physval.suite import physval_for_run

    key = (params, None if gated is None else (gated.record.stl_sha256, gated.payload_kg,
                                               gated.motor_axis_mm))
    if key not in _PHYSVAL_CACHE:
        with tempfile.TemporaryDirectory() as tmp:
            assets = {"workpiece": WORKPIECE_MANIFEST}
            if gated is not None:
                assets["mountedPart"] = part_manifest(gated, Path(tmp))
            robot = robot_model_checks(cell.build_spec(params, make_mounter(gated)))
            _PHYSVAL_CACHE[key] = physval_for_run(assets, robot)
    return _PHYSVAL_CACHE[key]


def write_exports(cell_dir: Path, result: SideResult, gated, seed: int) -> tuple[dict, list]:
    """scene.xml (+ tool.stl), scene.usda, robot.glb and the cross-checks of one cell.

    Returns the robot.json additions (``exports``, ``crosschecks``) and the stages that
    can reject the run. newton.json is written by the Newton cross-check itself.
    """
    from generator.crosscheck.dynamics import dynamics_crosscheck
    from generator.crosscheck.newton import newton_crosscheck
    from generator.export.gltf import write_glb
    from generator.export.mjcf import write_mjcf
    from generator.export.usd import write_usd

    prepared = result.prepared
    waypoints, _ = simulate.solve_targets(prepared, simulate.targets_for(prepared, seed))
    mjcf = write_mjcf(prepared, cell_dir, gated.stl_bytes if gated is not None else None)
    usd = write_usd(prepared, cell_dir)
    glb = write_glb(prepared, waypoints[2], cell_dir) | {"poseSeed": seed, "pose": "pick"}
    newton = newton_crosscheck(cell_dir)
    dynamics = dynamics_crosscheck(cell_dir, reference=prepared.cell.model)
    write_json(cell_dir / "dynamics.json", dynamics)
    side = result.side
    stages = [
        rules.stage(f"{side}: {rules.STAGE_USD}", "scene.usda", usd),
        rules.stage(f"{side}: {rules.STAGE_NEWTON}", "newton.json", newton),
        rules.stage(f"{side}: {rules.STAGE_DYNAMICS}", "dynamics.json", dynamics),
    ]
    summary = {k: newton[k] for k in ("passed", "reasons", "worstPositionErrorMm",
                                      "worstAngleErrorDeg", "articulations", "revoluteJoints",
                                      "orphanJoints", "configurations") if k in newton}
    return ({"exports": {"mjcf": mjcf, "usd": usd, "gltf": glb},
             "crosschecks": {"newton": summary | {"file": "newton.json"},
                             "dynamics": {"passed": dynamics["passed"],
                                          "reasons": dynamics.get("reasons", []),
                                          "file": "dynamics.json"}}}, stages)


def write_run(folder: Path, spec: RunSpec, gated, sides: dict[str, SideResult],
              command: list[str]) -> dict:
    """Write run.json and both cell folders into ``folder`` (no manifest, no signature)."""
    stages: list[dict] = []
    for side, result in sides.items():
        cell_dir = folder / side
        cell_dir.mkdir(parents=True)
        exports, side_stages = write_exports(cell_dir, result, gated, spec.seeds[0])
        stages += side_stages
        write_json(cell_dir / "robot.json", robot_record(result, spec) | exports)
        write_json(cell_dir / "timeseries.json", {"schema": "workcell-evidence/timeseries/v1",
                                                  "seeds": result.series})
    physval = physval_record(spec.reference, gated)
    write_json(folder / "physval.json", physval)
    stages.append(rules.physval_stage(physval))
    verdict, reasons = verdict_for(sides, stages)
    requirements = _req(spec)
    run = {
        "schema": RUN_SCHEMA,
        "title": spec.title,
        "notes": spec.notes,
        "project": spec.project,
        "spec": spec.to_dict(),
        "specDigest": spec.digest(),
        "seeds": list(spec.seeds),
        "verdict": verdict,
        "reasons": reasons,
        "stages": stages,
        "cells": {side: {"passed": checks.cell_passed(r.checks),
                         "successRate": checks.success_rate(r.trials, requirements),
                         "checks": r.checks} for side, r in sides.items()},
        "pairing": checks.pair_trials(sides["reference"].trials, sides["candidate"].trials,
                                      requirements),
        "createdAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "provenance": provenance.collect(),
        "command": command,
    }
    write_json(folder / "run.json", run)
    return run


def run(spec: RunSpec, out_dir: Path, sign_key: Path | None = None, overwrite: bool = False,
        store_dir: Path = tool.DEFAULT_REVIEW_STORE, workers: int | None = None,
        progress: Progress | None = None, command: list[str] | None = None) -> dict:
    """Compute everything, then write the run atomically (manifest, optional signature)."""
    out_dir = Path(out_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:  # fail before computing
        raise RunExistsError(
            f"{out_dir} exists and is not empty; choose another --out or pass --overwrite")
    key = load_private_key(sign_key) if sign_key is not None else None  # before computing
    gated, sides = compute(spec, store_dir, workers, progress)
    with staged_run(out_dir, sign_key=key, overwrite=overwrite) as tmp:
        result = write_run(tmp, spec, gated, sides, command or [])
    return result


def print_progress(side: str, trial: dict) -> None:
    status = "ok" if trial["success"] else (trial["failureReason"] or "failed")
    cycle = trial["cycleSeconds"]
    cycle_text = "never settled" if cycle is None else f"{cycle:.3f} s"
    print(f"  {side:9s} seed {trial['seed']:4d}: {status:14s} cycle {cycle_text}, "
          f"min clearance {trial['minClearanceMm']:.1f} mm", file=sys.stderr, flush=True)


def reproduce(run_dir: Path, store_dir: Path = tool.DEFAULT_REVIEW_STORE,
              workers: int | None = None) -> dict:
    """Re-run a recorded run's spec here and diff every per-seed field per side.

    Returns ``{"provenance": [differences], "sides": {side: [TrialDiff]}}``.
    """
    from generator.evidence.canonical import read_json
    from generator.evidence.reproduce import diff_trials
    from generator.spec import parse_spec

    run = read_json(run_dir / "run.json")
    spec = parse_spec(run["spec"])
    recorded_env = run.get("provenance")
    env_diffs = provenance.compare(recorded_env, provenance.current_for(recorded_env))
    _, sides = compute(spec, store_dir, workers)
    diffs = {}
    for side, result in sides.items():
        recorded = read_json(run_dir / side / "robot.json")["trials"]
        diffs[side] = diff_trials(recorded, result.trials)
    return {"provenance": env_diffs, "sides": diffs}
