"""Group 5 (response to known impulses): free body, contacts and gravity off.

Protocol 004 group 5: dv = J/m and, about a principal axis, dw = L/I, within 2 %, with m and
I the manifest's declared values (a response that does not match m points at units/export).
"""

from __future__ import annotations

import numpy as np

from generator.physval import freebody
from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged
from generator.physval.thresholds import (
    IMPULSE_DURATION_S,
    IMPULSE_REL_TOL,
    IMPULSE_TARGET_DV_M_S,
    IMPULSE_TARGET_DW_RAD_S,
    SIM_TIMESTEP_S,
)

SRC = "protocol 004 group 5"
METHOD = (f"constant xfrc_applied at the COM for {IMPULSE_DURATION_S} s "
          f"(dt {SIM_TIMESTEP_S} s, Euler), gravity and contacts disabled, from rest")


def _apply(manifest: AssetManifest, wrench: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply a constant world wrench [N, N m] for the impulse duration; return (dv, dw)."""
    fb = freebody.build(manifest, SIM_TIMESTEP_S, ground=False, gravity=False, contacts=False)
    return freebody.fly(fb, IMPULSE_DURATION_S, wrench)


def check_linear(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """response.linear: dv along x, y, z within 2 % of J/m_declared."""
    cid = "response.linear"
    if (skip := freebody.applicability(manifest, loaded_ok, cid, Group.RESPONSE)) is not None:
        return skip
    mass = manifest.inertials[0].mass_kg
    impulse = mass * IMPULSE_TARGET_DV_M_S
    rows = []
    for k, axis in enumerate("xyz"):
        wrench = np.zeros(6)
        wrench[k] = impulse / IMPULSE_DURATION_S
        dv, _ = _apply(manifest, wrench)
        expected = impulse / mass
        rows.append({"axis": axis, "impulseNs": impulse, "dvMS": float(dv[k]),
                     "expectedMS": expected, "relError": abs(dv[k] - expected) / expected})
    worst = max(r["relError"] for r in rows)
    return judged(cid, Group.RESPONSE, worst <= IMPULSE_REL_TOL,
                  {"axes": rows, "worstRelError": worst, "declaredMassKg": mass},
                  Threshold(IMPULSE_REL_TOL, "1 (relative)", "<=", SRC), METHOD,
                  f"dv differs from J/m by {worst:.3g}: the engine mass is not the declared mass")


def check_angular(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """response.angular: dw about each declared principal axis within 2 % of L/I."""
    cid = "response.angular"
    if (skip := freebody.applicability(manifest, loaded_ok, cid, Group.RESPONSE)) is not None:
        return skip
    principal, axes = np.linalg.eigh(np.array(manifest.inertials[0].inertia_kg_m2))
    rows = []
    for k in range(3):
        axis = axes[:, k]  # body frame = world frame at the identity start pose
        momentum = principal[k] * IMPULSE_TARGET_DW_RAD_S
        wrench = np.concatenate([np.zeros(3), axis * momentum / IMPULSE_DURATION_S])
        _, dw = _apply(manifest, wrench)
        along = float(dw @ axis)
        expected = momentum / principal[k]
        rows.append({"axis": axis, "principalKgM2": float(principal[k]),
                     "angularImpulseNms": momentum, "dwRadS": along, "expectedRadS": expected,
                     "offAxisRadS": float(np.linalg.norm(dw - along * axis)),
                     "relError": abs(along - expected) / expected})
    worst = max(r["relError"] for r in rows)
    return judged(cid, Group.RESPONSE, worst <= IMPULSE_REL_TOL,
                  {"axes": rows, "worstRelError": worst},
                  Threshold(IMPULSE_REL_TOL, "1 (relative)", "<=", SRC),
                  METHOD + "; torque along each principal axis of the declared inertia",
                  f"dw differs from L/I by {worst:.3g}: the engine inertia is not the declared one")


def run_response(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """All group-5 checks."""
    return [check_linear(manifest, loaded_ok), check_angular(manifest, loaded_ok)]
