"""The four cell checks and the reference/candidate pairing.

These functions are pure: they take per-seed trial records (the dicts written to
robot.json) and requirements, and return check records. The simulation uses them
to write robot.json and ``evidence verify`` uses the very same functions to
recompute every summary from the trials, so a summary can never drift from its
records without verification noticing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Design section 1: "every seed's worst TCP error <= 2 mm".
REACH_TOLERANCE_MM = 2.0

CHECK_IDS = ("reach", "collision-free", "cycle-time", "success-rate")

METHODS = {
    "reach": (
        "Damped least squares IK on mj_jacSite (position + approach axis, joint limits, "
        "<= 400 iterations per target) for six targets. A target is reached when the TCP is "
        "within 2 mm and the approach axis within 0.5 deg; observed is the worst TCP position "
        "error over all seeds and targets (trials also record the worst axis error)."
    ),
    "collision-free": (
        "Every MuJoCo contact between an arm-side geom (links, gripper, mounted part, payload) "
        "and a static-scene geom (guards, conveyor, fixture, pedestal, floor) during the "
        "simulated cycle at 500 Hz; observed is the number of seeds with at least one contact."
    ),
    "cycle-time": (
        "Simulated time from the start pose to the end of settling (all joints within the "
        "position and velocity tolerances); observed is the slowest seed. A seed that never "
        "settles has no cycle time and fails this check."
    ),
    "success-rate": (
        "Share of seeds that are reached, collision-free, settled and within maxCycleSeconds."
    ),
}


def trial_success(trial: Mapping[str, Any], requirements: Mapping[str, Any]) -> bool:
    """A seed succeeds when it is reached, collision-free and settles within the cycle."""
    cycle = trial.get("cycleSeconds")
    return bool(
        trial["reached"]
        and trial["collisionFree"]
        and cycle is not None
        and cycle <= requirements["maxCycleSeconds"]
    )


def success_rate(trials: Sequence[Mapping[str, Any]], requirements: Mapping[str, Any]) -> float:
    if not trials:
        return 0.0
    return sum(trial_success(t, requirements) for t in trials) / len(trials)


def evaluate_checks(
    trials: Sequence[Mapping[str, Any]], requirements: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Compute the four checks, in ``CHECK_IDS`` order, from per-seed trials."""
    worst_ik = max((t["ikErrorMm"] for t in trials), default=0.0)
    colliding = sum(1 for t in trials if not t["collisionFree"])
    cycles = [t.get("cycleSeconds") for t in trials]
    slowest = None if any(c is None for c in cycles) or not cycles else max(cycles)
    rate = success_rate(trials, requirements)
    return [
        _check("reach", all(t["reached"] for t in trials), worst_ik, REACH_TOLERANCE_MM, "mm"),
        _check("collision-free", colliding == 0, colliding, 0, "seeds with contact"),
        _check(
            "cycle-time",
            slowest is not None and slowest <= requirements["maxCycleSeconds"],
            slowest,
            requirements["maxCycleSeconds"],
            "s",
        ),
        _check("success-rate", rate >= requirements["minSuccessRate"], rate,
               requirements["minSuccessRate"], "fraction of seeds"),
    ]


def _check(check_id: str, passed: bool, observed: Any, required: Any, unit: str) -> dict:
    return {
        "id": check_id,
        "passed": bool(passed),
        "observed": observed,
        "required": required,
        "unit": unit,
        "method": METHODS[check_id],
    }


def cell_passed(checks: Sequence[Mapping[str, Any]]) -> bool:
    return all(c["passed"] for c in checks)


def pair_trials(
    reference: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]],
    requirements: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Per seed, reference next to candidate; flag regressions and gains.

    ``regression``: the reference succeeds and the candidate fails on that seed;
    ``gain``: the reverse; ``same`` otherwise.
    """
    by_seed = {t["seed"]: t for t in candidate}
    rows = []
    for ref in reference:
        cand = by_seed[ref["seed"]]
        ref_ok = trial_success(ref, requirements)
        cand_ok = trial_success(cand, requirements)
        if ref_ok and not cand_ok:
            change = "regression"
        elif cand_ok and not ref_ok:
            change = "gain"
        else:
            change = "same"
        rows.append({
            "seed": ref["seed"],
            "referenceSuccess": ref_ok,
            "candidateSuccess": cand_ok,
            "change": change,
            "referenceCycleSeconds": ref.get("cycleSeconds"),
            "candidateCycleSeconds": cand.get("cycleSeconds"),
        })
    return rows
