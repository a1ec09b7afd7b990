"""glTF export: ``robot.glb``, the whole cell at the pick pose, for 3D viewing.

One node per MuJoCo geom, named after the geom, placed at its world pose with the arm at
the pick configuration; every geom is coloured by its role (``arm``, ``equipment``,
``guard``) with one PBR material per role. Written by trimesh's glTF exporter (binary
glTF), which is deterministic for the same input.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import trimesh

from generator import cell

GLB_FILE = "robot.glb"
ROLE_COLOURS = {  # RGBA, linear 0..1
    "arm": (0.35, 0.55, 0.85, 1.0),
    "equipment": (0.55, 0.58, 0.62, 1.0),
    "guard": (0.95, 0.78, 0.10, 1.0),
}
GUARD_BODY = "guards"
PLANE_THICKNESS_M = 0.002  # an infinite MuJoCo plane is drawn as a thin slab of its size
ROUND_SECTIONS = 32  # facets around cylinders and capsules


def write_glb(prepared: Any, q_pick: np.ndarray, out_dir: Path) -> dict[str, Any]:
    """Write ``robot.glb`` with the arm at ``q_pick``.

    Args:
        prepared: a ``simulate.PreparedCell``.
        q_pick: the six arm joint angles at the pick [rad] (``waypoints[2]``).
        out_dir: the cell folder (created if missing).

    Returns:
        ``{"file", "sha256", "nodes", "roles": {role: count}, "pose": "pick"}``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = prepared.cell.model
    scene, roles = build_scene(model, np.asarray(q_pick, dtype=float))
    data = scene.export(file_type="glb")
    (out_dir / GLB_FILE).write_bytes(data)
    return {"file": GLB_FILE, "sha256": hashlib.sha256(data).hexdigest(),
            "nodes": len(scene.graph.nodes_geometry), "pose": "pick",
            "roles": {r: roles.count(r) for r in sorted(ROLE_COLOURS)}}


def build_scene(model: mujoco.MjModel, q: np.ndarray) -> tuple[trimesh.Scene, list[str]]:
    """A trimesh scene of every geom at configuration ``q`` and the role of each geom."""
    data = mujoco.MjData(model)
    data.qpos[: len(q)] = q
    mujoco.mj_forward(model, data)
    materials = {role: trimesh.visual.material.PBRMaterial(name=role, baseColorFactor=rgba,
                                                            metallicFactor=0.0,
                                                            roughnessFactor=0.8)
                 for role, rgba in ROLE_COLOURS.items()}
    scene, roles = trimesh.Scene(), []
    for g in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom_{g}"
        role = geom_role(model, g)
        mesh = _geom_mesh(model, g)
        mesh.visual = trimesh.visual.TextureVisuals(material=materials[role])
        transform = np.eye(4)
        transform[:3, :3] = data.geom_xmat[g].reshape(3, 3)
        transform[:3, 3] = data.geom_xpos[g]
        scene.add_geometry(mesh, node_name=name, geom_name=name, transform=transform)
        roles.append(role)
    return scene, roles


def geom_role(model: mujoco.MjModel, geom: int) -> str:
    """``guard`` for the guard panels, ``arm`` for the moving side, else ``equipment``."""
    body = int(model.geom_bodyid[geom])
    if model.body(body).name == GUARD_BODY:
        return "guard"
    arm_side = (model.geom_contype[geom] == cell.ARM_CONTYPE
                and model.geom_conaffinity[geom] == cell.ARM_CONAFFINITY)
    in_arm_tree = any(model.body_jntnum[b] > 0 for b in range(model.nbody)
                      if model.body_rootid[b] == model.body_rootid[body]) and body != 0
    return "arm" if arm_side or (in_arm_tree and model.body_mocapid[body] < 0) else "equipment"


def _geom_mesh(model: mujoco.MjModel, g: int) -> trimesh.Trimesh:
    """The geom's surface in its own frame [m]."""
    gtype, size = mujoco.mjtGeom(int(model.geom_type[g])), model.geom_size[g]
    if gtype == mujoco.mjtGeom.mjGEOM_BOX:
        return trimesh.creation.box(extents=2.0 * size[:3])
    if gtype == mujoco.mjtGeom.mjGEOM_PLANE:
        slab = trimesh.creation.box(extents=(2.0 * size[0], 2.0 * size[1], PLANE_THICKNESS_M))
        slab.apply_translation((0.0, 0.0, -PLANE_THICKNESS_M / 2))
        return slab
    if gtype == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return trimesh.creation.cylinder(radius=size[0], height=2.0 * size[1],
                                         sections=ROUND_SECTIONS)
    if gtype == mujoco.mjtGeom.mjGEOM_CAPSULE:  # trimesh height: centre-to-centre distance
        return trimesh.creation.capsule(height=2.0 * size[1], radius=size[0],
                                        count=[ROUND_SECTIONS, ROUND_SECTIONS])
    if gtype == mujoco.mjtGeom.mjGEOM_SPHERE:
        return trimesh.creation.icosphere(subdivisions=3, radius=size[0])
    if gtype == mujoco.mjtGeom.mjGEOM_MESH:
        mid = int(model.geom_dataid[g])
        v0, nv = int(model.mesh_vertadr[mid]), int(model.mesh_vertnum[mid])
        f0, nf = int(model.mesh_faceadr[mid]), int(model.mesh_facenum[mid])
        return trimesh.Trimesh(vertices=model.mesh_vert[v0 : v0 + nv].astype(float),
                               faces=model.mesh_face[f0 : f0 + nf].astype(int), process=False)
    raise ValueError(f"geom {g}: type {gtype.name} has no glTF shape")
