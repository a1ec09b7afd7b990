"""Quintic joint-space segments timed by the slowest joint.

A quintic with zero boundary velocity and acceleration, s(tau) = 10 tau^3 - 15 tau^4 +
6 tau^5, has peak velocity 1.875 dq/T at mid-segment, so a segment's duration is
T = 1.875 max_j |dq_j| / (speedFraction * rated_speed_j), rounded up to whole steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QUINTIC_PEAK_VELOCITY_FACTOR = 1.875  # max of ds/dtau for the minimum-jerk quintic
MIN_SEGMENT_S = 0.1  # floor so that tiny moves are not commanded as steps

SEGMENT_NAMES = ("approach", "grasp", "lift", "transfer", "place", "retreat")


@dataclass(frozen=True)
class Segment:
    name: str
    q0: np.ndarray  # [rad]
    q1: np.ndarray  # [rad]
    start_s: float
    duration_s: float


def quintic(tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised position, velocity and acceleration of the quintic at ``tau`` in [0, 1]."""
    tau = np.clip(tau, 0.0, 1.0)
    s = tau**3 * (10 - 15 * tau + 6 * tau**2)
    ds = 30 * tau**2 * (1 - tau) ** 2
    dds = 60 * tau * (1 - tau) * (1 - 2 * tau)
    return s, ds, dds


def segment_duration(q0: np.ndarray, q1: np.ndarray, speed_limit_rad_s: np.ndarray,
                     dt_s: float) -> float:
    """Duration [s] set by the slowest joint, at least ``MIN_SEGMENT_S``, whole steps."""
    raw = float(np.max(QUINTIC_PEAK_VELOCITY_FACTOR * np.abs(q1 - q0) / speed_limit_rad_s))
    raw = max(raw, MIN_SEGMENT_S)
    return math.ceil(raw / dt_s - 1e-9) * dt_s


def plan(waypoints: list[np.ndarray], speed_limit_rad_s: np.ndarray, dt_s: float,
         names: tuple[str, ...] = SEGMENT_NAMES) -> list[Segment]:
    """Segments between consecutive waypoints (len(waypoints) == len(names) + 1)."""
    if len(waypoints) != len(names) + 1:
        raise ValueError(f"{len(names)} segments need {len(names) + 1} waypoints")
    segments, t = [], 0.0
    for name, q0, q1 in zip(names, waypoints[:-1], waypoints[1:], strict=True):
        duration = segment_duration(q0, q1, speed_limit_rad_s, dt_s)
        segments.append(Segment(name, np.asarray(q0), np.asarray(q1), t, duration))
        t += duration
    return segments


def sample(segments: list[Segment], dt_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint setpoints at every step time k*dt for k = 1..N (N*dt = total duration).

    Returns (setpoints [N x 6] rad, segment index per step [N]).
    """
    q, _, index = sample_with_velocity(segments, dt_s)
    return q, index


def sample_with_velocity(segments: list[Segment], dt_s: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Like :func:`sample`, plus the setpoint velocities [N x 6] rad/s (the quintic's
    analytic derivative, fed forward to the servos)."""
    total = segments[-1].start_s + segments[-1].duration_s
    n = round(total / dt_s)
    times = np.arange(1, n + 1) * dt_s
    q = np.empty((n, len(segments[0].q0)))
    qd = np.empty_like(q)
    index = np.empty(n, dtype=np.int32)
    for i, seg in enumerate(segments):
        mask = (times > seg.start_s - 1e-9) & (times <= seg.start_s + seg.duration_s + 1e-9)
        s, ds, _ = quintic((times[mask] - seg.start_s) / seg.duration_s)
        q[mask] = seg.q0 + np.outer(s, seg.q1 - seg.q0)
        qd[mask] = np.outer(ds / seg.duration_s, seg.q1 - seg.q0)
        index[mask] = i
    return q, qd, index
