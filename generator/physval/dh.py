"""An independent numpy forward-kinematics implementation of a UR5e-class arm (standard DH).

Deliberately does not import :mod:`generator.arm` (which the MuJoCo model is built from):
the numbers are written here again from the Universal Robots UR5e DH table, so a slip in
either place shows up as a disagreement. T_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i).
"""

from __future__ import annotations

import math

import numpy as np

# Universal Robots, "DH parameters for calculations of kinematics and dynamics", UR5e [m, rad].
UR5E_D = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)
UR5E_A = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)
UR5E_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)


def link(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """One standard-DH link transform (4x4) for joint angle ``theta`` [rad]."""
    rz = np.eye(4)
    rz[:2, :2] = [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]]
    tz = np.eye(4)
    tz[2, 3] = d
    tx = np.eye(4)
    tx[0, 3] = a
    rx = np.eye(4)
    rx[1:3, 1:3] = [[math.cos(alpha), -math.sin(alpha)], [math.sin(alpha), math.cos(alpha)]]
    return rz @ tz @ tx @ rx


def forward(q: np.ndarray) -> np.ndarray:
    """Flange pose T_0_6 (4x4) in the base frame for joint angles ``q`` [rad]."""
    t = np.eye(4)
    for theta, d, a, alpha in zip(q, UR5E_D, UR5E_A, UR5E_ALPHA, strict=True):
        t = t @ link(float(theta), d, a, alpha)
    return t
