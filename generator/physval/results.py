"""Four-valued check results and the asset states derived from them.

A check that did not run is never PASS: it is UNVERIFIED with the reason, or
NOT_APPLICABLE when the asset declares nothing it could test.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class Status(enum.Enum):
    """Outcome of one check (protocol 004: PASS / FAIL / UNVERIFIED / NOT_APPLICABLE)."""

    PASS = "PASS"
    FAIL = "FAIL"
    UNVERIFIED = "UNVERIFIED"
    NOT_APPLICABLE = "NOT_APPLICABLE"


class Group(enum.Enum):
    """Test groups; the value names the protocol 004 table row they come from."""

    STRUCTURE = "structure"  # protocol 004 group 1
    GEOMETRY = "geometry"  # protocol 004 group 2
    INERTIA = "inertia"  # protocol 004 group 3
    PASSIVE = "passive"  # protocol 004 group 4
    RESPONSE = "response"  # protocol 004 group 5
    MATERIAL = "material"  # protocol 004 group 6
    MECHANISM = "mechanism"  # protocol 004 group 7
    TASK = "task"  # protocol 004 group 8
    NUMERICS = "numerics"  # protocol 004 group 9
    REAL_WORLD = "real-world"  # protocol 004 "现实一致性"
    ROBOT = "robot-model"  # design section 4, robot model


@dataclass(frozen=True)
class Threshold:
    """A pass criterion: ``comparison`` of ``measured`` against ``value`` in ``unit``."""

    value: Any
    unit: str
    comparison: str  # e.g. "<=", "<", ">=", "within"
    source: str  # e.g. "protocol 004 group 3"


@dataclass(frozen=True)
class CheckResult:
    """One executed (or explicitly not executed) check.

    Attributes:
        id: stable dotted identifier, e.g. ``inertia.mass``.
        group: the protocol group.
        status: PASS / FAIL / UNVERIFIED / NOT_APPLICABLE.
        measured: measured values (SI units, named with their unit suffix).
        threshold: the criterion, or None when the check did not run.
        method: how it was measured (engine, settings).
        reason: why it failed / was not run; empty on PASS.
    """

    id: str
    group: Group
    status: Status
    measured: Mapping[str, Any] = field(default_factory=dict)
    threshold: Threshold | None = None
    method: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form (camelCase keys as in the other evidence files)."""
        return {
            "id": self.id,
            "group": self.group.value,
            "status": self.status.value,
            "measured": dict(self.measured),
            "threshold": None
            if self.threshold is None
            else {
                "value": self.threshold.value,
                "unit": self.threshold.unit,
                "comparison": self.threshold.comparison,
                "source": self.threshold.source,
            },
            "method": self.method,
            "reason": self.reason,
        }


def judged(
    check_id: str,
    group: Group,
    ok: bool,
    measured: Mapping[str, Any],
    threshold: Threshold,
    method: str,
    failure: str,
) -> CheckResult:
    """A check that ran: PASS when ``ok``, else FAIL with ``failure`` as the reason."""
    return CheckResult(
        check_id, group, Status.PASS if ok else Status.FAIL, measured, threshold, method,
        "" if ok else failure,
    )


def not_run(check_id: str, group: Group, reason: str, method: str = "") -> CheckResult:
    """A check that could not run: UNVERIFIED with the reason (never PASS)."""
    return CheckResult(check_id, group, Status.UNVERIFIED, {}, None, method, reason)


def not_applicable(check_id: str, group: Group, reason: str) -> CheckResult:
    """A check with nothing to test on this asset (e.g. no cavity declared)."""
    return CheckResult(check_id, group, Status.NOT_APPLICABLE, {}, None, "", reason)


def combine(statuses: Iterable[Status]) -> Status:
    """Combine statuses: any FAIL -> FAIL; else any UNVERIFIED -> UNVERIFIED; else any PASS
    -> PASS; all NOT_APPLICABLE (or none) -> NOT_APPLICABLE."""
    seen = set(statuses)
    for status in (Status.FAIL, Status.UNVERIFIED, Status.PASS):
        if status in seen:
            return status
    return Status.NOT_APPLICABLE


# Asset states (protocol 004, "保留三种资产状态"), derived from check groups.
STRUCTURE_GROUPS = (Group.STRUCTURE,)
DYNAMICS_GROUPS = (Group.INERTIA, Group.PASSIVE, Group.RESPONSE, Group.NUMERICS)
TASK_GROUPS = (Group.GEOMETRY, Group.MECHANISM, Group.TASK)


@dataclass(frozen=True)
class AssetState:
    """A derived asset state with the checks it rests on."""

    name: str
    status: Status
    checks: tuple[str, ...]
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {"name": self.name, "status": self.status.value, "checks": list(self.checks),
                "detail": dict(self.detail)}


def _state(name: str, checks: Sequence[CheckResult], detail: Mapping[str, Any]) -> AssetState:
    return AssetState(name, combine(c.status for c in checks), tuple(c.id for c in checks),
                      detail)


def derive_states(
    checks: Sequence[CheckResult], tasks: Sequence[Mapping[str, Any]]
) -> list[AssetState]:
    """Derive STRUCTURE_VALID, DYNAMICS_SELF_CONSISTENT, TASK_VALIDATED, REAL_WORLD_FIT.

    A state that rests on a FAIL is FAIL; one that rests on a check that did not run is
    UNVERIFIED. DYNAMICS_SELF_CONSISTENT also requires STRUCTURE_VALID; a state with no
    applicable check is NOT_APPLICABLE (TASK_VALIDATED with no declared task) or UNVERIFIED
    (REAL_WORLD_FIT with no measurements: never silently "fits").

    Args:
        checks: every check of the asset.
        tasks: one ``{task, fixture, conditions, checks}`` record per declared task.
    """
    def pick(groups: Sequence[Group]) -> list[CheckResult]:
        return [c for c in checks if c.group in groups]

    structure = _state("STRUCTURE_VALID", pick(STRUCTURE_GROUPS), {})
    dyn_checks = pick(STRUCTURE_GROUPS) + pick(DYNAMICS_GROUPS)
    dynamics = _state("DYNAMICS_SELF_CONSISTENT", dyn_checks, {})
    by_id = {c.id: c for c in checks}
    task_detail = [
        {**t, "status": combine(by_id[i].status for i in t["checks"]).value} for t in tasks
    ]
    task_ids = [i for t in tasks for i in t["checks"]]
    task = AssetState(
        "TASK_VALIDATED",
        combine(by_id[i].status for i in task_ids) if task_ids else Status.NOT_APPLICABLE,
        tuple(task_ids),
        {"tasks": task_detail} if task_ids else {"reason": "no task declared in the manifest"},
    )
    real = pick((Group.REAL_WORLD, Group.MATERIAL))
    fit_status = combine(c.status for c in real)
    if fit_status is Status.NOT_APPLICABLE:
        fit_status = Status.UNVERIFIED
    fit = AssetState("REAL_WORLD_FIT", fit_status, tuple(c.id for c in real), {})
    return [structure, dynamics, task, fit]
