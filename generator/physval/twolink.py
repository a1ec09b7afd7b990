"""The two-link planar arm example of seed 003 (section 4): holding torques G(q).

m1 = 2 kg, m2 = 1.5 kg, l1 = 0.4 m, l2 = 0.3 m, COM at mid-link, q1 = 30 deg, q2 = 45 deg,
qdot = qddot = 0; angles from the horizontal, gravity 9.81 m/s^2. The document states about
12.6 N m (joint 1) and 4.4 N m (joint 2); both a closed form and a MuJoCo model are computed
and reported next to those numbers, agreeing or not.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

M1_KG, M2_KG, L1_M, L2_M = 2.0, 1.5, 0.4, 0.3
Q_DEG = (30.0, 45.0)
G_M_S2 = 9.81
DOCUMENT_NM = (12.6, 4.4)  # seed 003 section 4 ("约 12.6 N·m", "约 4.4 N·m", example values)
AGREE_REL_TOL = 0.05  # project choice: "about" in the document read as within 5 %


def closed_form(q1: float, q2: float) -> np.ndarray:
    """G(q) [N m] of the planar two-link arm, point-mass links with COM at mid-link."""
    c1, c12 = math.cos(q1), math.cos(q1 + q2)
    tau2 = M2_KG * G_M_S2 * (L2_M / 2) * c12
    tau1 = (M1_KG * L1_M / 2 + M2_KG * L1_M) * G_M_S2 * c1 + tau2
    return np.array([tau1, tau2])


def mujoco_torques(q1: float, q2: float) -> np.ndarray:
    """G(q) [N m] from a MuJoCo model of the same arm (qfrc_bias at zero velocity)."""
    spec = mujoco.MjSpec()
    spec.option.gravity = [0.0, 0.0, -G_M_S2]
    parent = spec.worldbody
    for name, mass, length, pos in (("link1", M1_KG, L1_M, 0.0), ("link2", M2_KG, L2_M, L1_M)):
        body = parent.add_body(name=name, pos=[pos, 0.0, 0.0])
        # axis -y: a positive angle lifts +x towards +z (angles from the horizontal)
        body.add_joint(name=f"q_{name}", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, -1, 0])
        body.mass, body.ipos, body.explicitinertial = mass, [length / 2, 0, 0], True
        body.inertia = [1e-6, mass * length**2 / 12, mass * length**2 / 12]
        parent = body
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[:] = [q1, q2]
    mujoco.mj_forward(model, data)
    return data.qfrc_bias.copy()


def two_link_record() -> dict[str, Any]:
    """Computed holding torques next to the document's, with an honest agreement flag."""
    q1, q2 = (math.radians(v) for v in Q_DEG)
    numpy_nm, mujoco_nm = closed_form(q1, q2), mujoco_torques(q1, q2)
    rel = np.abs(numpy_nm - np.array(DOCUMENT_NM)) / np.array(DOCUMENT_NM)
    return {
        "source": "seed 003 section 4 (two-link planar arm example)",
        "parameters": {"m1Kg": M1_KG, "m2Kg": M2_KG, "l1M": L1_M, "l2M": L2_M,
                       "comAt": "mid-link", "qDeg": list(Q_DEG), "gMS2": G_M_S2,
                       "angleConvention": "from the horizontal, q2 relative to link 1"},
        "numpyNm": numpy_nm, "mujocoNm": mujoco_nm,
        "numpyVsMujocoMaxAbsNm": float(np.max(np.abs(numpy_nm - mujoco_nm))),
        "documentNm": list(DOCUMENT_NM), "relDifferenceToDocument": rel,
        "agreesWithDocument": bool(np.all(rel <= AGREE_REL_TOL)),
        "note": "The document's values are not reproduced by G(q) with these parameters: "
                "tau1 = (m1 l1/2 + m2 l1) g cos q1 + m2 (l2/2) g cos(q1+q2), tau2 = m2 (l2/2) "
                "g cos(q1+q2). Its 4.4 N m equals m2 g l2 (full link length, cos term 1).",
    }
