"""Groups 2 and 8 (collision geometry, task probe): can a ball of the declared size enter?

Protocol 004 group 2: a collision approximation must keep the space the task needs; a
single convex hull that fills a cup passes loading, mass and drop checks yet blocks the
cavity. Fixture: the asset is welded to the world; a free ball of the declared radius starts
1.5 radii before the entry point and falls along the entry direction (gravity is turned to
point along it). PASS when the ball centre ends at least ``min_depth_m`` past the entry point.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged, not_applicable, not_run
from generator.physval.scene import PROBE_DENSITY_KG_M3, Placement, compile_spec, mesh_spec
from generator.physval.thresholds import (
    CAVITY_PROBE_TIME_S,
    CAVITY_START_CLEARANCE_RADII,
    GRAVITY_M_S2,
    SIM_TIMESTEP_S,
)

SRC = "protocol 004 groups 2 and 8"


def probe(manifest: AssetManifest, collision: str | None = None) -> dict[str, Any]:
    """Run the ball probe; ``collision`` overrides the manifest's collision model."""
    cav = manifest.cavity
    assert cav is not None
    spec = mesh_spec(manifest, Placement(free=False), collision=collision)
    entry, direction = np.array(cav.entry_point_m), np.array(cav.entry_direction)
    ball = spec.worldbody.add_body()
    ball.name = "probe"
    ball.pos = (entry - direction * CAVITY_START_CLEARANCE_RADII * cav.probe_radius_m).tolist()
    ball.add_freejoint()
    geom = ball.add_geom()
    geom.name, geom.type, geom.size, geom.density = (
        "probe", mujoco.mjtGeom.mjGEOM_SPHERE, [cav.probe_radius_m, 0, 0], PROBE_DENSITY_KG_M3)
    spec.option.gravity = (direction * GRAVITY_M_S2).tolist()
    model, data = compile_spec(spec, SIM_TIMESTEP_S)
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "probe")
    pg = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "probe")
    max_pen, touched = 0.0, set()
    for _ in range(round(CAVITY_PROBE_TIME_S / SIM_TIMESTEP_S)):
        mujoco.mj_step(model, data)
        for c in data.contact[: data.ncon]:
            if pg in (c.geom1, c.geom2):
                other = c.geom2 if c.geom1 == pg else c.geom1
                touched.add(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, other))
                max_pen = max(max_pen, -c.dist)
    centre = data.xpos[b].copy()
    depth = float((centre - entry) @ direction)
    return {"collision": collision or manifest.collision, "probeRadiusM": cav.probe_radius_m,
            "depthM": depth, "finalCentreM": centre, "contactGeoms": sorted(touched),
            "maxPenetrationM": max_pen,
            "collisionGeoms": int(np.sum(model.geom_contype[:-1] > 0))}


def check_cavity(manifest: AssetManifest, loaded_ok: bool) -> CheckResult:
    """geometry.cavity: the declared probe ball reaches ``min_depth_m`` into the cavity."""
    cid = "geometry.cavity"
    cav = manifest.cavity
    if cav is None:
        return not_applicable(cid, Group.GEOMETRY, "no cavity declared in the manifest")
    if manifest.kind != "mesh":
        return not_run(cid, Group.GEOMETRY, "cavity probe is implemented for mesh assets only")
    if not loaded_ok:
        return not_run(cid, Group.GEOMETRY, "the asset did not load")
    result = probe(manifest)
    ok = result["depthM"] >= cav.min_depth_m
    blocked = ", ".join(result["contactGeoms"]) or "nothing"
    return judged(
        cid, Group.GEOMETRY, ok, result,
        Threshold(cav.min_depth_m, "m (ball centre past the entry point)", ">=",
                  f"{SRC}; depth declared in the manifest"),
        f"asset welded to the world, {cav.probe_radius_m} m ball dropped along the entry "
        f"direction for {CAVITY_PROBE_TIME_S} s (MuJoCo, dt {SIM_TIMESTEP_S} s)",
        f"cavity blocked: the probe stopped {result['depthM'] * 1000:.1f} mm past the entry "
        f"point (needs {cav.min_depth_m * 1000:.1f} mm), resting on {blocked}; a single convex "
        "hull fills the cavity: use a convex decomposition (collision = 'coacd')",
    )
