"""Newton cross-check: ``scene.usda`` in Newton (CPU) against ``scene.xml`` in MuJoCo.

Validation is not sameness (DESIGN.md section 3): the USD validators say a file is well
formed, not that it is the robot that was simulated. This check imports both exports into
two engines and compares them in tiers:

1. structure: exactly one articulation, six revolute joints, no orphan joints (joints in no
   articulation), the same rigid bodies on both sides;
2. mass: every body's mass within 1 mg;
3. kinematics: every body's world pose at the export pose and 32 seeded in-limit
   configurations (:mod:`generator.crosscheck.configs`) within 0.1 mm and 0.01 deg.

Warp compiles kernels on first use; its kernel cache lives in a folder the project controls
(``<repo>/.cache/warp`` by default, gitignored), passed explicitly as ``cache_dir`` and set
before warp is imported. Newton is imported lazily for that reason.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import mujoco
import numpy as np

from generator.crosscheck import configs
from generator.evidence.canonical import write_json
from generator.rules import (
    ANGLE_TOL_DEG,
    FINALIZE_OK,
    MASS_TOL_MG,
    POSITION_TOL_MM,
    newton_reasons,
)

NEWTON_FILE = "newton.json"
SCHEMA = "workcell-evidence/newton/v1"
DEFAULT_WARP_CACHE = Path(__file__).resolve().parents[2] / ".cache" / "warp"
USD_FILE = "scene.usda"
MJCF_FILE = "scene.xml"


def newton_crosscheck(cell_dir: Path, *, cache_dir: Path = DEFAULT_WARP_CACHE,
                      seed: int = configs.CONFIG_SEED, write: bool = True) -> dict[str, Any]:
    """Compare the cell's USD export (Newton) with its MJCF export (MuJoCo).

    Args:
        cell_dir: cell folder holding ``scene.usda`` and ``scene.xml`` (+ ``tool.stl``).
        cache_dir: warp kernel cache folder (created if missing).
        seed: seed of the 32 random configurations.
        write: also write ``newton.json`` into ``cell_dir`` (canonical JSON).

    Returns:
        The newton.json record; ``passed`` is False with ``reasons`` naming each failure.
    """
    start = time.perf_counter()
    cell_dir = Path(cell_dir)
    usd_path, xml_path = cell_dir / USD_FILE, cell_dir / MJCF_FILE
    newton = _import_newton(Path(cache_dir))
    model = mujoco.MjModel.from_xml_path(str(xml_path))
    builder = newton.ModelBuilder()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        builder.add_usd(str(usd_path))
        structure = _structure(builder, newton)
        nmodel, finalize_note = _finalize(builder)
    newton_warnings = sorted({_scrub(str(w.message), cell_dir, Path(cache_dir))
                              for w in caught})
    bodies = _body_map(model, nmodel)
    masses = _mass_differences_mg(model, nmodel, bodies["pairs"])
    qs = configs.configurations(model, seed)
    fk = _compare_fk(model, nmodel, newton, bodies["pairs"], qs)
    record = {
        "schema": SCHEMA,
        "thresholds": {"positionMm": POSITION_TOL_MM, "angleDeg": ANGLE_TOL_DEG,
                       "massMg": MASS_TOL_MG},
        "exportPose": configs.EXPORT_POSE,
        "configurations": len(qs), "configurationSeed": seed,
        **structure,
        "bodies": {k: v for k, v in bodies.items() if k != "pairs"},
        "massDifferencesMg": masses,
        "worstMassDifferenceMg": max(masses.values(), default=0.0),
        **fk,
        "newtonFinalize": finalize_note or FINALIZE_OK,
        "newtonWarnings": newton_warnings,
        "versions": {p: metadata.version(p) for p in ("newton", "warp-lang", "usd-core",
                                                       "mujoco-core")},
        "inputs": {name: _sha256(cell_dir / name) for name in (USD_FILE, MJCF_FILE)},
    }
    reasons = newton_reasons(record)
    record |= {"passed": not reasons, "reasons": reasons}
    record["wallTimeS"] = round(time.perf_counter() - start, 3)
    if write:
        write_json(cell_dir / NEWTON_FILE, record)
    return record


def _import_newton(cache_dir: Path) -> ModuleType:
    """Point warp's kernel cache at ``cache_dir``, then import warp and newton (CPU).

    Warp reads the cache location once, at ``warp.init()``: the first import in a process
    fixes it (a different ``cache_dir`` applies in a new process, as the bench does).
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    first = "warp" not in sys.modules
    if first:
        os.environ["WARP_CACHE_PATH"] = str(cache_dir)  # read by warp at init
    import warp

    if first:
        warp.config.kernel_cache_dir = str(cache_dir)
    warp.config.quiet = True
    warp.config.log_level = warp.LOG_WARNING  # no per-module load lines on stdout
    warp.init()
    import newton

    return newton


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- structure


def _structure(builder: Any, newton: ModuleType) -> dict[str, Any]:
    """Articulation and joint counts from the builder (before Newton's own validation)."""
    labels = list(builder.joint_label)
    types = list(builder.joint_type)
    orphans = sorted(labels[j] for j, art in enumerate(builder.joint_articulation) if art < 0)
    revolute = sum(1 for t in types if int(t) == int(newton.JointType.REVOLUTE))
    fixed = sum(1 for t in types if int(t) == int(newton.JointType.FIXED))
    return {"articulations": int(builder.articulation_count), "revoluteJoints": revolute,
            "fixedJoints": fixed, "otherJoints": len(types) - revolute - fixed,
            "orphanJoints": len(orphans), "orphanJointNames": orphans}


def _finalize(builder: Any) -> tuple[Any, str | None]:
    """Finalize on the CPU; when Newton refuses the joints, say why and finalize anyway.

    The FK comparison still runs on a refused model so the record shows what the defect
    does to the kinematics, not only that Newton objected.
    """
    try:
        return builder.finalize(device="cpu"), None
    except ValueError as exc:
        note = f"Newton refused the joint topology: {exc}"
        return builder.finalize(device="cpu", skip_validation_joints=True), note


def _leaf(label: str) -> str:
    return label.rstrip("/").rsplit("/", 1)[-1]


def _body_map(model: mujoco.MjModel, nmodel: Any) -> dict[str, Any]:
    """Pair Newton bodies with MuJoCo bodies by name (the USD prim name is the body name)."""
    newton_ids = {_leaf(label): i for i, label in enumerate(nmodel.body_label)}
    expected, props = [], []
    for b in range(1, model.nbody):
        name = model.body(b).name
        if model.body_mocapid[b] >= 0:
            props.append(name)
        elif b in _moving_or_welded_to_arm(model):
            expected.append(name)
    pairs = [(name, model.body(name).id, newton_ids[name]) for name in expected
             if name in newton_ids]
    return {"compared": sorted(p[0] for p in pairs),
            "missingInNewton": sorted(n for n in expected if n not in newton_ids),
            "extraInNewton": sorted(n for n in newton_ids if n not in expected),
            "notRigidInUsd": sorted(f"{n} (mocap prop, visual only)" for n in props),
            "pairs": pairs}


def _moving_or_welded_to_arm(model: mujoco.MjModel) -> set[int]:
    """Bodies of the articulated tree: every body whose subtree root has a joint below it."""
    out = set()
    for b in range(1, model.nbody):
        root = int(model.body_rootid[b])
        tree = [c for c in range(1, model.nbody) if int(model.body_rootid[c]) == root]
        if any(model.body_jntnum[c] > 0 for c in tree) and model.body_mocapid[root] < 0:
            out.add(b)
    return out


def _mass_differences_mg(model: mujoco.MjModel, nmodel: Any,
                         pairs: list[tuple[str, int, int]]) -> dict[str, float]:
    nmass = nmodel.body_mass.numpy()
    return {name: abs(float(nmass[n]) - float(model.body_mass[m])) * 1e6
            for name, m, n in pairs}


# --------------------------------------------------------------------------- kinematics


def _newton_q_index(nmodel: Any, model: mujoco.MjModel) -> list[int]:
    """Newton ``joint_q`` index of each MuJoCo hinge (hinges in id order), matched by name."""
    starts = nmodel.joint_q_start.numpy()
    by_name = {_leaf(label): j for j, label in enumerate(nmodel.joint_label)}
    index = []
    for j in configs.hinge_joints(model):
        name = model.joint(j).name
        if name not in by_name:
            raise ValueError(f"joint {name!r} of scene.xml is missing from scene.usda")
        index.append(int(starts[by_name[name]]))
    return index


def _compare_fk(model: mujoco.MjModel, nmodel: Any, newton: ModuleType,
                pairs: list[tuple[str, int, int]], qs: np.ndarray) -> dict[str, Any]:
    """Worst body position [mm] and orientation [deg] difference over ``qs``."""
    import warp

    data = mujoco.MjData(model)
    state = nmodel.state()
    joint_q = nmodel.joint_q.numpy().copy()
    q_index = _newton_q_index(nmodel, model)
    worst = {"pos": (-1.0, "", -1), "ang": (-1.0, "", -1)}
    for c, q in enumerate(qs):
        configs.set_hinges(model, data, q)
        mujoco.mj_kinematics(model, data)
        joint_q[q_index] = q
        newton.eval_fk(nmodel, warp.array(joint_q, dtype=float, device="cpu"),
                       nmodel.joint_qd, state)
        body_q = state.body_q.numpy().astype(float)
        for name, m, n in pairs:
            pos_mm = float(np.linalg.norm(body_q[n, :3] - data.xpos[m])) * 1e3
            ang = _angle_deg(data.xquat[m], body_q[n, 3:7])
            if pos_mm > worst["pos"][0]:
                worst["pos"] = (pos_mm, name, c)
            if ang > worst["ang"][0]:
                worst["ang"] = (ang, name, c)
    return {"worstPositionErrorMm": worst["pos"][0], "worstPositionBody": worst["pos"][1],
            "worstPositionConfig": worst["pos"][2], "worstAngleErrorDeg": worst["ang"][0],
            "worstAngleBody": worst["ang"][1], "worstAngleConfig": worst["ang"][2]}


def _angle_deg(quat_wxyz: np.ndarray, quat_xyzw: np.ndarray) -> float:
    """Rotation angle [deg] between a MuJoCo (w,x,y,z) and a Newton (x,y,z,w) quaternion."""
    a = np.asarray(quat_wxyz, dtype=float)
    b = np.array([quat_xyzw[3], *quat_xyzw[:3]], dtype=float)
    b /= np.linalg.norm(b)
    diff = np.zeros(4)
    conj = np.zeros(4)
    mujoco.mju_negQuat(conj, a / np.linalg.norm(a))
    mujoco.mju_mulQuat(diff, conj, b)
    # atan2 form: accurate for tiny angles, where acos(w) loses half the digits
    return math.degrees(2.0 * math.atan2(float(np.linalg.norm(diff[1:])), abs(float(diff[0]))))


def _scrub(message: str, cell_dir: Path, cache_dir: Path) -> str:
    """A Newton/warp warning without machine paths: the cell folder (as given and resolved,
    i.e. the staging folder) becomes ``.``, the warp cache ``<warp-cache>``."""
    paths = {str(cell_dir): ".", str(cell_dir.resolve()): ".",
             str(cache_dir): "<warp-cache>", str(cache_dir.resolve()): "<warp-cache>"}
    for path in sorted(paths, key=len, reverse=True):
        if path not in (".", ""):
            message = message.replace(path, paths[path])
    return message
