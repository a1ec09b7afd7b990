"""Group 4 (passive rigid-body behaviour): contact-free fall and six seeded drops.

Protocol 004 group 4 and its threshold list: 100 ms contact-free fall within 2 mm of
1/2 g t^2; six seeded drops (yaw, small tilt, 40-100 mm) with finite state, contact made,
max penetration < 15 mm, and after 5 s v < 0.05 m/s and w < 0.5 rad/s.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged
from generator.physval.scene import GROUND_NAME, com_velocity, load_trimesh
from generator.physval.thresholds import (
    DROP_COUNT,
    DROP_HEIGHT_RANGE_M,
    DROP_MAX_ANG_SPEED_RAD_S,
    DROP_MAX_LIN_SPEED_M_S,
    DROP_MAX_PENETRATION_M,
    DROP_MAX_TILT_RAD,
    DROP_SETTLE_TIME_S,
    FALL_DURATION_S,
    FALL_TOL_M,
    GRAVITY_M_S2,
    SIM_TIMESTEP_S,
)

SRC = "protocol 004 group 4"
DROP_SEEDS = tuple(range(DROP_COUNT))  # seeds of numpy.random.default_rng, one per drop


def check_fall(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """passive.fall: COM drop after 100 ms without contacts vs 1/2 g t^2 (within 2 mm)."""
    cid = "passive.fall"
    if (skip := freebody.applicability(manifest, loaded_ok, cid, Group.PASSIVE)) is not None:
        return skip
    fb = freebody.build(manifest, SIM_TIMESTEP_S, ground=False, contacts=False, pos=(0, 0, 1))
    z0 = fb.data.xipos[fb.body, 2]
    n = freebody.steps(FALL_DURATION_S, SIM_TIMESTEP_S)
    for _ in range(n):
        mujoco.mj_step(fb.model, fb.data)
    drop = float(z0 - fb.data.xipos[fb.body, 2])
    t = n * SIM_TIMESTEP_S
    expected = 0.5 * GRAVITY_M_S2 * t * t
    err = abs(drop - expected)
    return judged(cid, Group.PASSIVE, err < FALL_TOL_M,
                  {"durationS": t, "dropM": drop, "expectedM": expected, "errorM": err,
                   "timestepS": SIM_TIMESTEP_S},
                  Threshold(FALL_TOL_M, "m", "<", SRC),
                  "MuJoCo Euler integrator, contacts disabled, from rest; COM height",
                  f"fall differs from 1/2 g t^2 by {err * 1000:.3g} mm: gravity compensation, "
                  "damping or a wrong mass/gravity setting acts on the body")


def drop_pose(seed: int, mesh_vertices: np.ndarray) -> dict[str, Any]:
    """Seeded drop pose: yaw U[0, 2pi), tilt U[0, 10 deg] about a random horizontal axis,
    lowest vertex U[40, 100] mm above the ground. Returns quat (wxyz), pos [m] and the draws."""
    rng = np.random.default_rng(seed)
    yaw = float(rng.uniform(0.0, 2.0 * np.pi))
    tilt = float(rng.uniform(0.0, DROP_MAX_TILT_RAD))
    tilt_dir = float(rng.uniform(0.0, 2.0 * np.pi))
    height = float(rng.uniform(*DROP_HEIGHT_RANGE_M))
    q_yaw, q_tilt, quat = np.zeros(4), np.zeros(4), np.zeros(4)
    mujoco.mju_axisAngle2Quat(q_yaw, np.array([0.0, 0.0, 1.0]), yaw)
    mujoco.mju_axisAngle2Quat(q_tilt, np.array([np.cos(tilt_dir), np.sin(tilt_dir), 0.0]), tilt)
    mujoco.mju_mulQuat(quat, q_tilt, q_yaw)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, quat)
    lowest = float(np.min((mesh_vertices @ rot.reshape(3, 3).T)[:, 2]))
    return {"seed": seed, "yawRad": yaw, "tiltRad": tilt, "tiltDirRad": tilt_dir,
            "heightM": height, "quat": quat, "pos": np.array([0.0, 0.0, height - lowest])}


def run_drop(manifest: AssetManifest, pose: dict[str, Any]) -> dict[str, Any]:
    """Simulate one drop for 5 s on a ground plane; record contact, penetration, speeds."""
    fb = freebody.build(manifest, SIM_TIMESTEP_S, ground=True,
                        pos=tuple(pose["pos"]), quat=tuple(pose["quat"]))
    m, d = fb.model, fb.data
    ground = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, GROUND_NAME)
    contact_steps, min_dist, finite = 0, np.inf, True
    first_contact_s = None
    for i in range(freebody.steps(DROP_SETTLE_TIME_S, SIM_TIMESTEP_S)):
        mujoco.mj_step(m, d)
        if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
            finite = False
            break
        hits = [c.dist for c in d.contact[: d.ncon] if ground in (c.geom1, c.geom2)]
        if hits:
            contact_steps += 1
            min_dist = min(min_dist, min(hits))
            if first_contact_s is None:
                first_contact_s = (i + 1) * SIM_TIMESTEP_S
    v, w = com_velocity(m, d, fb.body) if finite else (np.full(3, np.nan),) * 2
    penetration = max(0.0, -min_dist) if np.isfinite(min_dist) else 0.0
    return {
        "seed": pose["seed"], "yawRad": pose["yawRad"], "tiltRad": pose["tiltRad"],
        "heightM": pose["heightM"], "finite": finite, "contact": contact_steps > 0,
        "contactSteps": contact_steps, "firstContactS": first_contact_s,
        "maxPenetrationM": penetration,
        "finalSpeedMS": float(np.linalg.norm(v)) if finite else None,
        "finalAngularSpeedRadS": float(np.linalg.norm(w)) if finite else None,
        "finalHeightM": float(d.xipos[fb.body, 2]) if finite else None,
    }


def drop_ok(trial: dict[str, Any]) -> list[str]:
    """The protocol criteria a drop trial misses (empty when it passes)."""
    if not trial["finite"]:
        return ["non-finite state"]
    bad = []
    if not trial["contact"]:
        bad.append("no contact")
    if trial["maxPenetrationM"] >= DROP_MAX_PENETRATION_M:
        bad.append(f"penetration {trial['maxPenetrationM'] * 1000:.3g} mm")
    if trial["finalSpeedMS"] >= DROP_MAX_LIN_SPEED_M_S:
        bad.append(f"v {trial['finalSpeedMS']:.3g} m/s after 5 s")
    if trial["finalAngularSpeedRadS"] >= DROP_MAX_ANG_SPEED_RAD_S:
        bad.append(f"w {trial['finalAngularSpeedRadS']:.3g} rad/s after 5 s")
    return bad


def check_drops(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """passive.drops: six seeded drops, every one meeting every criterion."""
    cid = "passive.drops"
    if (skip := freebody.applicability(manifest, loaded_ok, cid, Group.PASSIVE)) is not None:
        return skip
    verts = np.asarray(load_trimesh(manifest).vertices)
    trials = []
    for seed in DROP_SEEDS:
        trial = run_drop(manifest, drop_pose(seed, verts))
        trial["problems"] = drop_ok(trial)
        trials.append(trial)
    failed = [t for t in trials if t["problems"]]
    return judged(
        cid, Group.PASSIVE, not failed,
        {"trials": trials, "passedTrials": len(trials) - len(failed), "seeds": list(DROP_SEEDS)},
        Threshold({"maxPenetrationM": DROP_MAX_PENETRATION_M,
                   "finalSpeedMS": DROP_MAX_LIN_SPEED_M_S,
                   "finalAngularSpeedRadS": DROP_MAX_ANG_SPEED_RAD_S,
                   "settleTimeS": DROP_SETTLE_TIME_S, "finite": True, "contact": True},
                  "m, m/s, rad/s, s", "<", f"{SRC}; tilt bound 10 deg is a project choice"),
        f"MuJoCo Euler, dt {SIM_TIMESTEP_S} s, ground plane; seeds numpy default_rng(0..5); "
        "speeds of the COM (world frame) after 5 s",
        "; ".join(f"seed {t['seed']}: {', '.join(t['problems'])}" for t in failed),
    )


def run_passive(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """All group-4 checks."""
    return [check_fall(manifest, loaded_ok), check_drops(manifest, loaded_ok)]
