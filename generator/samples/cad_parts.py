"""Author the sample CAD parts with a real B-Rep kernel and write their review records.

Run with ``make cad-samples`` (or ``PYTHONPATH=. .venv-cad/bin/python -m
generator.samples.cad_parts --out evidence/reviews``). It needs the optional B-Rep
kernel build123d 0.13.0 (OpenCascade 8.0.1), hash-locked in ``requirements-cad.lock``
and installed into its own venv ``.venv-cad``; the runtime never imports this module.

Two parts, both aluminium 6061 (2700 kg/m3), coordinates in millimetres. The tool frame
(the STL's frame) has its origin at the centre of the mounting face, z pointing away from
the flange; the motor body of a mounted NEMA 17 is centred on the z axis at ``motorAxisMm``:

* ``nema17-bracket.stl``: an L bracket. Base plate 60 x 38 x 4 (the mounting face at
  z = 0, two M5 slots), upright 60 x 46 x 4 standing on the back edge of the base with a
  22.5 mm pilot bore and 4x M3 clearance holes on the 31 mm NEMA 17 square, two 4 mm
  triangular stiffening ribs. About 48 g.
* ``sensor-cover.stl``: a thin-walled open box (2 mm walls and floor, 50 x 36 x 25 outside),
  strongly non-convex: its convex hull holds about four times its material, so a hull or
  legacy-mode inertia would overstate its mass several times. About 30 g.

The B-Rep mass is the kernel's solid volume times the density. The STL is binary (MuJoCo
reads binary STL only) and is checked watertight before any record is written.
"""

from __future__ import annotations

import argparse
import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import build123d as bd
import numpy as np
from OCP.BRepTools import BRepTools

from generator.evidence.canonical import write_json

DENSITY_AL6061_KG_M3 = 2700.0  # aluminium 6061, design section 2 (2.70 g/cm3)
# export_stl's tolerance is a *relative* linear deflection (BRepMesh isRelative=True):
# 1e-3 of each edge's size keeps the mesh volume within ~0.1 % of the B-Rep volume
# for these parts (the gate's 0.5 % test budget), at a few thousand triangles.
STL_RELATIVE_DEFLECTION = 1e-3
STL_ANGULAR_DEFLECTION_RAD = 0.1  # build123d's default angular deflection
PROJECT = "workcell-demo"  # the bundled demo's project
OTHER_PROJECT = "packaging-line-b"  # a different project, for the gate's refusal tests
REVIEWER = "M. Alvarez (mechanical design review)"

# NEMA 17 mounting pattern (NEMA ICS 16): 31 mm bolt square, 22 mm pilot (22.5 clearance).
NEMA17_BOLT_SQUARE_MM = 31.0
NEMA17_PILOT_BORE_MM = 22.5
NEMA17_BODY_LENGTH_MM = 40.0  # a common 40 mm-long NEMA 17 body
M3_CLEARANCE_MM = 3.4  # ISO 273 medium fit
M5_CLEARANCE_MM = 5.5  # ISO 273 medium fit


@dataclass(frozen=True)
class Part:
    """One authored part: its file stem, B-Rep solid and motor axis height [mm]."""

    stem: str
    solid: bd.Part
    motor_axis_mm: float


def nema17_bracket() -> Part:
    """NEMA 17 L bracket in the tool frame (mm); the motor axis runs along y at z = 27."""
    width, depth, plate = 60.0, 38.0, 4.0
    upright_height = 46.0
    axis_z = 27.0
    # The motor's 40 mm body sits in front of the upright, centred on the tool z axis.
    upright_front_y = -NEMA17_BODY_LENGTH_MM / 2
    back_y = upright_front_y - plate
    base = bd.Pos(0, back_y + depth / 2, plate / 2) * bd.Box(width, depth, plate)
    upright = bd.Pos(0, back_y + plate / 2, upright_height / 2) * bd.Box(
        width, plate, upright_height
    )
    part = base + upright
    rib = _rib_profile(upright_front_y, plate, leg_mm=15.0)
    for x in (-width / 2, width / 2 - plate):
        part += bd.Pos(x, 0, 0) * bd.extrude(rib, amount=plate, dir=(1, 0, 0))
    part -= _through_y(0.0, axis_z, NEMA17_PILOT_BORE_MM, back_y)
    half = NEMA17_BOLT_SQUARE_MM / 2
    for dx in (-half, half):
        for dz in (-half, half):
            part -= _through_y(dx, axis_z + dz, M3_CLEARANCE_MM, back_y)
    for x in (-20.0, 20.0):
        slot = bd.SlotCenterToCenter(8.0, M5_CLEARANCE_MM, rotation=90)
        part -= bd.Pos(x, 6.0, 0) * bd.extrude(slot, amount=plate)
    return Part("nema17-bracket", part, axis_z)


def _rib_profile(front_y: float, plate: float, leg_mm: float) -> bd.Face:
    """Right-triangle gusset in the y-z plane between base top and upright front [mm]."""
    pts = [(0, front_y, plate), (0, front_y + leg_mm, plate), (0, front_y, plate + leg_mm)]
    return bd.make_face(bd.Polyline(*pts, close=True))


def _through_y(x: float, z: float, diameter: float, back_y: float) -> bd.Part:
    """A cylinder along y that cuts through the upright at (x, z) [mm]."""
    cyl = bd.Cylinder(diameter / 2, 20.0, rotation=(90, 0, 0))
    return bd.Pos(x, back_y + 2.0, z) * cyl


def sensor_cover() -> Part:
    """Open box, 50 x 36 x 25 mm outside, 2 mm walls and floor, open at the top."""
    length, width, height, wall = 50.0, 36.0, 25.0, 2.0
    outer = bd.Pos(0, 0, height / 2) * bd.Box(length, width, height)
    cavity_h = height - wall
    cavity = bd.Pos(0, 0, wall + cavity_h / 2 + 0.5) * bd.Box(
        length - 2 * wall, width - 2 * wall, cavity_h + 1.0
    )
    # A payload mounted with this cover sits centred on its rim (z = height).
    return Part("sensor-cover", outer - cavity, height)


def export_binary_stl(solid: bd.Part, path: Path) -> bytes:
    """Triangulate afresh and write a binary STL [mm]; return the file's bytes."""
    shape = solid.solids()[0] if len(solid.solids()) == 1 else solid
    BRepTools.Clean_s(shape.wrapped)  # triangulation is cached on the shape
    ok = bd.export_stl(shape, path, tolerance=STL_RELATIVE_DEFLECTION,
                       angular_tolerance=STL_ANGULAR_DEFLECTION_RAD, ascii_format=False)
    if not ok:
        raise RuntimeError(f"OpenCascade failed to write {path.name}")
    data = path.read_bytes()
    data = b"binary STL written by generator.samples.cad_parts".ljust(80, b" ") + data[80:]
    path.write_bytes(data)
    return data


def stl_volume_mm3(data: bytes) -> tuple[float, int, bool]:
    """Signed volume [mm3], triangle count and watertightness of a binary STL."""
    (count,) = struct.unpack_from("<I", data, 80)
    tri = np.frombuffer(data, dtype=_STL_DTYPE, count=count, offset=84)["v"].astype(np.float64)
    volume = float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6)
    keys = np.round(tri.reshape(-1, 3), 6)
    _, index = np.unique(keys, axis=0, return_inverse=True)
    faces = index.reshape(-1, 3)
    edges = np.sort(np.stack([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]).reshape(-1, 2),
                    axis=1)
    _, uses = np.unique(edges, axis=0, return_counts=True)
    return volume, count, bool(np.all(uses == 2))


_STL_DTYPE = np.dtype([("n", "<f4", (3,)), ("v", "<f4", (3, 3)), ("attr", "<u2")])


def review(rid: str, part_stem: str, sha: str, mass_g: float, axis_mm: float, *,
           project: str = PROJECT, status: str = "completed", verdict: str = "accepted",
           date: str = "2026-03-02") -> dict:
    """One review record (schema of generator.tool.ReviewRecord)."""
    return {"id": rid, "project": project, "status": status, "verdict": verdict,
            "stl": f"{part_stem}.stl", "stlSha256": sha, "brepMassG": mass_g,
            "densityKgM3": DENSITY_AL6061_KG_M3, "motorAxisMm": axis_mm,
            "reviewer": REVIEWER, "reviewedAt": date}


def write_samples(out: Path, log: Callable[[str], None] = print) -> None:
    """Author both parts, export their STLs and write every review record into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    facts = {}
    for part in (nema17_bracket(), sensor_cover()):
        if len(part.solid.solids()) != 1:
            raise RuntimeError(f"{part.stem}: expected one solid, got {len(part.solid.solids())}")
        volume_mm3 = float(part.solid.volume)
        mass_g = round(volume_mm3 * DENSITY_AL6061_KG_M3 * 1e-6, 4)  # mm3 * kg/m3 -> g
        data = export_binary_stl(part.solid, out / f"{part.stem}.stl")
        mesh_mm3, triangles, watertight = stl_volume_mm3(data)
        if not watertight:
            raise RuntimeError(f"{part.stem}.stl is not watertight")
        log(f"{part.stem}: B-Rep {volume_mm3:.3f} mm3 = {mass_g:.4f} g; STL {triangles} "
            f"triangles, {mesh_mm3:.3f} mm3 ({(mesh_mm3 / volume_mm3 - 1) * 100:+.3f} %)")
        facts[part.stem] = (hashlib.sha256(data).hexdigest(), mass_g, part.motor_axis_mm)
    bracket, cover = facts["nema17-bracket"], facts["sensor-cover"]
    records = [
        review("cr-0142-nema17-bracket", "nema17-bracket", *bracket),
        review("cr-0143-sensor-cover", "sensor-cover", *cover),
        review("cr-0139-nema17-bracket", "nema17-bracket", *bracket, verdict="rejected",
               date="2026-02-20"),
        review("cr-0150-sensor-cover", "sensor-cover", *cover, status="in-review",
               verdict="pending", date="2026-03-09"),
        review("pl-0007-nema17-bracket", "nema17-bracket", *bracket, project=OTHER_PROJECT,
               date="2026-01-28"),
    ]
    for record in records:
        write_json(out / f"{record['id']}.json", record)
        log(f"wrote {record['id']}.json ({record['project']}, {record['status']}, "
            f"{record['verdict']})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("evidence/reviews"),
                        help="review store folder (default: evidence/reviews)")
    write_samples(parser.parse_args(argv).out)


if __name__ == "__main__":
    main()
