"""Negative controls: each check run on a known-bad asset, where it must FAIL.

Protocol 004 group 9: "先确认测试本身能检出已知错误" -- a check is trusted only once it has been
shown to fail on a known-bad input. Three controls are committed sample assets
(``mug-single-hull``, ``lid-wrong-axis``, ``mug-wrong-mass``); the others are variants of
the committed good samples built here (files in a temporary folder where needed, e.g. the
lid MJCF with an over-stiff hinge spring), each named and described in the record.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import trimesh

from generator.physval import (
    cavity,
    hinge,
    inertia,
    material,
    numerics,
    passive,
    realfit,
    response,
    structure,
)
from generator.physval.manifest import (
    AssetManifest,
    Bounce,
    Engine,
    Measured,
    Measurements,
    load_manifest,
)
from generator.physval.results import CheckResult, Status
from generator.physval.thresholds import TIMESTEP_COARSE_S, TIMESTEP_FINE_S

ASSETS = Path(__file__).resolve().parents[2] / "evidence" / "assets"


@dataclass(frozen=True)
class Control:
    """A known-bad input for one check: ``make`` builds it (in ``tmp`` if it needs files)."""

    asset: str
    description: str
    make: Callable[[Path], AssetManifest]


def _sample(name: str) -> AssetManifest:
    return load_manifest(ASSETS / f"{name}.json")


def _variant(base: str, **changes: Any) -> Callable[[Path], AssetManifest]:
    return lambda _tmp: dataclasses.replace(_sample(base), **changes)


def _open_mesh(tmp: Path) -> AssetManifest:
    """The workpiece with one triangle deleted (an open mesh)."""
    good = _sample("workpiece")
    mesh = trimesh.load(good.path(good.file), force="mesh")
    holed = trimesh.Trimesh(mesh.vertices, mesh.faces[1:], process=False)
    (tmp / "open.stl").write_bytes(trimesh.exchange.stl.export_stl(holed))
    return dataclasses.replace(good, file="open.stl", root=tmp)


def _bad_triangle(_tmp: Path) -> AssetManifest:
    good = _sample("workpiece")
    i0 = good.inertials[0]
    scale = np.trace(np.array(i0.inertia_kg_m2)) / 3.0
    bad = dataclasses.replace(i0, inertia_kg_m2=tuple(map(tuple, np.diag([1.0, 1.0, 3.0])
                                                                * scale)))
    return dataclasses.replace(good, inertials=(bad,))


# The stiff-spring lid (numerics.timestep). Semi-implicit Euler on an undamped spring-inertia
# pair is stable only while w * dt <= 2 (w = sqrt(k / I), I the inertia about the hinge).
LID_HINGE_INERTIA_KG_M2 = 1.028e-4  # lid plate: Ixx 2.57e-5 + 0.048 kg x (0.04^2 + 0.0025^2)
STIFF_SPRING_NM_PER_RAD = 150.0
STIFF_SPRING_OMEGA_RAD_S = math.sqrt(STIFF_SPRING_NM_PER_RAD / LID_HINGE_INERTIA_KG_M2)


def _stiff_spring(tmp: Path, stiffness_nm_per_rad: float = STIFF_SPRING_NM_PER_RAD
                  ) -> AssetManifest:
    """The committed lid with a hinge spring [N m/rad] added (same geometry otherwise)."""
    good = _sample("lid")
    assert good.hinge is not None
    tree = ElementTree.parse(good.path(good.file))
    joint = tree.find(f".//joint[@name='{good.hinge.joint}']")
    assert joint is not None
    joint.set("stiffness", repr(float(stiffness_nm_per_rad)))
    tree.write(tmp / "lid-stiff-spring.xml", encoding="unicode")
    return dataclasses.replace(good, name="lid-stiff-spring", file="lid-stiff-spring.xml",
                               root=tmp)


def _missing_body(_tmp: Path) -> AssetManifest:
    good = _sample("lid")
    extra = dataclasses.replace(good.inertials[0], body="handle")
    return dataclasses.replace(good, inertials=(*good.inertials, extra))


WRONG_MASS = Control("mug-wrong-mass", "committed: mass/COM/inertia declared from the convex "
                     "hull volume (the legacy/convex inertia mistake)",
                     lambda _t: _sample("mug-wrong-mass"))
MISSING_FILE = Control("workpiece-missing-mesh", "workpiece manifest naming a mesh file that "
                       "does not exist", _variant("workpiece", file="workpiece/missing.stl"))

CONTROLS: dict[str, Control] = {
    "structure.load": MISSING_FILE,
    "structure.resources": MISSING_FILE,
    "structure.units": Control("workpiece-mm-as-m", "the millimetre workpiece STL declared "
                               "in metres", _variant("workpiece", length_unit="m")),
    "structure.watertight": Control("workpiece-open", "the workpiece with one triangle "
                                    "deleted", _open_mesh),
    "structure.parts": Control("lid-missing-body", "lid manifest declaring a body 'handle' "
                               "the MJCF does not have", _missing_body),
    "inertia.mass": WRONG_MASS,
    "inertia.com": WRONG_MASS,
    "inertia.tensor": WRONG_MASS,
    "inertia.principal": Control("workpiece-non-physical-inertia", "workpiece declaring "
                                 "principal inertias 1:1:3 (triangle inequality violated)",
                                 _bad_triangle),
    "passive.fall": Control("workpiece-gravcomp", "workpiece exported with gravcomp = 1 "
                            "(gravity compensation copied from a robot link)",
                            _variant("workpiece", engine=Engine(gravcomp=1.0))),
    "passive.drops": Control("workpiece-soft-contact", "workpiece with contact solref "
                             "[0.2 s, 1.0] (far too soft)",
                             _variant("workpiece", engine=Engine(solref=(0.2, 1.0)))),
    "response.linear": WRONG_MASS,
    "response.angular": WRONG_MASS,
    "geometry.cavity": Control("mug-single-hull", "committed: the mug collided as one convex "
                               "hull that fills its cavity", lambda _t: _sample(
                                   "mug-single-hull")),
    "mechanism.hinge_axis": Control("lid-wrong-axis", "committed: lid hinged about y instead "
                                    "of -x", lambda _t: _sample("lid-wrong-axis")),
    "mechanism.hinge_sweep": Control("lid-wrong-axis", "committed: lid hinged about y "
                                     "instead of -x", lambda _t: _sample("lid-wrong-axis")),
    "material.friction": Control("workpiece-friction-mismatch", "workpiece with a measured "
                                 "sliding friction of 0.30 +- 0.05 against engine friction 1.0",
                                 _variant("workpiece", measurements=Measurements(
                                     friction_sliding=Measured(0.30, 0.05)))),
    "material.restitution": Control(
        "workpiece-bounce-mismatch", "workpiece with a measured bounce of 60 mm from a 100 mm "
        "drop (e = sqrt(0.6) = 0.77 +- 0.05) against the default contact solref [0.02 s, 1.0] "
        "(critically damped: the cube does not leave the ground, e = 0)",
        _variant("workpiece", measurements=Measurements(restitution=Bounce(0.100, 0.060, 0.05)))),
    "numerics.timestep": Control(
        "lid-stiff-spring", f"the lid with a hinge spring of {STIFF_SPRING_NM_PER_RAD:g} N m/rad: "
        f"with the lid's hinge-axis inertia {LID_HINGE_INERTIA_KG_M2:g} kg m^2 its natural "
        f"frequency is w = {STIFF_SPRING_OMEGA_RAD_S:.0f} rad/s, so w dt = "
        f"{STIFF_SPRING_OMEGA_RAD_S * TIMESTEP_COARSE_S:.2f} at 2 ms (above 2, the stability "
        "limit of the explicitly integrated spring under Euler: diverges) and "
        f"{STIFF_SPRING_OMEGA_RAD_S * TIMESTEP_FINE_S:.2f} at 1 ms (stable)", _stiff_spring),
    "real.mass": Control("workpiece-mass-mismatch", "workpiece with a measured mass of "
                         "0.160 +- 0.001 kg (engine 0.1728 kg)",
                         _variant("workpiece", measurements=Measurements(
                             mass_kg=Measured(0.160, 0.001)))),
    "real.com": Control("workpiece-com-mismatch", "workpiece with a measured COM 5 mm off "
                        "(+- 0.5 mm)", _variant("workpiece", measurements=Measurements(
                            com_m=Measured((0.005, 0.0, 0.020), 0.0005)))),
}

# Checks without a negative control, and why.
NO_CONTROL: dict[str, str] = {}


def _run_check(check_id: str, manifest: AssetManifest) -> CheckResult:
    """Run a single check on a manifest (the same functions the suite runs)."""
    group, _ = check_id.split(".", 1)
    if group == "structure":
        checks, _loaded = structure.run_structure(manifest)
        return next(c for c in checks if c.id == check_id)
    loaded = structure.load_asset(manifest)
    ok = loaded.model is not None
    table: dict[str, Callable[[], CheckResult]] = {
        "inertia.mass": lambda: inertia.check_mass(manifest, loaded.model),
        "inertia.com": lambda: inertia.check_com(manifest, loaded.model),
        "inertia.tensor": lambda: inertia.check_tensor(manifest, loaded.model),
        "inertia.principal": lambda: inertia.check_principal(manifest, loaded.model),
        "passive.fall": lambda: passive.check_fall(manifest, ok),
        "passive.drops": lambda: passive.check_drops(manifest, ok),
        "response.linear": lambda: response.check_linear(manifest, ok),
        "response.angular": lambda: response.check_angular(manifest, ok),
        "numerics.timestep": lambda: numerics.check_timestep(manifest, ok),
        "geometry.cavity": lambda: cavity.check_cavity(manifest, ok),
        "mechanism.hinge_axis": lambda: hinge.check_axis(manifest, ok),
        "mechanism.hinge_sweep": lambda: hinge.check_sweep(manifest, ok),
        "material.friction": lambda: material.check_friction(manifest, ok),
        "material.restitution": lambda: material.check_restitution(manifest, ok),
        "real.mass": lambda: realfit.check_real(manifest, ok)[0],
        "real.com": lambda: realfit.check_real(manifest, ok)[1],
    }
    return table[check_id]()


def run_control(check_id: str) -> dict[str, Any]:
    """Run one check's negative control; the record says whether it failed as expected."""
    control = CONTROLS.get(check_id)
    if control is None:
        return {"ran": False, "reason": NO_CONTROL.get(check_id, "no negative control"),
                "failedAsExpected": False}
    with tempfile.TemporaryDirectory(prefix="physval-control-") as tmp:
        result = _run_check(check_id, control.make(Path(tmp)))
    return {"ran": True, "asset": control.asset, "description": control.description,
            "status": result.status.value, "failedAsExpected": result.status is Status.FAIL,
            "reason": result.reason}


@cache
def negative_controls() -> dict[str, dict[str, Any]]:
    """Every check's negative-control record (deterministic; computed once per process)."""
    return {cid: run_control(cid) for cid in sorted({*CONTROLS, *NO_CONTROL})}
