"""Group 9 (numerics): contact-free 2 ms vs 1 ms timestep comparison.

Protocol 004 threshold list: contact-free 2 ms / 1 ms response velocity difference < 0.02
"in each quantity's unit". Here: the max-abs (infinity-norm) difference of the COM linear
velocity [m/s] and, separately, of the world angular velocity [rad/s], after a 0.5 s
gravity-on, contact-free flight from the same initial twist.
"""

from __future__ import annotations

import mujoco
import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged
from generator.physval.scene import com_velocity
from generator.physval.thresholds import (
    TIMESTEP_COARSE_S,
    TIMESTEP_FINE_S,
    TIMESTEP_HORIZON_S,
    TIMESTEP_V0_M_S,
    TIMESTEP_VEL_TOL,
    TIMESTEP_W0_RAD_S,
)

SRC = "protocol 004 group 9"


def _flight(manifest: AssetManifest, dt: float) -> tuple[np.ndarray, np.ndarray]:
    fb = freebody.build(manifest, dt, ground=False, contacts=False, pos=(0, 0, 1))
    freebody.set_com_twist(fb, np.array(TIMESTEP_V0_M_S), np.array(TIMESTEP_W0_RAD_S))
    for _ in range(freebody.steps(TIMESTEP_HORIZON_S, dt)):
        mujoco.mj_step(fb.model, fb.data)
    return com_velocity(fb.model, fb.data, fb.body)


def check_timestep(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """numerics.timestep: |v_2ms - v_1ms|_inf < 0.02 m/s and |w_2ms - w_1ms|_inf < 0.02 rad/s."""
    cid = "numerics.timestep"
    if (skip := freebody.applicability(manifest, loaded_ok, cid, Group.NUMERICS)) is not None:
        return skip
    v2, w2 = _flight(manifest, TIMESTEP_COARSE_S)
    v1, w1 = _flight(manifest, TIMESTEP_FINE_S)
    dv = float(np.max(np.abs(v2 - v1)))
    dw = float(np.max(np.abs(w2 - w1)))
    ok = dv < TIMESTEP_VEL_TOL and dw < TIMESTEP_VEL_TOL
    return judged(
        cid, Group.NUMERICS, ok,
        {"linearDiffMS": dv, "angularDiffRadS": dw, "v2msMS": v2, "v1msMS": v1,
         "w2msRadS": w2, "w1msRadS": w1, "horizonS": TIMESTEP_HORIZON_S,
         "v0MS": list(TIMESTEP_V0_M_S), "w0RadS": list(TIMESTEP_W0_RAD_S)},
        Threshold(TIMESTEP_VEL_TOL, "m/s (linear), rad/s (angular); infinity norm", "<", SRC),
        "MuJoCo Euler at 2 ms and 1 ms, contacts off, gravity on, same initial COM twist",
        f"2 ms and 1 ms differ by {dv:.3g} m/s / {dw:.3g} rad/s: the response is "
        "timestep-sensitive",
    )
