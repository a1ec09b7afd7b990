"""Group 6 (contact material): compared only against real measurements.

Protocol 004 group 6: flat slide gives mu_d ~ -a/g; friction was not measured for these
assets, so without a measurement the check is UNVERIFIED (never a zero-error PASS). With a
measured sliding friction the object is slid on a flat plane in MuJoCo and the simulated
mu_d = -a/g is compared with the measurement within its stated uncertainty.
"""

from __future__ import annotations

import mujoco
import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged, not_run
from generator.physval.scene import com_velocity, load_trimesh
from generator.physval.thresholds import GRAVITY_M_S2, SIM_TIMESTEP_S, SLIDE_TIME_S, SLIDE_V0_M_S

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


def check_restitution(manifest: AssetManifest) -> CheckResult:
    """material.restitution: no bounce measurement exists in the manifest schema."""
    return not_run("material.restitution", Group.MATERIAL, "no measured bounce height or "
                   "velocity supplied; MuJoCo contact softness (solref) is not a restitution "
                   "coefficient and is not claimed to match a real one")


def run_material(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """All group-6 checks."""
    return [check_friction(manifest, loaded_ok), check_restitution(manifest)]
