"""Shared set-up of the free-body experiments (groups 4, 5 and 9).

The free-body groups apply to a mesh asset (one free rigid body). An MJCF asset with a fixed
base (a mechanism) has no free body: the drop and impulse checks (groups 4 and 5) are
NOT_APPLICABLE for it; the timestep comparison (group 9) steps its joints instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from generator.physval.manifest import MESH_BODY, AssetManifest
from generator.physval.results import CheckResult, Group, not_applicable, not_run
from generator.physval.scene import (
    Placement,
    body_id,
    com_velocity,
    compile_spec,
    mesh_spec,
)


@dataclass(frozen=True)
class FreeBody:
    """A compiled free-body scene: model, data and the object's body id."""

    model: mujoco.MjModel
    data: mujoco.MjData
    body: int


def applicability(manifest: AssetManifest, loaded_ok: bool, check_id: str, group: Group
                  ) -> CheckResult | None:
    """None when the free-body check can run, else the NOT_APPLICABLE/UNVERIFIED result."""
    if manifest.kind != "mesh":
        return not_applicable(check_id, group, "MJCF mechanism asset with a fixed base: no "
                              "free rigid body to drop or push (its hinge is tested instead)")
    if not loaded_ok:
        return not_run(check_id, group, "the asset did not load")
    return None


def build(manifest: AssetManifest, timestep_s: float, *, ground: bool, gravity: bool = True,
          contacts: bool = True, pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
          quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)) -> FreeBody:
    """Compile the asset as a free body with the given engine flags.

    Args:
        timestep_s: integration step [s] (Euler integrator, MuJoCo's default).
        ground: add a ground plane at z = 0.
        gravity / contacts: False disables them (mjDSBL_GRAVITY / mjDSBL_CONTACT).
        pos / quat: initial pose of the body frame (world, [m], wxyz).
    """
    spec = mesh_spec(manifest, Placement(True, pos, quat), ground=ground)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    if not gravity:
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_GRAVITY
    if not contacts:
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    model, data = compile_spec(spec, timestep_s)
    return FreeBody(model, data, body_id(model, MESH_BODY))


def set_com_twist(fb: FreeBody, v_com: np.ndarray, w_world: np.ndarray) -> None:
    """Set the free joint velocity so the COM moves with ``v_com`` [m/s] and the body spins
    with ``w_world`` [rad/s] (world frame); MuJoCo's free-joint linear velocity is that of
    the body origin and its angular velocity is in the body frame."""
    m, d = fb.model, fb.data
    mujoco.mj_forward(m, d)
    r = d.xipos[fb.body] - d.xpos[fb.body]
    rot = d.xmat[fb.body].reshape(3, 3)
    d.qvel[0:3] = v_com - np.cross(w_world, r)
    d.qvel[3:6] = rot.T @ w_world
    mujoco.mj_forward(m, d)


def steps(duration_s: float, timestep_s: float) -> int:
    """Number of steps covering ``duration_s`` exactly (both in [s])."""
    return round(duration_s / timestep_s)


def fly(fb: FreeBody, duration_s: float, wrench: np.ndarray | None = None
        ) -> tuple[np.ndarray, np.ndarray]:
    """Step the free body for ``duration_s`` [s] and return its COM velocity (linear [m/s],
    angular [rad/s], world frame).

    Args:
        wrench: optional constant world wrench (force [N], torque [N m]) applied at the COM
            through ``xfrc_applied`` on every step.
    """
    for _ in range(steps(duration_s, fb.model.opt.timestep)):
        if wrench is not None:
            fb.data.xfrc_applied[fb.body] = wrench
        mujoco.mj_step(fb.model, fb.data)
    return com_velocity(fb.model, fb.data, fb.body)
