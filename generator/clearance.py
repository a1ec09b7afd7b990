"""Signed clearance between the arm side and the static scene, from recorded joint angles.

Clearance is geometry only, so it is computed after the dynamics from the recorded
joint trajectory instead of inside the 500 Hz loop: every ``COARSE_STRIDE`` steps for
all arm-side x static pairs, then at every step around the coarse minimum of each
static object. Distances come from ``mj_geomDistance`` (negative = penetration).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

COARSE_STRIDE = 10  # 20 ms at 500 Hz
REFINE_HALF_WINDOW = 10  # steps on each side of a coarse minimum
DIST_MAX_M = 1.0  # distances beyond 1 m are reported as 1 m


@dataclass(frozen=True)
class Clearance:
    """Minimum signed distance [m] and where it occurs."""

    distance_m: float
    step: int
    geoms: tuple[str, str]


def min_clearance(model: mujoco.MjModel, qpos: np.ndarray, arm_geoms, static_geoms,
                  owner: dict[int, str]) -> tuple[Clearance, dict[str, Clearance]]:
    """Overall and per-static-object minimum clearance over the recorded ``qpos`` [N x nq]."""
    data = mujoco.MjData(model)
    fromto = np.zeros(6)
    objects = sorted(set(owner.values()))
    pairs_by_object = {o: [(a, s) for s in static_geoms if owner[s] == o for a in arm_geoms]
                       for o in objects}
    best: dict[str, tuple[float, int, int, int]] = {}

    def scan(steps, objs):
        for step in steps:
            data.qpos[:] = qpos[step]
            mujoco.mj_kinematics(model, data)
            for obj in objs:
                for a, s in pairs_by_object[obj]:
                    dist = mujoco.mj_geomDistance(model, data, a, s, DIST_MAX_M, fromto)
                    if obj not in best or dist < best[obj][0]:
                        best[obj] = (dist, step, a, s)

    n = len(qpos)
    coarse = list(range(0, n, COARSE_STRIDE)) + ([n - 1] if (n - 1) % COARSE_STRIDE else [])
    scan(coarse, objects)
    for obj in objects:
        centre = best[obj][1]
        scan(range(max(0, centre - REFINE_HALF_WINDOW), min(n, centre + REFINE_HALF_WINDOW + 1)),
             [obj])
    per_object = {o: _record(model, *best[o]) for o in objects}
    overall = min(per_object.values(), key=lambda c: c.distance_m)
    return overall, per_object


def _record(model, dist, step, a, s) -> Clearance:
    name = lambda g: mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g)
    return Clearance(float(dist), int(step), (name(a), name(s)))
