"""Group 7 (joints and mechanisms): declared hinge axis and a limited-torque sweep.

Protocol 004 group 7: a limited drive must reach the target; motion direction must match
the task. The protocol's example: wrong axis ~0.047 deg, correct axis ~54.2 deg for a
57.3 deg target with 4.6 deg tolerance.
"""

from __future__ import annotations

import mujoco
import numpy as np

from generator.physval.manifest import AssetManifest, Hinge
from generator.physval.results import CheckResult, Group, Threshold, judged, not_applicable, not_run
from generator.physval.scene import compile_spec, mjcf_spec
from generator.physval.thresholds import (
    HINGE_KP_PER_NM,
    HINGE_RAMP_RAD_S,
    HINGE_SWEEP_TIME_S,
    SIM_TIMESTEP_S,
)

SRC = "protocol 004 group 7"
# Project choice: the declared and modelled axes must agree to 1 mrad (a modelling slip is a
# quarter turn; float noise is 1e-16).
AXIS_TOL_RAD = 1e-3
HINGE_DAMPRATIO = 1.0  # project choice: critically damped position drive


def _declared_hinge(manifest: AssetManifest, loaded_ok: bool, cid: str) -> Hinge | CheckResult:
    """The declared hinge when the check can run, else its NOT_APPLICABLE/UNVERIFIED result."""
    if manifest.hinge is None:
        return not_applicable(cid, Group.MECHANISM, "no hinge declared in the manifest")
    if not loaded_ok:
        return not_run(cid, Group.MECHANISM, "the asset did not load")
    return manifest.hinge


def check_axis(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """mechanism.hinge_axis: the modelled axis (parent frame) matches the declared one."""
    cid = "mechanism.hinge_axis"
    if isinstance(h := _declared_hinge(manifest, loaded_ok, cid), CheckResult):
        return h
    model, _ = compile_spec(mjcf_spec(manifest), SIM_TIMESTEP_S)
    j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, h.joint)
    if j < 0:
        return not_run(cid, Group.MECHANISM, f"joint {h.joint!r} is missing")
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_quat[model.jnt_bodyid[j]])
    axis = rot.reshape(3, 3) @ model.jnt_axis[j]
    angle = float(np.arccos(np.clip(axis @ np.array(h.axis), -1.0, 1.0)))
    lo, hi = (float(v) for v in model.jnt_range[j])
    range_ok = bool(model.jnt_limited[j]) and np.allclose((lo, hi), h.range_rad, atol=1e-9)
    ok = angle <= AXIS_TOL_RAD and range_ok
    return judged(
        cid, Group.MECHANISM, ok,
        {"declaredAxis": list(h.axis), "modelAxisParentFrame": axis, "angleRad": angle,
         "declaredRangeRad": list(h.range_rad), "modelRangeRad": [lo, hi]},
        Threshold(AXIS_TOL_RAD, "rad", "<=", f"{SRC} (number: project choice)"),
        "compiled jnt_axis rotated into the parent body frame; jnt_range",
        f"hinge axis is {np.degrees(angle):.1f} deg off the declared axis or the limits differ"
        ": fix the joint axis/anchor in the MJCF",
    )


def sweep(manifest: AssetManifest) -> dict[str, float]:
    """Drive the hinge to the target with a torque-limited position servo, then back to 0."""
    h = manifest.hinge
    assert h is not None
    spec = mjcf_spec(manifest)
    act = spec.add_actuator()
    act.name, act.target, act.trntype = "probe_drive", h.joint, mujoco.mjtTrn.mjTRN_JOINT
    act.set_to_position(kp=HINGE_KP_PER_NM * h.torque_limit_nm, dampratio=HINGE_DAMPRATIO)
    act.forcelimited, act.forcerange = True, [-h.torque_limit_nm, h.torque_limit_nm]
    model, data = compile_spec(spec, SIM_TIMESTEP_S)
    qadr = model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, h.joint)]
    start = float(data.qpos[qadr])
    out = {"startRad": start}
    origin = start
    for phase, goal in (("target", h.target_rad), ("return", start)):
        peak, pen = 0.0, 0.0
        for i in range(round(HINGE_SWEEP_TIME_S / SIM_TIMESTEP_S)):
            ramp = min(abs(goal - origin), HINGE_RAMP_RAD_S * (i + 1) * SIM_TIMESTEP_S)
            data.ctrl[0] = origin + np.sign(goal - origin) * ramp
            mujoco.mj_step(model, data)
            peak = max(peak, abs(float(data.actuator_force[0])))
            pen = max([pen, *(-c.dist for c in data.contact[: data.ncon])])
        origin = goal
        out[f"{phase}MaxPenetrationM"] = pen
        out[f"{phase}GoalRad"] = goal
        out[f"{phase}ReachedRad"] = float(data.qpos[qadr])
        out[f"{phase}ErrorRad"] = abs(float(data.qpos[qadr]) - goal)
        out[f"{phase}PeakTorqueNm"] = peak
    return out


def check_sweep(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """mechanism.hinge_sweep: a torque-limited drive reaches the target and returns."""
    cid = "mechanism.hinge_sweep"
    if isinstance(h := _declared_hinge(manifest, loaded_ok, cid), CheckResult):
        return h
    r = sweep(manifest)
    ok = r["targetErrorRad"] <= h.tolerance_rad and r["returnErrorRad"] <= h.tolerance_rad
    return judged(
        cid, Group.MECHANISM, ok, {**r, "torqueLimitNm": h.torque_limit_nm},
        Threshold(h.tolerance_rad, "rad", "<=", f"{SRC}; tolerance declared in the manifest"),
        f"position servo kp = {HINGE_KP_PER_NM} x torque limit per rad, damping ratio "
        f"{HINGE_DAMPRATIO}, force-limited to the declared torque, set-point ramped at "
        f"{HINGE_RAMP_RAD_S} rad/s; gravity and contacts on; {HINGE_SWEEP_TIME_S} s to the "
        f"target, then {HINGE_SWEEP_TIME_S} s back to the start angle",
        f"the limited drive reached {np.degrees(r['targetReachedRad']):.2f} deg for a "
        f"{np.degrees(h.target_rad):.1f} deg target (tolerance "
        f"{np.degrees(h.tolerance_rad):.1f} deg): check the axis, anchor and limits",
    )


def run_hinge(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """All group-7 checks."""
    return [check_axis(manifest, loaded_ok), check_sweep(manifest, loaded_ok)]
