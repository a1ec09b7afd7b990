"""The joint configurations both cross-checks compare at (DESIGN.md section 3).

Configuration 0 is the export pose: zero joint angles, the pose ``scene.usda`` is authored
at. Configurations 1..32 are drawn uniformly inside each hinge's limits with numpy's
``default_rng(CONFIG_SEED)``, so every run compares at the same angles.
"""

from __future__ import annotations

import mujoco
import numpy as np

CONFIG_SEED = 20260415  # fixed: the same 32 configurations in every run and on every machine
from generator.rules import RANDOM_CONFIGURATIONS

EXPORT_POSE = "zero joint angles (the pose scene.usda is authored at)"


def hinge_joints(model: mujoco.MjModel) -> list[int]:
    """Ids of the model's hinge joints in id order (the six arm joints)."""
    return [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]


def configurations(model: mujoco.MjModel, seed: int = CONFIG_SEED,
                   count: int = RANDOM_CONFIGURATIONS) -> np.ndarray:
    """The export pose followed by ``count`` seeded in-limit configurations.

    Args:
        model: the MuJoCo model; its hinge ranges [rad] bound the draws.
        seed: numpy ``default_rng`` seed.
        count: number of random configurations after the export pose.

    Returns:
        Array (1 + count, number of hinges) of joint angles [rad], hinges in id order.
    """
    joints = hinge_joints(model)
    low, high = model.jnt_range[joints, 0], model.jnt_range[joints, 1]
    rng = np.random.default_rng(seed)
    drawn = rng.uniform(low, high, size=(count, len(joints)))
    return np.vstack([np.zeros((1, len(joints))), drawn])


def set_hinges(model: mujoco.MjModel, data: mujoco.MjData, q: np.ndarray) -> None:
    """Write hinge angles ``q`` [rad] (hinges in id order) into ``data.qpos``."""
    for joint, angle in zip(hinge_joints(model), q, strict=True):
        data.qpos[model.jnt_qposadr[joint]] = angle
