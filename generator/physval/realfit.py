"""REAL_WORLD_FIT: engine values against real measurements (weighing, COM measurement).

Protocol 004: "现实一致性再附 REAL_WORLD_FIT(measurements, errors)；缺少实物参考时保持未验证"
-- without a real reference the fit stays UNVERIFIED; never written as zero error.
"""

from __future__ import annotations

import mujoco
import numpy as np

from generator.physval.manifest import AssetManifest
from generator.physval.results import CheckResult, Group, Threshold, judged, not_run
from generator.physval.scene import Placement, compile_spec, mesh_spec, mjcf_spec
from generator.physval.thresholds import SIM_TIMESTEP_S

SRC = "protocol 004 (REAL_WORLD_FIT); tolerance = the measurement's stated uncertainty"


def _whole(manifest: AssetManifest) -> tuple[float, np.ndarray]:
    """Total mass [kg] and COM [m] (asset frame) of the compiled asset at its rest pose."""
    spec = (mesh_spec(manifest, Placement(free=False)) if manifest.kind == "mesh"
            else mjcf_spec(manifest))
    model, data = compile_spec(spec, SIM_TIMESTEP_S)
    mujoco.mj_forward(model, data)
    return float(model.body_subtreemass[0]), data.subtree_com[0].copy()


def check_real(manifest: AssetManifest, loaded_ok: bool) -> list[CheckResult]:
    """real.mass and real.com, each UNVERIFIED unless that measurement is supplied."""
    meas = manifest.measurements
    out = []
    for cid, field in (("real.mass", "mass_kg"), ("real.com", "com_m")):
        m = getattr(meas, field) if meas else None
        if m is None:
            out.append(not_run(cid, Group.REAL_WORLD, f"no measured {field} supplied: the real "
                               "object was not weighed/measured, so no fit is claimed"))
            continue
        if not loaded_ok:
            out.append(not_run(cid, Group.REAL_WORLD, "the asset did not load"))
            continue
        mass, com = _whole(manifest)
        sim = mass if field == "mass_kg" else com
        err = float(np.linalg.norm(np.subtract(sim, m.value)))
        unit = "kg" if field == "mass_kg" else "m"
        out.append(judged(
            cid, Group.REAL_WORLD, err <= m.uncertainty,
            {"engine": sim, "measured": m.value, "error": err, "unit": unit,
             "conditions": meas.conditions if meas else ""},
            Threshold(m.uncertainty, unit, "<=", SRC),
            "whole-asset mass / COM from the compiled MuJoCo model (exact mesh inertia)",
            f"engine {field} differs from the measurement by {err:.3g} {unit}: fit density/"
            "material distribution to the real object",
        ))
    return out
