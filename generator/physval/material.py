"""Group 6 (contact material): compared only against real measurements.

Protocol 004 group 6: flat slide gives mu_d ~ -a/g; friction was not measured for these
assets, so without a measurement the check is UNVERIFIED (never a zero-error PASS). With a
measured sliding friction the object is slid on a flat plane in MuJoCo and the simulated
mu_d = -a/g is compared with the measurement within its stated uncertainty.

Restitution ("球体落地弹跳 ... 弹跳高度/速度"): with a measured free drop (drop height, first
rebound apex) the asset is released from rest at that height above the ground plane with
the asset's own contact parameters, and the simulated coefficient e = sqrt(h_rebound /
h_drop) is compared with the measured one within the stated tolerance. MuJoCo has no
restitution parameter: its soft contact (solref time constant, damping ratio) decides the
bounce, so only a measurement can say whether that bounce is right.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged, not_run
from generator.physval.scene import com_velocity, load_trimesh
from generator.physval.thresholds import (
    BOUNCE_CONTACT_SLACK_S,
    GRAVITY_M_S2,
    SIM_TIMESTEP_S,
    SLIDE_TIME_S,
    SLIDE_V0_M_S,
)

SRC = "protocol 004 group 6"
SETTLE_S = 0.5  # project choice: rest on the plane before the push


def simulated_sliding_friction(manifest: AssetManifest) -> dict[str, float]:
    """Slide the resting object at 0.5 m/s along x; mu_d = -(fitted dv/dt) / g."""
    lowest = float(np.min(load_trimesh(manifest).vertices[:, 2]))
    fb = freebody.build(manifest, SIM_TIMESTEP_S, ground=True, pos=(0.0, 0.0, 1e-4 - lowest))
    m, d = fb.model, fb.data
    for _ in range(freebody.steps(SETTLE_S, SIM_TIMESTEP_S)):
        mujoco.mj_step(m, d)
    freebody.set_com_twist(fb, np.array([SLIDE_V0_M_S, 0.0, 0.0]), np.zeros(3))
    times, speeds = [], []
    for i in range(freebody.steps(SLIDE_TIME_S, SIM_TIMESTEP_S)):
        mujoco.mj_step(m, d)
        vx = float(com_velocity(m, d, fb.body)[0][0])
        if vx < 0.2 * SLIDE_V0_M_S:
            break
        times.append((i + 1) * SIM_TIMESTEP_S)
        speeds.append(vx)
    slope = float(np.polyfit(times, speeds, 1)[0]) if len(times) >= 3 else float("nan")
    return {"decelerationMS2": -slope, "muSliding": -slope / GRAVITY_M_S2,
            "samples": len(times), "engineFriction": manifest.engine.friction[0]}


def check_friction(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """material.friction: simulated mu_d within the measurement's uncertainty."""
    cid = "material.friction"
    meas = manifest.measurements.friction_sliding if manifest.measurements else None
    if meas is None:
        return not_run(cid, Group.MATERIAL, "no measured sliding friction supplied: engine "
                       f"friction {manifest.engine.friction[0]} is an assumption, not a fit")
    if manifest.kind != "mesh" or not loaded_ok:
        return not_run(cid, Group.MATERIAL, "slide experiment needs a loadable mesh asset")
    r = simulated_sliding_friction(manifest)
    err = abs(r["muSliding"] - float(meas.value))  # type: ignore[arg-type]
    return judged(
        cid, Group.MATERIAL, bool(np.isfinite(err) and err <= meas.uncertainty),
        {**r, "measuredMu": meas.value, "errorMu": err,
         "conditions": manifest.measurements.conditions if manifest.measurements else ""},
        Threshold(meas.uncertainty, "1 (friction coefficient)", "<=",
                  f"{SRC}; uncertainty stated with the measurement"),
        f"flat-plane slide at {SLIDE_V0_M_S} m/s after {SETTLE_S} s rest, MuJoCo dt "
        f"{SIM_TIMESTEP_S} s; mu_d = -a/g from a linear fit of the COM speed",
        f"simulated mu_d {r['muSliding']:.3g} vs measured {meas.value}: identify the "
        "friction parameters from the measurement",
    )


def simulated_bounce(manifest: AssetManifest, drop_height_m: float) -> dict[str, Any]:
    """Release the asset from rest (pose as modelled) with its lowest point ``drop_height_m``
    [m] above the ground; return the first rebound of its COM.

    Heights are of the COM relative to its height at first touch (the lowest point's height
    for a body that does not turn). Deterministic: fixed pose, no random draws.
    """
    lowest = float(np.min(load_trimesh(manifest).vertices[:, 2]))
    fb = freebody.build(manifest, SIM_TIMESTEP_S, ground=True,
                        pos=(0.0, 0.0, drop_height_m - lowest))
    m, d = fb.model, fb.data
    z_touch = float(d.xipos[fb.body, 2]) - drop_height_m
    fall_s = float(np.sqrt(2.0 * drop_height_m / GRAVITY_M_S2))
    n = freebody.steps(2.0 * fall_s + BOUNCE_CONTACT_SLACK_S, SIM_TIMESTEP_S)
    v_prev, v_in, v_out = 0.0, None, 0.0
    t_impact: float | None = None
    t_leave: float | None = None
    apex = 0.0
    phase = "fall"  # fall -> contact -> flight (until the apex or the next contact)
    for i in range(n):
        mujoco.mj_step(m, d)
        vz = float(com_velocity(m, d, fb.body)[0][2])  # runs mj_forward: ncon of this state
        z = float(d.xipos[fb.body, 2]) - z_touch
        t = (i + 1) * SIM_TIMESTEP_S
        if phase == "fall" and d.ncon > 0:
            phase, v_in, t_impact = "contact", abs(v_prev), t
        elif phase == "contact" and d.ncon == 0:
            phase, v_out, t_leave = "flight", vz, t
        if phase == "flight":
            apex = max(apex, z)
            if d.ncon > 0 or vz <= 0.0:
                break
        v_prev = vz
    left = t_leave is not None
    finite = bool(np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel)))
    rebound = apex if finite else float("nan")  # 0 when the body never leaves the ground
    return {"dropHeightM": drop_height_m, "impactSpeedMS": v_in, "impactTimeS": t_impact,
            "leftGround": left, "takeoffSpeedMS": v_out, "takeoffTimeS": t_leave,
            "reboundHeightM": rebound,
            "coefficient": float(np.sqrt(rebound / drop_height_m)),
            "velocityRatio": v_out / v_in if v_in else None,
            "simulatedS": n * SIM_TIMESTEP_S, "finiteState": finite}


def check_restitution(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """material.restitution: simulated e = sqrt(h_rebound / h_drop) within the measurement's
    tolerance of the measured one."""
    cid = "material.restitution"
    meas = manifest.measurements.restitution if manifest.measurements else None
    if meas is None:
        return not_run(cid, Group.MATERIAL, "no measured bounce (measurements.restitution: "
                       "drop and rebound height) supplied; MuJoCo contact softness (solref) "
                       "is not a restitution coefficient and is not claimed to match a real one")
    if manifest.kind != "mesh" or not loaded_ok:
        return not_run(cid, Group.MATERIAL, "drop experiment needs a loadable mesh asset")
    r = simulated_bounce(manifest, meas.drop_height_m)
    e_meas = meas.coefficient
    err = abs(float(r["coefficient"]) - e_meas)
    solref = manifest.engine.solref
    return judged(
        cid, Group.MATERIAL, bool(np.isfinite(err) and err <= meas.tolerance),
        {**r, "measuredDropHeightM": meas.drop_height_m,
         "measuredReboundHeightM": meas.rebound_height_m, "measuredCoefficient": e_meas,
         "errorCoefficient": err, "engineSolref": list(solref),
         "conditions": manifest.measurements.conditions if manifest.measurements else ""},
        Threshold(meas.tolerance, "1 (coefficient of restitution)", "<=",
                  f"{SRC}; tolerance stated with the measurement"),
        f"free drop from rest (pose as modelled) from the measured height onto a ground "
        f"plane, gravity and contacts on, contact solref {list(solref)}, MuJoCo Euler dt "
        f"{SIM_TIMESTEP_S} s; e = sqrt(first rebound apex / drop height) of the COM "
        "(0 when the body never leaves the ground)",
        f"simulated restitution {float(r['coefficient']):.3g} vs measured {e_meas:.3g}: "
        "identify the contact parameters (solref) from the measured bounce"
        + ("; e > 1 gains energy at impact (contact too stiff for the timestep)"
           if float(r["coefficient"]) > 1.0 else ""),
    )


def run_material(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """All group-6 checks."""
    return [check_friction(manifest, loaded_ok), check_restitution(manifest, loaded_ok)]
