"""Dynamics cross-check: MuJoCo against Pinocchio on the exported ``scene.xml``.

Newton checks kinematics and mass only (DESIGN.md section 3). This goes one tier further:
at the same 33 configurations (:mod:`generator.crosscheck.configs`) it compares the
gravity torques and the joint-space mass matrix of MuJoCo with those Pinocchio computes
from the exported MJCF (explicit ``<inertial>`` elements, written by the MJCF exporter
because Pinocchio ignores mesh-derived mass).

Armature, explicitly: MuJoCo's ``mj_fullM`` includes joint armature (reflected rotor
inertia) on the diagonal; Pinocchio 4's MJCF parser reads the same attribute into
``model.armature`` and its CRBA adds it too. We compare the rigid-body parts: MuJoCo's
matrix minus ``diag(dof_armature)`` against Pinocchio's CRBA with ``model.armature`` set to
zero, and compare the armature vectors separately.

Pinocchio's MJCF parser reads one kinematic tree (the first body under ``<worldbody>``),
so it is given a view of ``scene.xml`` holding only the articulated tree (the ``base``
body and everything below it): the same numbers, with the fixed scene, keyframes and
actuators left out. Gravity torques are those at rest (qvel = 0): MuJoCo's ``qfrc_bias``,
Pinocchio's ``computeGeneralizedGravity``. MuJoCo's gravity compensation is a separate
force (``qfrc_gravcomp``) and is not part of either.
"""

from __future__ import annotations

import shutil
import tempfile
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pinocchio as pin

from generator.crosscheck import configs
from generator.rules import (
    TOLERANCES,
    dynamics_reasons,
)

MJCF_FILE = "scene.xml"


def dynamics_crosscheck(cell_dir: Path, reference: mujoco.MjModel | None = None,
                        seed: int = configs.CONFIG_SEED) -> dict[str, Any]:
    """Compare MuJoCo's and Pinocchio's gravity torques and mass matrix at 33 configurations.

    Args:
        cell_dir: cell folder with the exported ``scene.xml`` (and its mesh files).
        reference: the MuJoCo model to compare with (the run's simulated model); when None,
            ``scene.xml`` is loaded into MuJoCo.
        seed: seed of the 32 random configurations.

    Returns:
        JSON-ready record: tolerances, worst absolute and relative differences with their
        joint/configuration, armature comparison, ``passed`` and ``reasons``.
    """
    cell_dir = Path(cell_dir)
    model = reference if reference is not None else mujoco.MjModel.from_xml_path(
        str(cell_dir / MJCF_FILE))
    pmodel = load_pinocchio(cell_dir / MJCF_FILE)
    pmodel.gravity.linear = np.asarray(model.opt.gravity, dtype=float)
    order = _pin_order(model, pmodel)
    armature = _armature(model, pmodel, order)
    pmodel.armature[:] = 0.0  # rigid-body CRBA only; armature compared on its own (above)
    qs = configs.configurations(model, seed)
    gravity, inertia = _compare(model, pmodel, order, qs)
    record = {
        "library": "pinocchio", "configurations": len(qs), "configurationSeed": seed,
        "mujocoModel": "run model" if reference is not None else MJCF_FILE,
        "tolerances": dict(TOLERANCES),
        "gravityTorque": gravity, "massMatrix": inertia, "armature": armature,
        "armatureHandling": "MuJoCo M minus diag(dof_armature) vs Pinocchio CRBA with "
                            "model.armature = 0; armature vectors compared separately",
        "versions": {p: metadata.version(p) for p in ("pin", "mujoco-core")},
    }
    reasons = dynamics_reasons(record)
    return record | {"passed": not reasons, "reasons": reasons}


def load_pinocchio(xml_path: Path) -> pin.Model:
    """Pinocchio model of the articulated tree of ``xml_path`` (see module docstring)."""
    xml_path = Path(xml_path)
    root = ET.parse(xml_path).getroot()
    for tag in ("keyframe", "actuator", "sensor", "contact", "equality", "size"):
        for elem in root.findall(tag):
            root.remove(elem)
    world = root.find("worldbody")
    trees = [b for b in world.findall("body") if b.find(".//joint") is not None]
    if len(trees) != 1:
        raise ValueError(f"{xml_path.name}: expected one articulated tree under <worldbody>, "
                         f"found {len(trees)}")
    for child in list(world):
        if child is not trees[0]:
            world.remove(child)
    with tempfile.TemporaryDirectory(prefix="pin-view-") as tmp:
        for mesh in root.iter("mesh"):
            if mesh.get("file"):
                shutil.copy(xml_path.parent / mesh.get("file"), Path(tmp) / mesh.get("file"))
        view = Path(tmp) / xml_path.name
        view.write_text(ET.tostring(root, encoding="unicode"), encoding="utf-8")
        return pin.buildModelFromMJCF(str(view))


def _pin_order(model: mujoco.MjModel, pmodel: pin.Model) -> list[tuple[int, int, str]]:
    """(MuJoCo dof, Pinocchio v index, name) for each hinge, matched by joint name."""
    order = []
    for j in configs.hinge_joints(model):
        name = model.joint(j).name
        if not pmodel.existJointName(name):
            raise ValueError(f"joint {name!r} is missing from Pinocchio's model of scene.xml")
        pid = pmodel.getJointId(name)
        order.append((int(model.jnt_dofadr[j]), int(pmodel.idx_vs[pid]), name))
    if pmodel.nv != len(order):
        raise ValueError(f"Pinocchio has {pmodel.nv} dofs, MuJoCo {len(order)} hinges")
    return order


def _armature(model: mujoco.MjModel, pmodel: pin.Model,
              order: list[tuple[int, int, str]]) -> dict[str, Any]:
    mj = np.array([model.dof_armature[d] for d, _, _ in order])
    pn = np.array([pmodel.armature[v] for _, v, _ in order])
    return {"mujocoKgM2": mj.tolist(), "pinocchioParsedKgM2": pn.tolist(),
            "worstAbsDiff": float(np.abs(mj - pn).max())}


def _compare(model: mujoco.MjModel, pmodel: pin.Model, order: list[tuple[int, int, str]],
             qs: np.ndarray) -> tuple[dict[str, Any], dict[str, Any]]:
    data, pdata = mujoco.MjData(model), pmodel.createData()
    dofs = [d for d, _, _ in order]
    vidx = [v for _, v, _ in order]
    grav = _Worst()
    mass = _Worst()
    dense = np.zeros((model.nv, model.nv))
    for c, q in enumerate(qs):
        configs.set_hinges(model, data, q)
        data.qvel[:] = 0.0
        mujoco.mj_forward(model, data)
        mujoco.mj_fullM(model, data, dense)
        m_mj = dense[np.ix_(dofs, dofs)] - np.diag(model.dof_armature[dofs])
        tau_mj = data.qfrc_bias[dofs]
        qp = np.zeros(pmodel.nq)
        qp[vidx] = q  # revolute joints: one coordinate each, nq == nv
        tau_pin = pin.computeGeneralizedGravity(pmodel, pdata, qp)[vidx]
        m_pin = pin.crba(pmodel, pdata, qp)
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T  # CRBA fills the upper triangle
        grav.update(tau_mj, tau_pin, c, [n for _, _, n in order])
        mass.update(m_mj, m_pin[np.ix_(vidx, vidx)], c, [n for _, _, n in order])
    return grav.record(), mass.record()


class _Worst:
    """Worst absolute and relative (to the largest |value| at that configuration) difference."""

    def __init__(self) -> None:
        self.abs, self.rel, self.where = 0.0, 0.0, {"config": -1, "entry": ""}

    def update(self, ref: np.ndarray, other: np.ndarray, config: int, names: list[str]) -> None:
        diff = np.abs(ref - other)
        idx = np.unravel_index(int(np.argmax(diff)), diff.shape)
        scale = float(np.abs(ref).max())
        rel = float(diff[idx]) / scale if scale > 0 else float(diff[idx])
        self.rel = max(self.rel, rel)
        if diff[idx] >= self.abs:
            self.abs = float(diff[idx])
            self.where = {"config": config, "entry": "/".join(names[i] for i in idx)}

    def record(self) -> dict[str, Any]:
        return {"worstAbsDiff": self.abs, "worstRelDiff": self.rel,
                "worstConfig": self.where["config"], "worstEntry": self.where["entry"]}


