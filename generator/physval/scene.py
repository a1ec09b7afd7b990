"""Build the MuJoCo scenes the checks run in, from a validated manifest.

Mesh assets become one body ``object``: a visual geom that carries the mass (mesh inertia
mode EXACT, stated explicitly: MuJoCo's default is the legacy mode, STACK.md) and collision
geoms with zero density: either the mesh itself (MuJoCo collides a mesh as its single convex
hull) or the convex parts of a CoACD decomposition. MJCF assets are loaded as written, with
every mesh switched to EXACT inertia.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import trimesh

from generator.physval.manifest import MESH_BODY, AssetManifest

MESH_INERTIA = mujoco.mjtMeshInertia.mjMESH_INERTIA_EXACT
MESH_INERTIA_NAME = "exact"
# CoACD call of the protocol (STACK.md: deterministic with a seed).
COACD_THRESHOLD = 0.05
COACD_SEED = 0
PROBE_DENSITY_KG_M3 = 1000.0  # project choice: the cavity probe ball is water-dense
GROUND_NAME = "ground"


@dataclass(frozen=True)
class Placement:
    """Where the asset goes: ``free`` adds a free joint; ``pos``/``quat`` place the body."""

    free: bool = True
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)


def load_trimesh(manifest: AssetManifest, rel: str | None = None) -> trimesh.Trimesh:
    """Load a manifest mesh with trimesh, scaled to metres (no processing/merging)."""
    mesh = trimesh.load(manifest.path(rel or manifest.file), force="mesh", process=False)
    mesh.apply_scale(manifest.scale)
    return mesh


def coacd_parts(mesh: trimesh.Trimesh) -> list[tuple[np.ndarray, np.ndarray]]:
    """Convex decomposition: ``coacd.run_coacd(Mesh(v, f), threshold=0.05, seed=0)``."""
    import coacd

    coacd.set_log_level("error")
    parts = coacd.run_coacd(coacd.Mesh(np.asarray(mesh.vertices), np.asarray(mesh.faces)),
                            threshold=COACD_THRESHOLD, seed=COACD_SEED)
    return [(np.asarray(v, dtype=float), np.asarray(f, dtype=np.int32)) for v, f in parts]


def mesh_spec(manifest: AssetManifest, placement: Placement, collision: str | None = None,
              ground: bool = False) -> mujoco.MjSpec:
    """MjSpec for a mesh asset; ``collision`` overrides the manifest's collision model."""
    collision = collision or manifest.collision
    spec = mujoco.MjSpec()
    spec.modelname = manifest.name
    scale = [manifest.scale] * 3
    visual = spec.add_mesh()
    visual.name, visual.file, visual.scale, visual.inertia = (
        "visual", str(manifest.path(manifest.file)), scale, MESH_INERTIA)
    if ground:
        add_ground(spec, manifest)
    body = spec.worldbody.add_body()
    body.name, body.pos, body.quat = MESH_BODY, list(placement.pos), list(placement.quat)
    body.gravcomp = manifest.engine.gravcomp
    if placement.free:
        body.add_freejoint().name = "free"
    geom = body.add_geom()
    geom.name, geom.type, geom.meshname = "visual", mujoco.mjtGeom.mjGEOM_MESH, "visual"
    geom.density = manifest.inertials[0].density_kg_m3 or 1000.0
    geom.contype, geom.conaffinity, geom.group = 0, 0, 1
    if manifest.inertials[0].density_kg_m3 is None:
        geom.mass = manifest.inertials[0].mass_kg  # no density declared: the declared mass
    for i, part in enumerate(_collision_meshes(spec, manifest, collision)):
        g = body.add_geom()
        g.name, g.type, g.meshname, g.density, g.group = (
            f"collision_{i:03d}", mujoco.mjtGeom.mjGEOM_MESH, part, 0.0, 3)
        g.friction, g.solref = list(manifest.engine.friction), list(manifest.engine.solref)
    return spec


def _collision_meshes(spec: mujoco.MjSpec, manifest: AssetManifest, collision: str | None
                      ) -> list[str]:
    scale = [manifest.scale] * 3
    if collision == "convex_hull":
        hull = spec.add_mesh()
        hull.name, hull.file, hull.scale = "hull", str(manifest.path(manifest.file)), scale
        return ["hull"]
    names = []
    if manifest.collision_parts and collision == "coacd":
        for i, rel in enumerate(manifest.collision_parts):
            part = spec.add_mesh()
            part.name, part.file, part.scale = f"part_{i:03d}", str(manifest.path(rel)), scale
            names.append(part.name)
        return names
    for i, (v, f) in enumerate(coacd_parts(load_trimesh(manifest))):
        part = spec.add_mesh()
        part.name, part.uservert, part.userface = f"part_{i:03d}", v.ravel().tolist(), \
            f.ravel().tolist()
        names.append(part.name)
    return names


def add_ground(spec: mujoco.MjSpec, manifest: AssetManifest | None = None) -> None:
    """A ground plane at z = 0 with the asset's contact parameters."""
    g = spec.worldbody.add_geom()
    g.name, g.type, g.size = GROUND_NAME, mujoco.mjtGeom.mjGEOM_PLANE, [0.0, 0.0, 1.0]
    if manifest is not None:
        g.friction, g.solref = list(manifest.engine.friction), list(manifest.engine.solref)


def mjcf_spec(manifest: AssetManifest) -> mujoco.MjSpec:
    """MjSpec of an MJCF asset with every mesh set to EXACT inertia."""
    spec = mujoco.MjSpec.from_file(str(manifest.path(manifest.file)))
    for mesh in spec.meshes:
        mesh.inertia = MESH_INERTIA
    return spec


def compile_spec(spec: mujoco.MjSpec, timestep_s: float) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Compile with an explicit timestep; returns model and data after ``mj_forward``."""
    spec.option.timestep = timestep_s
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def body_id(model: mujoco.MjModel, name: str) -> int:
    """Body id by name; -1 when absent."""
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)


def com_velocity(model: mujoco.MjModel, data: mujoco.MjData, body: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(linear [m/s], angular [rad/s]) velocity of a body's COM, world frame.

    Runs ``mj_forward`` first: after ``mj_step`` the velocity-dependent quantities (cvel)
    still describe the state before the last integration.
    """
    mujoco.mj_forward(model, data)
    res = np.zeros(6)
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, res, 0)
    return res[3:].copy(), res[:3].copy()


def file_list(manifest: AssetManifest) -> list[Path]:
    """Every file the manifest names (for the resources check)."""
    return [manifest.path(manifest.file)] + [manifest.path(p) for p in manifest.collision_parts]
