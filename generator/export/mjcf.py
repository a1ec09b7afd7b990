"""MJCF export: ``scene.xml`` with ``tool.stl`` beside it, reloading to the same model.

``MjSpec.to_xml()`` writes numbers with about six significant digits (pi -> 3.14159, see
../shared/STACK.md), which moves bodies by micrometres and changes masses in the sixth
digit. The exporter therefore takes the XML structure from ``to_xml()`` and rewrites every
numeric attribute that defines the model (poses, inertials, sizes, joint and actuator
parameters, keyframes) from the compiled model with Python's shortest round-trip float
form (``repr``), which MuJoCo's parser reads back to the identical IEEE-754 double.

Explicit inertials are saved (``compiler.saveinertial``) so that loaders that ignore
mesh-derived mass (Pinocchio's MJCF parser) see the same masses as MuJoCo. The mesh is
referenced by its bare file name and no ``meshdir`` is written: the folder can be copied
anywhere.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

SCENE_FILE = "scene.xml"
MESH_EXTENSIONS = (".stl", ".obj", ".msh")

# Compiled-model arrays behind each (element tag, attribute). Values are written with repr.
_Getter = Callable[[mujoco.MjModel, int], np.ndarray]
_BODY: dict[str, _Getter] = {"pos": lambda m, i: m.body_pos[i], "quat": lambda m, i: m.body_quat[i]}
_INERTIAL: dict[str, _Getter] = {
    "pos": lambda m, i: m.body_ipos[i], "quat": lambda m, i: m.body_iquat[i],
    "mass": lambda m, i: m.body_mass[i : i + 1], "diaginertia": lambda m, i: m.body_inertia[i],
}
_GEOM: dict[str, _Getter] = {
    "pos": lambda m, i: m.geom_pos[i], "quat": lambda m, i: m.geom_quat[i],
    "size": lambda m, i: m.geom_size[i],
}
_JOINT: dict[str, _Getter] = {
    "pos": lambda m, i: m.jnt_pos[i], "axis": lambda m, i: m.jnt_axis[i],
    "range": lambda m, i: m.jnt_range[i], "armature": lambda m, i: m.dof_armature[_dof(m, i)],
    "damping": lambda m, i: m.dof_damping[_dof(m, i)],
    "frictionloss": lambda m, i: m.dof_frictionloss[_dof(m, i)],
    "stiffness": lambda m, i: m.jnt_stiffness[i : i + 1],
    "actuatorfrcrange": lambda m, i: m.jnt_actfrcrange[i],
}
_SITE: dict[str, _Getter] = {
    "pos": lambda m, i: m.site_pos[i], "quat": lambda m, i: m.site_quat[i],
    "size": lambda m, i: m.site_size[i],
}
_ACTUATOR: dict[str, _Getter] = {
    "ctrlrange": lambda m, i: m.actuator_ctrlrange[i],
    "forcerange": lambda m, i: m.actuator_forcerange[i],
    "gainprm": lambda m, i: m.actuator_gainprm[i], "biasprm": lambda m, i: m.actuator_biasprm[i],
    "gear": lambda m, i: m.actuator_gear[i],
}
_KEY: dict[str, _Getter] = {
    "qpos": lambda m, i: m.key_qpos[i], "qvel": lambda m, i: m.key_qvel[i],
    "ctrl": lambda m, i: m.key_ctrl[i], "mpos": lambda m, i: m.key_mpos[i],
    "mquat": lambda m, i: m.key_mquat[i], "time": lambda m, i: m.key_time[i : i + 1],
}
_ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper")


def _dof(model: mujoco.MjModel, joint: int) -> slice:
    start = int(model.jnt_dofadr[joint])
    return slice(start, start + 1)


def write_mjcf(prepared: Any, out_dir: Path, stl_bytes: bytes | None = None) -> dict[str, Any]:
    """Write ``scene.xml`` (and every mesh file it references) into ``out_dir``.

    Args:
        prepared: a ``simulate.PreparedCell``; its ``cell.spec`` and ``cell.model`` are read,
            never modified (the spec is copied before ``saveinertial`` is set).
        out_dir: the cell folder (created if missing).
        stl_bytes: bytes of the mounted part's STL; when None they are taken from the spec's
            asset map (``mount_tool`` puts them there under ``tool.stl``).

    Returns:
        ``{"file": "scene.xml", "sha256": ..., "meshes": {name: sha256}}``, relative names only.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    text = scene_xml(prepared.cell.spec, prepared.cell.model)
    mesh_files = _mesh_files(prepared.cell.spec, stl_bytes)
    for name, data in mesh_files.items():
        (out_dir / name).write_bytes(data)
    (out_dir / SCENE_FILE).write_text(text, encoding="utf-8")
    return {
        "file": SCENE_FILE,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "meshes": {n: hashlib.sha256(d).hexdigest() for n, d in sorted(mesh_files.items())},
        "precision": "repr (shortest round-trip double) for every model number",
        "explicitInertials": True,
    }


def scene_xml(spec: mujoco.MjSpec, model: mujoco.MjModel) -> str:
    """The MJCF text of ``spec`` with every model-defining number at full double precision.

    Args:
        spec: the cell's spec (copied here; the caller's spec is not changed).
        model: the compiled model of ``spec``; its arrays supply the numbers.
    """
    spec_copy = spec.copy()
    spec_copy.compiler.saveinertial = True
    spec_copy.meshdir = ""
    spec_copy.compile()
    root = ET.fromstring(spec_copy.to_xml())
    _exact_numbers(root, model, spec)
    _check_relative_files(root)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode", xml_declaration=False) + "\n"


def _mesh_files(spec: mujoco.MjSpec, stl_bytes: bytes | None) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for mesh in spec.meshes:
        name = mesh.file
        if not name:
            continue
        if stl_bytes is not None and name.lower().endswith(".stl"):
            files[name] = stl_bytes
        elif name in spec.assets:
            files[name] = bytes(spec.assets[name])
        else:
            raise ValueError(f"mesh {mesh.name!r} references {name!r}, which is neither passed "
                             "as stl_bytes nor in the spec's assets; mount the tool with "
                             "generator.tool.mount_tool")
    return files


def _check_relative_files(root: ET.Element) -> None:
    for elem in root.iter():
        for attr in ("file", "meshdir", "texturedir", "assetdir"):
            value = elem.get(attr)
            if value and ("/" in value or "\\" in value or ":" in value):
                raise ValueError(f"<{elem.tag} {attr}={value!r}> is a path; exports reference "
                                 "files by bare name beside scene.xml")


def _exact_numbers(root: ET.Element, model: mujoco.MjModel, spec: mujoco.MjSpec) -> None:
    """Rewrite model-defining numbers in the XML tree from ``model`` (in place)."""
    parents = {child: parent for parent in root.iter() for child in parent}
    for elem in root.iter():
        name = elem.get("name")
        if elem.tag == "body":
            _set(elem, model, model.body(name).id, _BODY, always=("pos", "quat"))
        elif elem.tag == "inertial":
            owner = parents[elem]
            body = 0 if owner.tag == "worldbody" else model.body(owner.get("name")).id
            _set(elem, model, body, _INERTIAL, always=("pos", "quat", "mass", "diaginertia"))
        elif elem.tag == "geom":
            _set_geom(elem, model, spec, name)
        elif elem.tag == "joint":
            _set(elem, model, model.joint(name).id, _JOINT)
        elif elem.tag == "site":
            _set(elem, model, model.site(name).id, _SITE, always=("pos", "quat"))
        elif elem.tag in _ACTUATOR_TAGS and parents[elem].tag == "actuator":
            _set(elem, model, model.actuator(name).id, _ACTUATOR)
        elif elem.tag == "key":
            _set(elem, model, model.key(name).id, _KEY)
        elif elem.tag == "mesh" and elem.get("scale") is not None:
            elem.set("scale", _fmt(spec.mesh(name).scale))
        elif elem.tag == "option":
            elem.set("timestep", _fmt([model.opt.timestep]))
            elem.set("gravity", _fmt(model.opt.gravity))


def _set_geom(elem: ET.Element, model: mujoco.MjModel, spec: mujoco.MjSpec, name: str) -> None:
    gid = model.geom(name).id
    if model.geom_type[gid] == mujoco.mjtGeom.mjGEOM_MESH:
        # Compiled mesh geoms carry MuJoCo's recentring (mesh_pos/quat); write the authored
        # placement, which the compiler turns into the same compiled pose again.
        source = spec.geom(name)
        elem.set("pos", _fmt(source.pos))
        elem.set("quat", _fmt(source.quat))
        return
    _set(elem, model, gid, _GEOM, always=("pos", "quat"))
    if "fromto" in elem.attrib:  # the compiled pos/quat/size replace it
        del elem.attrib["fromto"]


def _set(elem: ET.Element, model: mujoco.MjModel, index: int, getters: dict[str, _Getter],
         always: Sequence[str] = ()) -> None:
    """Overwrite attributes present in ``elem`` (and those in ``always``) from ``model``."""
    for attr, get in getters.items():
        present = elem.get(attr)
        if present is None and attr not in always:
            continue
        values = np.asarray(get(model, index), dtype=float).ravel()
        count = len(present.split()) if present is not None else len(values)
        elem.set(attr, _fmt(values[:count]))


def _fmt(values: Sequence[float] | np.ndarray) -> str:
    """Shortest round-trip text of each double, space separated (``repr`` of a float)."""
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=float).ravel())
