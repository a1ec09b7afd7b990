"""Damped-least-squares IK on the MuJoCo site Jacobian (position + approach axis).

For each target the TCP site must reach a position with its z axis (the approach
axis) pointing along a given direction; rotation about the approach axis is free.
Joint limits are enforced by clamping after every step. When a target is missed the
reason is told apart: ``unreachable`` when the target lies outside the arm's
geometric envelope (checked analytically from the DH lengths, not from the solver),
``not-converged`` when it lies inside but the iterations did not get there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from generator import arm

MAX_ITERATIONS = 400  # design section 1
DAMPING = 0.02  # lambda of the damped least squares [m-equivalent]
MAX_STEP_RAD = 0.25  # per-iteration joint step cap for robustness far from the solution
CONVERGED_POSITION_M = 1e-6
CONVERGED_AXIS_RAD = 1e-6
# A target counts as reached within 2 mm and REACHED_AXIS_DEG (generator.rules).


@dataclass(frozen=True)
class IKResult:
    """Outcome of one IK solve."""

    q: np.ndarray  # joint angles [rad]
    position_error_m: float
    axis_error_rad: float
    iterations: int
    converged: bool


def solve(model: mujoco.MjModel, data: mujoco.MjData, site: int, target_pos: np.ndarray,
          target_axis: np.ndarray, q_start: np.ndarray) -> IKResult:
    """Solve for ``q`` putting ``site`` at ``target_pos`` [m] with z along ``target_axis``.

    Args:
      model, data: the compiled cell and a scratch MjData (its qpos is overwritten).
      site: TCP site id.
      target_pos: world position [m].
      target_axis: unit vector the site's z axis should point along.
      q_start: initial joint angles [rad] (also picks the configuration branch).
    """
    lo = model.jnt_range[:6, 0]
    hi = model.jnt_range[:6, 1]
    q = np.clip(np.asarray(q_start, dtype=float).copy(), lo, hi)
    jacp = np.zeros((3, model.nv))
    jacr = np.zeros((3, model.nv))
    err = np.zeros(6)
    eye = np.eye(6) * DAMPING**2
    pos_err = axis_err = math.inf
    for iteration in range(1, MAX_ITERATIONS + 1):
        data.qpos[:6] = q
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        axis = data.site_xmat[site].reshape(3, 3)[:, 2]
        err[:3] = target_pos - data.site_xpos[site]
        err[3:] = np.cross(axis, target_axis)
        pos_err = float(np.linalg.norm(err[:3]))
        axis_err = _angle(axis, target_axis)
        if pos_err < CONVERGED_POSITION_M and axis_err < CONVERGED_AXIS_RAD:
            return IKResult(q, pos_err, axis_err, iteration, True)
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        jac = np.vstack([jacp[:, :6], jacr[:, :6]])
        dq = jac.T @ np.linalg.solve(jac @ jac.T + eye, err)
        step = np.max(np.abs(dq))
        if step > MAX_STEP_RAD:
            dq *= MAX_STEP_RAD / step
        q = np.clip(q + dq, lo, hi)
    data.qpos[:6] = q
    mujoco.mj_kinematics(model, data)
    axis = data.site_xmat[site].reshape(3, 3)[:, 2]
    pos_err = float(np.linalg.norm(target_pos - data.site_xpos[site]))
    return IKResult(q, pos_err, _angle(axis, target_axis), MAX_ITERATIONS, False)


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(math.atan2(np.linalg.norm(np.cross(a, b)), float(np.dot(a, b))))


def within_envelope(target_pos: np.ndarray, target_axis: np.ndarray, base_pos: np.ndarray,
                    tcp_offset_m: float) -> bool:
    """Whether a TCP pose with the given approach axis lies in the arm's geometric envelope.

    The wrist-1 centre must lie within the annulus the upper arm and forearm can span
    from the shoulder (|a2| - |a3| .. |a2| + |a3|), in the arm plane once the lateral
    wrist offset d4 is taken out; d5 lets the wrist-1 centre sit on either side of the
    flange axis, so both sides are tried. Only valid for a vertical approach axis;
    other axes are treated as inside (the solver decides).
    """
    if abs(abs(float(target_axis[2])) - 1.0) > 1e-9:
        return True
    up = -np.sign(target_axis[2])
    wrist3 = target_pos + up * np.array([0, 0, tcp_offset_m + arm.DH_D[5]])
    rel = wrist3 - base_pos
    horiz = math.hypot(rel[0], rel[1])
    d4, d5 = arm.DH_D[3], arm.DH_D[4]
    reach_max = abs(arm.DH_A[1]) + abs(arm.DH_A[2])
    reach_min = abs(abs(arm.DH_A[1]) - abs(arm.DH_A[2]))
    if horiz < d4:
        return False  # the lateral wrist offset d4 cannot be taken out
    in_plane = math.sqrt(horiz * horiz - d4 * d4)
    dz = rel[2] - arm.DH_D[0]
    for radial_shift in (-d5, d5):
        dist = math.hypot(in_plane + radial_shift, dz)
        if reach_min <= dist <= reach_max:
            return True
    return False
