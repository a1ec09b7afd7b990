"""UR5e-class arm constants, each with its source.

Kinematics use the standard Denavit-Hartenberg convention, T_i = Rz(q_i) Tz(d_i) Tx(a_i)
Rx(alpha_i). Lengths are the public UR5e datasheet / Universal Robots DH table values.
The MuJoCo model in :mod:`generator.cell` is built from these numbers; an independent
numpy DH implementation (:func:`dh_forward`) exists so the MuJoCo kinematics can be
checked against something that is not MuJoCo.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

JOINT_NAMES = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")
LINK_NAMES = ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link",
              "wrist_2_link", "wrist_3_link")

# Universal Robots, "DH parameters for calculations of kinematics and dynamics", UR5e row.
DH_D = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)  # [m]
DH_A = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)  # [m]
DH_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)  # [rad]

# Same source: link masses [kg] and centres of mass in each link's DH frame [m].
LINK_MASS_KG = (3.761, 8.058, 2.846, 1.37, 1.3, 0.365)
LINK_COM_DH = (
    (0.0, -0.02561, 0.00193),
    (0.2125, 0.0, 0.11336),
    (0.15, 0.0, 0.0265),
    (0.0, -0.0018, 0.01634),
    (0.0, 0.0018, 0.01634),
    (0.0, 0.0, -0.001159),
)
# Inertia is not published; each link is approximated as a solid cylinder of this
# radius [m] and length [m] about its centre of mass (axis along the link).
LINK_INERTIA_CYLINDER = ((0.06, 0.15), (0.054, 0.425), (0.045, 0.392), (0.045, 0.12),
                         (0.045, 0.12), (0.04, 0.04))

# UR5e datasheet: working range +-360 deg on all joints. The elbow is limited to
# +-180 deg in the model because the forearm folds into the upper arm beyond that.
JOINT_LIMITS_RAD = ((-2 * math.pi, 2 * math.pi), (-2 * math.pi, 2 * math.pi),
                    (-math.pi, math.pi), (-2 * math.pi, 2 * math.pi),
                    (-2 * math.pi, 2 * math.pi), (-2 * math.pi, 2 * math.pi))
# UR5e datasheet: maximum speed 180 deg/s on every joint.
RATED_SPEED_RAD_S = (math.pi,) * 6
# UR5e joint sizes: size-3 joints (base, shoulder, elbow) 150 N m, size-1 wrists 28 N m.
TORQUE_LIMIT_NM = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)
# Reflected rotor inertia behind the harmonic drives [kg m^2]; an estimate for a
# 100:1 reduction (not published). It makes the 500 Hz position loop well damped.
ARMATURE_KG_M2 = (0.2, 0.2, 0.1, 0.02, 0.02, 0.02)
# Position-servo stiffness [N m/rad]; damping is set for a damping ratio of 1 at the
# start pose (see cell.py). Gravity is compensated through the actuators, inside the
# torque limits above (MuJoCo actuatorgravcomp), so there is no steady-state sag.
SERVO_KP = (4000.0, 4000.0, 2500.0, 600.0, 600.0, 300.0)
SERVO_DAMPING_RATIO = 1.0


@dataclass(frozen=True)
class DHRow:
    d: float
    a: float
    alpha: float


DH_TABLE = tuple(DHRow(d, a, al) for d, a, al in zip(DH_D, DH_A, DH_ALPHA, strict=True))


def dh_transform(theta: float, row: DHRow) -> np.ndarray:
    """Standard DH link transform Rz(theta) Tz(d) Tx(a) Rx(alpha) as a 4x4 matrix."""
    ct, st = math.cos(theta), math.sin(theta)
    ca, sa = math.cos(row.alpha), math.sin(row.alpha)
    return np.array([
        [ct, -st * ca, st * sa, row.a * ct],
        [st, ct * ca, -ct * sa, row.a * st],
        [0.0, sa, ca, row.d],
        [0.0, 0.0, 0.0, 1.0],
    ])


def dh_frames(q: np.ndarray) -> list[np.ndarray]:
    """Frames T_0..T_6 of the DH chain (T_0 is the base frame) for joint angles ``q`` [rad]."""
    frames = [np.eye(4)]
    for theta, row in zip(q, DH_TABLE, strict=True):
        frames.append(frames[-1] @ dh_transform(float(theta), row))
    return frames


def dh_forward(q: np.ndarray) -> np.ndarray:
    """Flange pose T_0_6 (4x4, base frame) from the numpy DH chain; no MuJoCo involved."""
    return dh_frames(q)[-1]


def cylinder_inertia(mass: float, radius: float, length: float) -> tuple[float, float, float]:
    """Principal inertia (about COM) of a solid cylinder with its axis along local x [kg m^2]."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3 * radius**2 + length**2) / 12.0
    return (axial, transverse, transverse)
