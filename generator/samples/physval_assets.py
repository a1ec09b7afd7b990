"""Generate the physical-validation sample assets under evidence/assets/.

Run ``python -m generator.samples.physval_assets`` (deterministic: fixed sections, seeded
CoACD). Every declared mass, COM and inertia is computed from the mesh *as written to disk*
(binary STL, float32 vertices), re-read, so manifest and engine see the same geometry.

Good assets: ``mug`` (ceramic mug with a cavity, CoACD collision), ``lid`` (a box with a
hinged lid, MJCF), ``workpiece`` (the 40 mm aluminium cube the cell handles, in mm).
Known-bad variants (negative controls): ``mug-single-hull`` (one convex hull fills the
cavity), ``mug-wrong-mass`` (mass/inertia declared from the convex hull volume), and
``lid-wrong-axis`` (hinge about the wrong axis).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
from trimesh.creation import annulus, box, cylinder

from generator.physval.manifest import SCHEMA
from generator.physval.manifest import declared_mesh_inertial as inertial_of
from generator.physval.scene import coacd_parts

ASSETS = Path(__file__).resolve().parents[2] / "evidence" / "assets"
CERAMIC_KG_M3 = 2400.0  # stoneware, typical handbook value (estimate, not measured)
ALUMINIUM_KG_M3 = 2700.0  # 6061 aluminium, handbook value
PLASTIC_KG_M3 = 1200.0  # generic ABS/PC-class plastic (estimate)
SECTIONS = 32  # facets around the mug: few enough to keep the tests fast

# Mug geometry [m]: outer radius, height, wall, bottom thickness; handle ring.
MUG_R, MUG_H, MUG_WALL, MUG_BOTTOM = 0.040, 0.090, 0.006, 0.006
HANDLE_R_IN, HANDLE_R_OUT, HANDLE_T = 0.018, 0.026, 0.012
PROBE_RADIUS_M = 0.009  # protocol 004: the repaired mug was verified with a 9 mm ball
WORKPIECE_MM = 40.0  # the cell's workpiece: a 40 mm aluminium cube


def mug_mesh() -> trimesh.Trimesh:
    """Mug = (outer cylinder - inner cylinder) + handle ring, manifold3d booleans [m]."""
    outer = cylinder(radius=MUG_R, height=MUG_H, sections=SECTIONS)
    outer.apply_translation([0, 0, MUG_H / 2])
    inner = cylinder(radius=MUG_R - MUG_WALL, height=MUG_H, sections=SECTIONS)
    inner.apply_translation([0, 0, MUG_H / 2 + MUG_BOTTOM])
    cup = trimesh.boolean.difference([outer, inner], engine="manifold")
    handle = annulus(r_min=HANDLE_R_IN, r_max=HANDLE_R_OUT, height=HANDLE_T, sections=24)
    handle.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    handle.apply_translation([MUG_R, 0, MUG_H * 0.55])
    return trimesh.boolean.union([cup, handle], engine="manifold")


def write_stl(mesh: trimesh.Trimesh, path: Path) -> trimesh.Trimesh:
    """Write a binary STL and return it as re-read (float32 vertices, merged)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(trimesh.exchange.stl.export_stl(mesh))
    return trimesh.load(path, force="mesh")


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a manifest as sorted, indented JSON."""
    path.write_text(json.dumps({"schema": SCHEMA, **manifest}, indent=2, sort_keys=True) + "\n")


def build_mug(out: Path) -> None:
    """mug (CoACD), mug-single-hull and mug-wrong-mass."""
    mug = write_stl(mug_mesh(), out / "mug" / "mug.stl")
    parts = []
    for i, (v, f) in enumerate(coacd_parts(mug)):
        rel = f"mug/coacd/part_{i:03d}.stl"
        write_stl(trimesh.Trimesh(v, f, process=False), out / rel)
        parts.append(rel)
    source = (f"trimesh {trimesh.__version__} volume integrals of mug.stl x stoneware density "
              "2400 kg/m^3 (handbook estimate)")
    cavity = {"probe_radius_m": PROBE_RADIUS_M, "entry_point_m": [0.0, 0.0, MUG_H],
              "entry_direction": [0.0, 0.0, -1.0], "min_depth_m": 0.05}
    base = {"geometry": {"kind": "mesh", "file": "mug/mug.stl", "length_unit": "m"},
            "inertials": [inertial_of(mug, CERAMIC_KG_M3, 1.0, source)], "cavity": cavity}
    write_manifest(out / "mug.json", {
        **base, "name": "mug", "description": "Stoneware mug; collision = CoACD parts "
        "(coacd.run_coacd(threshold=0.05, seed=0)).",
        "geometry": {**base["geometry"], "collision": "coacd", "collision_parts": parts}})
    write_manifest(out / "mug-single-hull.json", {
        **base, "name": "mug-single-hull", "description": "NEGATIVE CONTROL: the same mug "
        "collided as one convex hull, which fills the cavity.",
        "geometry": {**base["geometry"], "collision": "convex_hull"}})
    hull = mug.convex_hull
    write_manifest(out / "mug-wrong-mass.json", {
        **base, "name": "mug-wrong-mass", "description": "NEGATIVE CONTROL: mass, COM and "
        "inertia declared from the convex hull (the legacy/convex inertia mistake).",
        "geometry": {**base["geometry"], "collision": "coacd", "collision_parts": parts},
        "inertials": [inertial_of(hull, CERAMIC_KG_M3, 1.0, "convex hull volume x density "
                                  "(wrong on purpose)")]})


def workpiece(out: Path) -> None:
    """The 40 mm aluminium cube, written in millimetres (as CAD exports usually are)."""
    cube = box(extents=[WORKPIECE_MM] * 3)
    cube.apply_translation([0, 0, WORKPIECE_MM / 2])
    cube = write_stl(cube, out / "workpiece" / "cube40.stl")
    write_manifest(out / "workpiece.json", {
        "name": "workpiece", "description": "The cell's workpiece: 40 mm 6061 aluminium cube.",
        "geometry": {"kind": "mesh", "file": "workpiece/cube40.stl", "length_unit": "mm",
                     "collision": "convex_hull"},
        "inertials": [inertial_of(cube, ALUMINIUM_KG_M3, 1e-3, "analytic cube = trimesh "
                                  "volume integrals x 2700 kg/m^3 (6061 handbook)")]})


# Lid box [m]: outer size, wall thickness, lid thickness, gap above the walls.
BOX = (0.100, 0.080, 0.050)
WALL, LID_T, LID_GAP = 0.004, 0.005, 0.0005
LID_TARGET_RAD, LID_TOL_RAD = 1.0, 0.08  # protocol 004 example: target 57.3 deg, tol 4.6 deg
LID_TORQUE_NM = 0.05


def lid_xml(axis: tuple[float, float, float]) -> str:
    """MJCF of a fixed open box and a lid hinged on its back top edge about ``axis``."""
    x, y, z = (v / 2 for v in BOX)
    walls = [  # name, half sizes, centre
        ("bottom", (x, y, WALL / 2), (0, 0, WALL / 2)),
        ("front", (x, WALL / 2, z), (0, -y + WALL / 2, z)),
        ("back", (x, WALL / 2, z), (0, y - WALL / 2, z)),
        ("left", (WALL / 2, y, z), (-x + WALL / 2, 0, z)),
        ("right", (WALL / 2, y, z), (x - WALL / 2, 0, z)),
    ]
    geoms = "\n".join(
        f'      <geom name="{n}" type="box" size="{s[0]:g} {s[1]:g} {s[2]:g}" '
        f'pos="{p[0]:g} {p[1]:g} {p[2]:g}"/>' for n, s, p in walls)
    a = " ".join(f"{v:g}" for v in axis)
    return f"""<mujoco model="hinged-lid">
  <compiler angle="radian"/>
  <option timestep="0.002"/>
  <default><geom density="{PLASTIC_KG_M3:g}" friction="0.6 0.005 0.0001"/></default>
  <worldbody>
    <body name="base">
{geoms}
      <body name="lid" pos="0 {y:g} {BOX[2] + LID_GAP:g}">
        <joint name="lid_hinge" type="hinge" axis="{a}" range="0 1.9" limited="true"/>
        <geom name="lid" type="box" size="{x:g} {y:g} {LID_T / 2:g}" pos="0 {-y:g} {LID_T / 2:g}"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def lid_inertial() -> dict[str, Any]:
    """Analytic inertial of the lid plate (uniform box) in the lid body frame."""
    a, b, c = BOX[0], BOX[1], LID_T
    mass = PLASTIC_KG_M3 * a * b * c
    inertia = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * mass / 12.0
    return {"body": "lid", "mass_kg": mass, "com_m": [0.0, -BOX[1] / 2, LID_T / 2],
            "inertia_kg_m2": inertia.tolist(), "density_kg_m3": PLASTIC_KG_M3,
            "source": "analytic uniform box, 1200 kg/m^3 (generic plastic estimate)"}


def build_lid(out: Path) -> None:
    """lid (hinge about -x: opens upward) and lid-wrong-axis (hinge about y)."""
    (out / "lid").mkdir(parents=True, exist_ok=True)
    hinge = {"joint": "lid_hinge", "axis": [-1.0, 0.0, 0.0], "range_rad": [0.0, 1.9],
             "target_rad": LID_TARGET_RAD, "torque_limit_nm": LID_TORQUE_NM,
             "tolerance_rad": LID_TOL_RAD}
    for name, axis, note in (
        ("lid", (-1.0, 0.0, 0.0), "Open box with a lid hinged on its back top edge."),
        ("lid-wrong-axis", (0.0, 1.0, 0.0),
         "NEGATIVE CONTROL: the same lid with its hinge axis along y (wrong axis)."),
    ):
        (out / "lid" / f"{name}.xml").write_text(lid_xml(axis))
        write_manifest(out / f"{name}.json", {
            "name": name, "description": note,
            "geometry": {"kind": "mjcf", "file": f"lid/{name}.xml"},
            "inertials": [lid_inertial()], "hinge": hinge})


REVIEWS = ASSETS.parent / "reviews"
CAD_PART = "nema17-bracket.stl"  # the mounted CAD part, written by generator.samples.cad_parts


def build_cad_part(out: Path) -> None:
    """Manifest for the reviewed NEMA 17 bracket STL (mm, 6061 aluminium), when present."""
    stl = REVIEWS / CAD_PART
    if not stl.is_file():
        print(f"skipped the CAD part: {stl.name} not found in evidence/reviews")
        return
    mesh = trimesh.load(stl, force="mesh")
    rel = Path("..") / "reviews" / CAD_PART
    write_manifest(out / "nema17-bracket.json", {
        "name": "nema17-bracket", "description": "The mounted CAD part: NEMA 17 bracket from "
        "the review store (B-Rep mass in its review record).",
        "geometry": {"kind": "mesh", "file": rel.as_posix(), "length_unit": "mm",
                     "collision": "convex_hull"},
        "inertials": [inertial_of(mesh, ALUMINIUM_KG_M3, 1e-3, f"trimesh {trimesh.__version__}"
                                  " volume integrals of the reviewed STL x 2700 kg/m^3")]})


def main(argv: list[str] | None = None) -> None:
    """Regenerate every sample asset under ``--out`` (default evidence/assets)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ASSETS)
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    build_mug(out)
    workpiece(out)
    build_lid(out)
    build_cad_part(out)
    print(f"wrote sample assets to {out}")


if __name__ == "__main__":
    main()
