"""Compare recorded per-seed trials with a re-run, field by field.

``evidence reproduce RUN`` re-runs the recorded spec and calls :func:`diff_trials` per
cell. Values are compared after canonical JSON conversion (numpy and tuples become
plain JSON), exactly: an identical environment must give identical numbers. Nested
fields are named with dots and list indices, e.g. ``collisions[0].depthMm`` or
``peakTorqueNm[2]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.evidence.canonical import same_value, to_jsonable

WHOLE_TRIAL = "(trial)"


@dataclass(frozen=True)
class TrialDiff:
    """One differing field of one seed.

    Attributes:
        seed: the seed.
        field: dotted path inside the trial record; ``(trial)`` when the seed exists on
            one side only.
        recorded: value in the run's robot.json (None when absent).
        current: value from the re-run (None when absent).
    """

    seed: int
    field: str
    recorded: Any
    current: Any

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "field": self.field, "recorded": self.recorded,
                "current": self.current}

    def __str__(self) -> str:
        return f"seed {self.seed}: {self.field}: recorded {self.recorded!r}, " \
               f"current {self.current!r}"


def diff_trials(recorded: Sequence[Mapping[str, Any]],
                current: Sequence[Mapping[str, Any]]) -> list[TrialDiff]:
    """Every field that differs between recorded and re-run trials, matched by seed.

    Args:
        recorded: trials from robot.json.
        current: trials from the re-run (dicts; numpy values allowed).

    Returns:
        Differences sorted by seed, then field order of appearance; empty when identical.
    """
    old = {int(t["seed"]): to_jsonable(dict(t)) for t in recorded}
    new = {int(t["seed"]): to_jsonable(dict(t)) for t in current}
    diffs: list[TrialDiff] = []
    for seed in sorted(set(old) | set(new)):
        if seed not in new:
            diffs.append(TrialDiff(seed, WHOLE_TRIAL, "present", None))
        elif seed not in old:
            diffs.append(TrialDiff(seed, WHOLE_TRIAL, None, "present"))
        else:
            diffs.extend(TrialDiff(seed, f, a, b) for f, a, b in _diff_values(old[seed],
                                                                                new[seed], ""))
    return diffs


def _diff_values(a: Any, b: Any, path: str) -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in list(a) + [k for k in b if k not in a]:
            out += _diff_values(a.get(key), b.get(key), f"{path}.{key}" if path else key)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += _diff_values(x, y, f"{path}[{i}]")
        return out
    return [] if same_value(a, b) else [(path, a, b)]


def format_diffs(diffs: Sequence[TrialDiff], limit: int = 200) -> str:
    """Human-readable listing, one difference per line, at most ``limit`` lines."""
    if not diffs:
        return "all per-seed fields identical"
    lines = [str(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more differences")
    return "\n".join(lines)
