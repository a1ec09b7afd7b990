"""Pass/fail rules shared by the producers and ``evidence verify``.

Every rule that turns a recorded measurement into ``passed``/``reasons`` lives here, once:
the pipeline stage that writes a record applies it, and ``evidence verify`` re-applies it
to the file, so a summary cannot drift from its record. This module is pure Python on
plain JSON values: verifying an archive years later needs no simulation engine, USD,
Newton or Pinocchio.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# --- per-seed trial -------------------------------------------------------------------
# A target counts as reached when the TCP is within the reach check's 2 mm
# (generator.checks.REACH_TOLERANCE_MM) and the approach axis within this angle.
REACHED_AXIS_DEG = 0.5

# --- CAD part mass truth (DESIGN.md section 2) ------------------------------------------
# Compiled part mass (tool body minus payload) vs B-Rep mass. The reference system once got
# 110 g for a 31.85 g part from MuJoCo's default inertia mode; an exact-mesh STL of the
# samples lands within 0.01 % (tessellation error only).
MASS_TOLERANCE_REL = 0.03


def _rel(value: float, reference: float) -> float:
    """Relative difference of ``value`` from ``reference`` (1 = 100 %), to 1e-8."""
    return round(float((value - reference) / reference), 8) + 0.0


# --- OpenUSD export and the Newton / Pinocchio cross-checks (DESIGN.md section 3) -------
# DESIGN.md section 3 (the reference system's published thresholds). Newton works in
# float32: at 1-2 m from the origin one ulp is ~1e-7 m, three orders below 0.1 mm; the
# MassAPI mass is a float, one ulp of 8 kg is ~0.5 mg, inside 1 mg.
POSITION_TOL_MM = 0.1
ANGLE_TOL_DEG = 0.01
MASS_TOL_MG = 1.0
REQUIRED_ARTICULATIONS = 1
REQUIRED_REVOLUTE_JOINTS = 6
RANDOM_CONFIGURATIONS = 32  # DESIGN.md section 3: the export pose and 32 seeded in-limit ones
REQUIRED_CONFIGURATIONS = 1 + RANDOM_CONFIGURATIONS  # the export pose and 32 drawn
FINALIZE_OK = "ok"

# Tolerances. Both libraries evaluate the same double-precision model by recursive algorithms
# over six bodies; round-off is ~1e-13 of the largest term (STACK.md saw ~1e-12 on this arm).
# The smallest defect worth catching is a 1 mg mass error: 1e-6 kg x 9.81 m/s^2 x ~0.1-1 m
# lever = 1e-6..1e-5 N m of torque and 1e-8..1e-6 kg m^2 of inertia. The limits below sit
# four or more orders above round-off and two or more below that defect.
GRAVITY_TOL_NM = 1e-8  # absolute, gravity torques [N m]
MASS_MATRIX_TOL = 1e-10  # absolute, joint-space mass matrix [kg m^2]
RELATIVE_TOL = 1e-9  # relative to the largest |value| at the same configuration
ARMATURE_TOL = 1e-12  # [kg m^2]; parsed from the same decimal text, so equal to round-off
TOLERANCES = {"gravityTorqueNm": GRAVITY_TOL_NM, "massMatrixKgM2": MASS_MATRIX_TOL,
              "relative": RELATIVE_TOL, "armatureKgM2": ARMATURE_TOL}


def failure_reason(trial: dict, targets: list[dict], requirements: dict) -> str | None:
    """Why a seed failed, in order of precedence (None: it succeeded)."""
    for r in targets:
        if r["reason"] == "unreachable":
            return "unreachable"
    if not trial["reached"]:
        return "not-converged"
    if not trial["collisionFree"]:
        return "collision"
    if not trial["settled"]:
        return "not-settled"
    if trial["cycleSeconds"] > requirements["maxCycleSeconds"]:
        return "over-cycle"
    return None


# --- run verdict stages ----------------------------------------------------------------
STAGE_USD = "OpenUSD validation"
STAGE_NEWTON = "Newton cross-check"
STAGE_DYNAMICS = "Pinocchio dynamics cross-check"
STAGE_PHYSVAL = "physical-validation"


def stage(name: str, file: str, record: dict) -> dict:
    """A run.json stage from a record with ``passed`` and ``reasons``."""
    reasons = record.get("reasons") or []
    return {"name": name, "file": f"{file}", "passed": bool(record["passed"]),
            "reason": "; ".join(reasons) if reasons else "passed"}


def physval_stage(physval: dict) -> dict:
    """The run fails when any executed physical-validation check FAILs (UNVERIFIED and
    NOT_APPLICABLE are shown, never counted as passes or failures)."""
    failed = [f"{role}: {c['id']}" for role, asset in sorted(physval["assets"].items())
              for c in asset["checks"] if c["status"] == "FAIL"]
    if physval["robot"].get("status") == "FAIL":
        failed += [f"robot: {c['id']}" for c in physval["robot"]["checks"]
                   if c["status"] == "FAIL"]
    return {"name": STAGE_PHYSVAL, "file": "physval.json", "passed": not failed,
            "reason": "FAIL: " + ", ".join(failed) if failed else "no executed check failed"}


def newton_reasons(record: Mapping[str, Any]) -> list[str]:
    """Why a newton.json record fails (empty: it passes), from its recorded measurements.

    The one pass/fail rule of the Newton cross-check: :func:`newton_crosscheck` writes
    ``passed``/``reasons`` with it and ``evidence verify`` re-applies it to the file. The
    design thresholds are this module's constants, never the record's ``thresholds``.

    Raises:
        KeyError, TypeError: the record lacks a field the rule needs.
    """
    reasons = []
    orphans = record["orphanJoints"]
    if orphans:
        reasons.append(
            f"{orphans} orphan joint(s) in Newton, in no articulation: "
            f"{', '.join(record['orphanJointNames'])}; put PhysicsArticulationRootAPI on "
            "an ancestor of the robot's bodies (/Workcell)")
    if record["articulations"] != REQUIRED_ARTICULATIONS:
        reasons.append(f"Newton found {record['articulations']} articulation(s); the cell "
                       f"must import as exactly {REQUIRED_ARTICULATIONS}")
    if record["revoluteJoints"] != REQUIRED_REVOLUTE_JOINTS:
        reasons.append(f"Newton found {record['revoluteJoints']} revolute joint(s); the arm "
                       f"has {REQUIRED_REVOLUTE_JOINTS}")
    if record["newtonFinalize"] != FINALIZE_OK and not orphans:
        reasons.append(record["newtonFinalize"])
    for key in ("missingInNewton", "extraInNewton"):
        if record["bodies"][key]:
            reasons.append(f"bodies {key}: {', '.join(record['bodies'][key])}")
    for name, diff in sorted(record["massDifferencesMg"].items()):
        if not abs(diff) <= MASS_TOL_MG:
            reasons.append(f"mass of {name} differs by {diff:.3f} mg between scene.usda and "
                           f"scene.xml (limit {MASS_TOL_MG} mg)")
    if not record["worstPositionErrorMm"] <= POSITION_TOL_MM:
        reasons.append(
            f"forward kinematics differ: {record['worstPositionBody']} is "
            f"{record['worstPositionErrorMm']:.4g} mm off at configuration "
            f"{record['worstPositionConfig']} (limit {POSITION_TOL_MM} mm); check the joint "
            "frames")
    if not record["worstAngleErrorDeg"] <= ANGLE_TOL_DEG:
        reasons.append(
            f"forward kinematics differ: {record['worstAngleBody']} is turned "
            f"{record['worstAngleErrorDeg']:.4g} deg at configuration "
            f"{record['worstAngleConfig']} (limit {ANGLE_TOL_DEG} deg); check the joint frames")
    if record["configurations"] != REQUIRED_CONFIGURATIONS:
        reasons.append(f"compared at {record['configurations']} configuration(s); the check "
                       f"needs {REQUIRED_CONFIGURATIONS} (the export pose and "
                       f"{RANDOM_CONFIGURATIONS} seeded ones)")
    return reasons


def dynamics_reasons(record: Mapping[str, Any]) -> list[str]:
    """Why a dynamics.json record fails (empty: it passes): its recorded ``tolerances``
    applied to its recorded worst differences.

    The one pass/fail rule of the dynamics cross-check: :func:`dynamics_crosscheck` writes
    ``passed``/``reasons`` with it, ``evidence verify`` re-applies it to the file (and
    checks the recorded tolerances are :data:`TOLERANCES`).

    Raises:
        KeyError, TypeError: the record lacks a field the rule needs.
    """
    tol = record["tolerances"]
    relative = tol["relative"]
    reasons = []
    for label, key, limit, unit in (("gravity torque", "gravityTorque", "gravityTorqueNm", "N m"),
                                    ("mass matrix", "massMatrix", "massMatrixKgM2", "kg m^2")):
        rec = record[key]
        if not (rec["worstAbsDiff"] <= tol[limit] and rec["worstRelDiff"] <= relative):
            reasons.append(
                f"{label} differs between MuJoCo and Pinocchio by {rec['worstAbsDiff']:.3g} "
                f"{unit} (relative {rec['worstRelDiff']:.3g}) at {rec['worstEntry']}, "
                f"configuration {rec['worstConfig']} (limits {tol[limit]:g} {unit}, relative "
                f"{relative:g}); scene.xml does not carry the simulated inertias")
    if not record["armature"]["worstAbsDiff"] <= tol["armatureKgM2"]:
        reasons.append(f"joint armature read by Pinocchio differs from MuJoCo's by "
                       f"{record['armature']['worstAbsDiff']:.3g} kg m^2")
    return reasons


def usd_reasons(record: Mapping[str, Any]) -> list[str]:
    """Why a USD validation record (robot.json ``exports.usd``) fails; empty: it passes.

    The one pass/fail rule of the OpenUSD stage: :func:`validate_usd` writes ``passed`` and
    ``reasons`` with it, ``evidence verify`` re-applies it to robot.json. Any validator error
    or warning fails, and so does a joint count other than six (non-fixed and revolute).
    """
    reasons = []
    if record["errors"] or record["warnings"]:
        reasons.append(f"USD validators report {record['errors']} error(s) and "
                       f"{record['warnings']} warning(s); see exports.usd.findings")
    if record["nonFixedJoints"] != REQUIRED_REVOLUTE_JOINTS:
        reasons.append(f"scene.usda has {record['nonFixedJoints']} non-fixed joints; the arm "
                       f"needs exactly {REQUIRED_REVOLUTE_JOINTS}")
    elif record["revoluteJoints"] != REQUIRED_REVOLUTE_JOINTS:
        reasons.append(f"scene.usda has {record['revoluteJoints']} revolute joints; the arm "
                       f"needs exactly {REQUIRED_REVOLUTE_JOINTS}")
    return reasons


def relative_to_brep(masses_g: dict[str, float], brep_g: float) -> dict[str, float]:
    """The mass table's ``relativeToBrep``: each mass's relative difference from the B-Rep
    mass (1 = 100 %, to 1e-8); ``evidence verify`` recomputes it from ``massesG``."""
    return {name: _rel(mass, brep_g) for name, mass in masses_g.items()}


def mass_within_tolerance(used_g: float, brep_g: float,
                          tolerance_rel: float = MASS_TOLERANCE_REL) -> bool:
    """The tool mass rule: the compiled part mass within ``tolerance_rel`` (3 %) of the
    B-Rep mass. The mass table's ``passed``; ``evidence verify`` re-applies it."""
    return abs(_rel(used_g, brep_g)) <= tolerance_rel
