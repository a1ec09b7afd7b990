"""Group 3 (mass, centre of mass, inertia): manifest against engine, physical realisability.

Protocol 004 group 3: compare the source/manifest with the engine's reading; mass positive,
principal inertias positive and satisfying the triangle inequality. The engine reads mesh
inertia in EXACT mode (scene.MESH_INERTIA).
"""

from __future__ import annotations

import mujoco
import numpy as np

from generator.physval.manifest import AssetManifest, Inertial
from generator.physval.results import CheckResult, Group, Threshold, judged, not_run
from generator.physval.thresholds import (
    COM_ATOL_M,
    INERTIA_ATOL_KG_M2,
    INERTIA_RTOL,
    MASS_REL_TOL,
    TRIANGLE_REL_MARGIN,
)

SRC = "protocol 004 group 3"
METHOD = "MuJoCo compiled body_mass / body_ipos / body_iquat+body_inertia (body frame)"


def engine_inertial(model: mujoco.MjModel, body: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass [kg], COM [m], inertia tensor about the COM [kg m^2]) in the body frame."""
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[body])
    r = rot.reshape(3, 3)
    return (float(model.body_mass[body]), model.body_ipos[body].copy(),
            r @ np.diag(model.body_inertia[body]) @ r.T)


def _pairs(manifest: AssetManifest, model: mujoco.MjModel
           ) -> list[tuple[Inertial, tuple[float, np.ndarray, np.ndarray]]]:
    out = []
    for decl in manifest.inertials:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, decl.body)
        if b >= 0:
            out.append((decl, engine_inertial(model, b)))
    return out


def check_mass(manifest: AssetManifest, model: mujoco.MjModel | None) -> CheckResult:
    """inertia.mass: |m_engine - m_manifest| / m_manifest <= 1e-6 for every declared body."""
    cid = "inertia.mass"
    if model is None:
        return not_run(cid, Group.INERTIA, "the asset did not load")
    if manifest.kind == "mesh" and manifest.inertials[0].density_kg_m3 is None:
        return not_run(cid, Group.INERTIA, "no density declared: the engine mass was set from "
                       "the manifest, so comparing them would be circular")
    rows = [{"body": d.body, "manifestKg": d.mass_kg, "engineKg": e[0],
             "relError": abs(e[0] - d.mass_kg) / d.mass_kg} for d, e in _pairs(manifest, model)]
    worst = max((r["relError"] for r in rows), default=np.inf)
    return judged(cid, Group.INERTIA, worst <= MASS_REL_TOL,
                  {"bodies": rows, "worstRelError": float(worst)},
                  Threshold(MASS_REL_TOL, "1 (relative)", "<=", SRC), METHOD,
                  f"engine mass differs from the manifest by {worst:.3g} (relative): check the "
                  "density, the length unit and the mesh inertia mode")


def check_com(manifest: AssetManifest, model: mujoco.MjModel | None) -> CheckResult:
    """inertia.com: declared COM within 1 um of the engine's, body frame."""
    cid = "inertia.com"
    if model is None:
        return not_run(cid, Group.INERTIA, "the asset did not load")
    rows = [{"body": d.body, "manifestM": list(d.com_m), "engineM": e[1],
             "errorM": float(np.linalg.norm(np.subtract(d.com_m, e[1])))}
            for d, e in _pairs(manifest, model)]
    worst = max((r["errorM"] for r in rows), default=np.inf)
    return judged(cid, Group.INERTIA, worst <= COM_ATOL_M, {"bodies": rows, "worstErrorM": worst},
                  Threshold(COM_ATOL_M, "m", "<=", f"{SRC} (number: project choice)"), METHOD,
                  f"COM differs by {worst:.3g} m: check the frame the COM is given in")


def check_tensor(manifest: AssetManifest, model: mujoco.MjModel | None) -> CheckResult:
    """inertia.tensor: |I_engine - I_manifest| <= atol + rtol |I_manifest| elementwise."""
    cid = "inertia.tensor"
    if model is None:
        return not_run(cid, Group.INERTIA, "the asset did not load")
    rows, ok = [], True
    for d, e in _pairs(manifest, model):
        decl = np.array(d.inertia_kg_m2)
        close = bool(np.allclose(e[2], decl, rtol=INERTIA_RTOL, atol=INERTIA_ATOL_KG_M2))
        ok &= close
        rows.append({"body": d.body, "manifestKgM2": decl, "engineKgM2": e[2],
                     "maxAbsErrorKgM2": float(np.max(np.abs(e[2] - decl))), "close": close})
    ok &= bool(rows)
    return judged(cid, Group.INERTIA, ok, {"bodies": rows},
                  Threshold({"rtol": INERTIA_RTOL, "atol": INERTIA_ATOL_KG_M2}, "kg m^2",
                            "allclose", SRC), METHOD,
                  "inertia tensor differs from the manifest beyond rtol 1e-5 / atol 1e-10")


def principal_problems(inertia: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Principal moments [kg m^2] (ascending) and what makes them non-physical, if anything."""
    if not np.all(np.isfinite(inertia)):
        return np.full(3, np.nan), ["non-finite inertia"]
    p = np.linalg.eigvalsh(inertia)
    problems = []
    if np.any(p <= 0):
        problems.append("principal inertia not positive")
    if p[2] > p[0] + p[1] + TRIANGLE_REL_MARGIN * abs(p[2]):
        problems.append("triangle inequality violated (Imax > sum of the other two)")
    return p, problems


def check_principal(manifest: AssetManifest, model: mujoco.MjModel | None) -> CheckResult:
    """inertia.principal: finite, positive, triangle inequality (manifest and engine)."""
    cid = "inertia.principal"
    if model is None:
        return not_run(cid, Group.INERTIA, "the asset did not load")
    rows, problems = [], []
    for d, e in _pairs(manifest, model):
        for side, tensor, mass in (("manifest", np.array(d.inertia_kg_m2), d.mass_kg),
                                   ("engine", e[2], e[0])):
            p, bad = principal_problems(tensor)
            if not (np.isfinite(mass) and mass > 0):
                bad.append("mass not positive")
            rows.append({"body": d.body, "side": side, "principalKgM2": p, "problems": bad})
            problems += [f"{d.body} ({side}): {b}" for b in bad]
    return judged(cid, Group.INERTIA, not problems and bool(rows),
                  {"bodies": rows, "problems": problems},
                  Threshold("finite, > 0, Imax <= I1 + I2", "kg m^2", "==",
                            f"{SRC}; margin {TRIANGLE_REL_MARGIN} x Imax (project choice)"),
                  "eigenvalues of the symmetric inertia tensors", "; ".join(problems))


def run_inertia(manifest: AssetManifest, model: mujoco.MjModel | None) -> list[CheckResult]:
    """All group-3 checks."""
    return [check_mass(manifest, model), check_com(manifest, model),
            check_tensor(manifest, model), check_principal(manifest, model)]
