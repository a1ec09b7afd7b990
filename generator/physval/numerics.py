"""Group 9 (numerics): contact-free 2 ms vs 1 ms timestep comparison.

Protocol 004 threshold list: contact-free 2 ms / 1 ms response velocity difference < 0.02
"in each quantity's unit": here the max-abs (infinity-norm) difference, taken separately
over the quantities in rad/s and those in m/s, after a 0.5 s gravity-on, contact-free run
at each step (MuJoCo Euler, the suite's integrator) from the same initial state.

* Mesh asset (one free rigid body): COM linear velocity [m/s] and world angular velocity
  [rad/s] after a flight from a declared COM twist. For a free body with physical inertia
  this comparison has little to find: semi-implicit Euler integrates constant gravity
  exactly, and the two steps differ only through the explicitly integrated velocity-product
  terms of the spinning body (gyroscopic; centripetal where the COM is off the body origin):
  3e-5 to 8e-5 m/s and 1e-14 to 8e-4 rad/s on the committed samples, far below 0.02. A PASS
  there says the free flight is integrated consistently, not that the asset is sound.
* MJCF asset (mechanism): every joint velocity (rad/s for hinge and ball DOFs, m/s for
  slide and free-joint linear DOFs) after a run from a declared initial joint velocity,
  contacts and joint limits disabled (a limit stop is an impact, which this contact-free
  comparison excludes), controls at zero; plus the COM twist of every free-joint body.
  This is where the check can fail: Euler integrates joint springs explicitly, so a spring
  with natural frequency w diverges at 2 ms once w * dt > 2 (the negative control,
  ``controls.py``). A run whose joint speed passes TIMESTEP_DIVERGED_VEL is stopped there
  and FAILs as diverged (as does one with a MuJoCo bad-state warning, should the state
  blow up within one step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import (
    CheckResult,
    Group,
    Threshold,
    judged,
    not_applicable,
    not_run,
)
from generator.physval.scene import com_velocity, compile_spec, mjcf_spec
from generator.physval.thresholds import (
    TIMESTEP_COARSE_S,
    TIMESTEP_DIVERGED_VEL,
    TIMESTEP_FINE_S,
    TIMESTEP_HORIZON_S,
    TIMESTEP_JOINT_V0_M_S,
    TIMESTEP_JOINT_W0_RAD_S,
    TIMESTEP_V0_M_S,
    TIMESTEP_VEL_TOL,
    TIMESTEP_W0_RAD_S,
)

CHECK_ID = "numerics.timestep"
SRC = "protocol 004 group 9"
THRESHOLD = Threshold(TIMESTEP_VEL_TOL, "m/s (linear), rad/s (angular); infinity norm", "<",
                      SRC)
FREE_METHOD = (
    "MuJoCo Euler at 2 ms and 1 ms, contacts off, gravity on, same initial COM twist. Can "
    "detect: a free flight the engine integrates differently at the two steps. Cannot detect "
    "an asset defect in a physical free rigid body: semi-implicit Euler is exact for constant "
    "gravity and the spin terms it integrates explicitly (gyroscopic, centripetal) drift far "
    "below the tolerance over the horizon, so for such a body this comparison is expected to "
    "pass; the check's negative control is a mechanism (a lid with a stiff hinge spring)"
)
MECHANISM_METHOD = (
    f"MuJoCo Euler at 2 ms and 1 ms for {TIMESTEP_HORIZON_S} s, gravity on, contacts and "
    "joint limits disabled, controls at zero, from the model's reference pose (qpos0) with "
    f"every hinge/ball DOF at {TIMESTEP_JOINT_W0_RAD_S} rad/s and every slide at "
    f"{TIMESTEP_JOINT_V0_M_S} m/s; compares every joint velocity (and the COM twist of any "
    "free-joint body). Can detect: stiff joint springs (integrated explicitly under Euler) "
    "or light, stiffly coupled links that make 2 ms diverge or inaccurate; a run whose joint "
    f"speed passes {TIMESTEP_DIVERGED_VEL:g} rad/s or m/s (divergence) fails the check"
)
BAD_STATE = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
             mujoco.mjtWarning.mjWARN_BADQACC)
JOINT_TYPES = {int(mujoco.mjtJoint.mjJNT_FREE): "free", int(mujoco.mjtJoint.mjJNT_BALL): "ball",
               int(mujoco.mjtJoint.mjJNT_SLIDE): "slide",
               int(mujoco.mjtJoint.mjJNT_HINGE): "hinge"}


def check_timestep(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """numerics.timestep: |x_2ms - x_1ms|_inf < 0.02 in m/s and in rad/s (module docstring)."""
    if manifest.kind == "mesh":
        skip = freebody.applicability(manifest, loaded_ok, CHECK_ID, Group.NUMERICS)
        return skip if skip is not None else _check_free_body(manifest)
    if not loaded_ok:
        return not_run(CHECK_ID, Group.NUMERICS, "the asset did not load")
    return _check_mechanism(manifest)


# --- mesh asset: one free rigid body ---------------------------------------------------------

def _flight(manifest: AssetManifest, dt: float) -> tuple[np.ndarray, np.ndarray]:
    fb = freebody.build(manifest, dt, ground=False, contacts=False, pos=(0, 0, 1))
    freebody.set_com_twist(fb, np.array(TIMESTEP_V0_M_S), np.array(TIMESTEP_W0_RAD_S))
    return freebody.fly(fb, TIMESTEP_HORIZON_S)


def _check_free_body(manifest: AssetManifest) -> CheckResult:
    v2, w2 = _flight(manifest, TIMESTEP_COARSE_S)
    v1, w1 = _flight(manifest, TIMESTEP_FINE_S)
    dv = float(np.max(np.abs(v2 - v1)))
    dw = float(np.max(np.abs(w2 - w1)))
    ok = dv < TIMESTEP_VEL_TOL and dw < TIMESTEP_VEL_TOL
    return judged(
        CHECK_ID, Group.NUMERICS, ok,
        {"linearDiffMS": dv, "angularDiffRadS": dw, "v2msMS": v2, "v1msMS": v1,
         "w2msRadS": w2, "w1msRadS": w1, "horizonS": TIMESTEP_HORIZON_S,
         "v0MS": list(TIMESTEP_V0_M_S), "w0RadS": list(TIMESTEP_W0_RAD_S)},
        THRESHOLD, FREE_METHOD,
        f"2 ms and 1 ms differ by {dv:.3g} m/s / {dw:.3g} rad/s: the response is "
        "timestep-sensitive",
    )


# --- MJCF asset: a mechanism -----------------------------------------------------------------

@dataclass(frozen=True)
class _Run:
    """One contact-free run of a mechanism at one timestep."""

    qvel: np.ndarray  # joint velocities at the horizon, or where the run diverged (qvel)
    free_bodies: dict[str, tuple[np.ndarray, np.ndarray]]  # body -> COM (v [m/s], w [rad/s])
    peak_speed: float  # largest |qvel| seen [rad/s or m/s]
    diverged_at_s: float | None  # time the joint speed left TIMESTEP_DIVERGED_VEL, or None
    bad_state_warnings: int  # MuJoCo's NaN/Inf/huge qpos, qvel, qacc warnings (state reset)


def initial_qvel(model: mujoco.MjModel) -> np.ndarray:
    """The declared initial joint velocity (thresholds.TIMESTEP_JOINT_*), per DOF."""
    qvel = np.zeros(model.nv)
    for j in range(model.njnt):
        adr, kind = model.jnt_dofadr[j], JOINT_TYPES[int(model.jnt_type[j])]
        if kind == "free":
            qvel[adr:adr + 3], qvel[adr + 3:adr + 6] = TIMESTEP_V0_M_S, TIMESTEP_W0_RAD_S
        elif kind == "ball":
            qvel[adr:adr + 3] = TIMESTEP_JOINT_W0_RAD_S
        elif kind == "slide":
            qvel[adr] = TIMESTEP_JOINT_V0_M_S
        else:
            qvel[adr] = TIMESTEP_JOINT_W0_RAD_S
    return qvel


def _linear_dofs(model: mujoco.MjModel) -> np.ndarray:
    """True for DOFs measured in m/s (slides, free-joint linear part), False for rad/s."""
    linear = np.zeros(model.nv, dtype=bool)
    for j in range(model.njnt):
        adr, kind = model.jnt_dofadr[j], JOINT_TYPES[int(model.jnt_type[j])]
        if kind == "free":
            linear[adr:adr + 3] = True
        elif kind == "slide":
            linear[adr] = True
    return linear


def _mechanism_run(manifest: AssetManifest, dt: float) -> tuple[mujoco.MjModel, _Run]:
    spec = mjcf_spec(manifest)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                                 | mujoco.mjtDisableBit.mjDSBL_LIMIT)
    model, data = compile_spec(spec, dt)
    data.qvel[:] = initial_qvel(model)
    peak, diverged_at = 0.0, None
    for i in range(freebody.steps(TIMESTEP_HORIZON_S, dt) if model.nv else 0):
        mujoco.mj_step(model, data)
        speed = float(np.max(np.abs(data.qvel)))
        if not np.isfinite(speed) or speed > TIMESTEP_DIVERGED_VEL:
            diverged_at = (i + 1) * dt
            break
        peak = max(peak, speed)
    qvel = data.qvel.copy()
    free = {model.body(int(model.jnt_bodyid[j])).name:
            com_velocity(model, data, int(model.jnt_bodyid[j]))
            for j in range(model.njnt) if JOINT_TYPES[int(model.jnt_type[j])] == "free"}
    bad = sum(int(data.warning[int(w)].number) for w in BAD_STATE)
    return model, _Run(qvel, free, peak, diverged_at, bad)


def _inf_norm(values: np.ndarray) -> float:
    return float(np.max(np.abs(values))) if values.size else 0.0


def _finite(values: np.ndarray) -> list[float | None]:
    """Values for the record (the evidence writer refuses NaN/Inf: those become None)."""
    return [float(v) if np.isfinite(v) else None for v in np.ravel(values)]


def _joint_rows(model: mujoco.MjModel, coarse: _Run, fine: _Run) -> list[dict[str, Any]]:
    rows = []
    for j in range(model.njnt):
        kind = JOINT_TYPES[int(model.jnt_type[j])]
        adr = int(model.jnt_dofadr[j])
        dofs = slice(adr, adr + {"free": 6, "ball": 3}.get(kind, 1))
        rows.append({"joint": model.joint(j).name, "type": kind,
                     "unit": {"free": "m/s (0-2), rad/s (3-5)", "slide": "m/s"}.get(
                         kind, "rad/s"),
                     "qvel0": _finite(initial_qvel(model)[dofs]),
                     "qvel2ms": _finite(coarse.qvel[dofs]), "qvel1ms": _finite(fine.qvel[dofs])})
    return rows


def _check_mechanism(manifest: AssetManifest) -> CheckResult:
    model, coarse = _mechanism_run(manifest, TIMESTEP_COARSE_S)
    if model.nv == 0:
        return not_applicable(CHECK_ID, Group.NUMERICS, "MJCF asset without joints: nothing "
                              "moves, nothing to step")
    _, fine = _mechanism_run(manifest, TIMESTEP_FINE_S)
    runs = {"2ms": coarse, "1ms": fine}
    measured: dict[str, Any] = {
        "joints": _joint_rows(model, coarse, fine), "horizonS": TIMESTEP_HORIZON_S,
        "peakAbsQvel": {k: r.peak_speed for k, r in runs.items()},
        "divergedAtS": {k: r.diverged_at_s for k, r in runs.items()},
        "divergenceBound": TIMESTEP_DIVERGED_VEL,
        "badStateWarnings": {k: r.bad_state_warnings for k, r in runs.items()}}
    diverged = [
        f"the {k[0]} ms run diverged (" + (
            f"a joint speed passed {TIMESTEP_DIVERGED_VEL:g} rad/s or m/s at "
            f"t = {r.diverged_at_s:.3f} s" if r.diverged_at_s is not None else
            f"{r.bad_state_warnings} MuJoCo bad-state warning(s)") + ")"
        for k, r in runs.items() if r.diverged_at_s is not None or r.bad_state_warnings > 0]
    if diverged:
        measured.update(angularDiffRadS=None, linearDiffMS=None, freeBodies=[])
        return judged(
            CHECK_ID, Group.NUMERICS, False, measured, THRESHOLD, MECHANISM_METHOD,
            f"{'; '.join(diverged)}: the mechanism is not integrable at that step, e.g. a "
            "joint spring too stiff for explicit Euler")
    diff = np.abs(coarse.qvel - fine.qvel)
    linear = _linear_dofs(model)
    bodies = [{"body": name, "linearDiffMS": _inf_norm(v2 - fine.free_bodies[name][0]),
               "angularDiffRadS": _inf_norm(w2 - fine.free_bodies[name][1])}
              for name, (v2, w2) in coarse.free_bodies.items()]
    dv = max([_inf_norm(diff[linear]), *(b["linearDiffMS"] for b in bodies)])
    dw = max([_inf_norm(diff[~linear]), *(b["angularDiffRadS"] for b in bodies)])
    measured.update(angularDiffRadS=dw, linearDiffMS=dv, freeBodies=bodies)
    return judged(
        CHECK_ID, Group.NUMERICS, dv < TIMESTEP_VEL_TOL and dw < TIMESTEP_VEL_TOL, measured,
        THRESHOLD, MECHANISM_METHOD,
        f"2 ms and 1 ms differ by {dw:.3g} rad/s / {dv:.3g} m/s in the joint velocities: the "
        "response is timestep-sensitive (stiff joint springs or light, stiffly coupled links)")
