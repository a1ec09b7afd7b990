"""The mounted CAD part in the cell: its convex hull is what collides (issue 3)."""

from __future__ import annotations

import manifold3d
import mujoco
import numpy as np
import trimesh
from scipy.spatial import ConvexHull

from generator import cell, pipeline, tool
from generator.spec import CellParams, ToolSpec

PARAMS = CellParams(pickDistance=0.32, placeDistance=0.32, pickHeight=0.6, placeHeight=0.7,
                    pedestalHeight=1.0, guardClearance=0.30, speedFraction=0.75, jitter=0.02)


def hull_only_point(gated) -> np.ndarray:
    """A point [mm, tool frame] at least 3 mm inside the bracket's convex hull, with no
    material of the part within a 6 mm cube around it, and outside the payload box."""
    mesh = trimesh.load(trimesh.util.wrap_as_stream(gated.stl_bytes), file_type="stl")
    hull = ConvexHull(mesh.vertices)
    lo, hi = mesh.bounds
    grid = np.stack(np.meshgrid(*[np.linspace(lo[i], hi[i], 25) for i in range(3)]),
                    -1).reshape(-1, 3)
    half = np.asarray(tool.PAYLOAD_HALF_EXTENTS_M) * 1000
    centre = np.array([0, 0, gated.motor_axis_mm])
    grid = grid[np.any(np.abs(grid - centre) > half + 3, axis=1)]
    depth = -(grid @ hull.equations[:, :3].T + hull.equations[:, 3]).max(axis=1)
    grid, depth = grid[depth > 3], depth[depth > 3]
    part = manifold3d.Manifold(manifold3d.Mesh(
        vert_properties=np.asarray(mesh.vertices, dtype=np.float32),
        tri_verts=np.asarray(mesh.faces, dtype=np.uint32)))
    for i in np.argsort(-depth):
        cube = manifold3d.Manifold.cube([6.0, 6.0, 6.0], True).translate(grid[i].tolist())
        if (part ^ cube).volume() == 0.0:
            return grid[i]
    raise AssertionError("no point inside the hull but away from the part")


def test_convex_hull_reaching_into_a_static_part_is_a_collision():
    gated = tool.gate_tool(ToolSpec("cr-0142-nema17-bracket"), "workcell-demo")
    prepared = pipeline.prepare_side(PARAMS, gated)
    model = prepared.cell.model
    data = mujoco.MjData(model)
    data.qpos[:] = prepared.start_q
    mujoco.mj_kinematics(model, data)
    body = model.body(tool.TOOL_BODY).id
    local = hull_only_point(gated) * tool.STL_TO_M
    inside = data.xpos[body] + data.xmat[body].reshape(3, 3) @ local
    outside = data.xpos[body] + data.xmat[body].reshape(3, 3) @ (local + [0, 0, 0.2])

    def contacts_with_probe(where):
        mount = pipeline.make_mounter(gated)

        def mount_and_probe(spec, gripper):
            mount(spec, gripper)
            probe = spec.worldbody.add_geom(name="probe", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                                            size=(0.001, 0, 0), pos=where)
            probe.contype, probe.conaffinity = cell.STATIC_CONTYPE, cell.STATIC_CONAFFINITY

        m = cell.build_spec(PARAMS, mount_and_probe).compile()
        d = mujoco.MjData(m)
        d.qpos[:] = prepared.start_q
        mujoco.mj_forward(m, d)
        arm_side, static, _ = cell.classify_geoms(m)
        probe_id = m.geom("probe").id
        assert probe_id in static
        return [(m.geom(c.geom1).name, m.geom(c.geom2).name) for c in d.contact[:d.ncon]
                if probe_id in (c.geom1, c.geom2)
                and (c.geom1 in arm_side or c.geom2 in arm_side)]

    hits = contacts_with_probe(inside)
    assert hits and all(tool.TOOL_MESH in pair for pair in hits), hits
    assert contacts_with_probe(outside) == []
