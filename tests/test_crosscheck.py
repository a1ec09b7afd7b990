"""Cross-checks on the real demo-like cell with the reviewed bracket mounted (DESIGN.md s3).

Newton compiles warp kernels on first use (~17-40 s cold); the tests share the project's
kernel cache (``.cache/warp``), so later runs take a few seconds.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pxr import Usd, UsdPhysics

from generator import pipeline, rules, simulate, tool
from generator.crosscheck import dynamics
from generator.crosscheck.newton import NEWTON_FILE, newton_crosscheck
from generator.evidence.canonical import read_json
from generator.export import mjcf, usd
from generator.spec import CellParams, ToolSpec

DEMO_CELL = CellParams(pickDistance=0.32, placeDistance=0.32, pickHeight=0.6, placeHeight=0.7,
                       pedestalHeight=1.0, guardClearance=0.30, speedFraction=0.75, jitter=0.02)


@pytest.fixture(scope="module")
def prepared() -> simulate.PreparedCell:
    gated = tool.gate_tool(ToolSpec(cadReviewId="cr-0142-nema17-bracket", payloadKg=0.3),
                           "workcell-demo")
    return simulate.prepare(DEMO_CELL, pipeline.make_mounter(gated))


@pytest.fixture(scope="module")
def q_pick(prepared: simulate.PreparedCell) -> tuple[float, ...]:
    waypoints, _ = simulate.solve_targets(prepared, simulate.targets_for(prepared, 0))
    return tuple(float(v) for v in waypoints[2])


def _export(prepared, folder: Path, faults: usd.UsdFaults | None = None) -> dict:
    mjcf.write_mjcf(prepared, folder)
    return usd.write_usd(prepared, folder, faults or usd.UsdFaults())


def test_newton_crosscheck_passes_on_the_real_cell(prepared, tmp_path: Path) -> None:
    assert _export(prepared, tmp_path)["passed"]
    result = newton_crosscheck(tmp_path)
    assert result["passed"], result["reasons"]
    assert result == read_json(tmp_path / NEWTON_FILE)
    assert result["articulations"] == 1 and result["revoluteJoints"] == 6
    assert result["orphanJoints"] == 0 and result["configurations"] == 33
    assert result["newtonWarnings"] == []
    assert result["thresholds"] == {"positionMm": 0.1, "angleDeg": 0.01, "massMg": 1.0}
    assert result["worstPositionErrorMm"] < 0.01 and result["worstAngleErrorDeg"] < 1e-3
    assert "cad_tool" in result["massDifferencesMg"]
    assert max(result["massDifferencesMg"].values()) <= 1.0
    assert set(result["inputs"]) == {"scene.usda", "scene.xml"}
    assert set(result["versions"]) >= {"newton", "warp-lang", "usd-core"}


def test_articulation_root_off_the_bodies_orphans_every_joint(prepared, tmp_path: Path):
    exported = _export(prepared, tmp_path, usd.UsdFaults(articulation_root_not_ancestor=True))
    assert exported["passed"] and exported["findings"] == []  # every validator misses it
    result = newton_crosscheck(tmp_path, write=False)
    assert not result["passed"] and result["orphanJoints"] >= 6
    assert any("orphan joint" in r and "/Workcell/Joints/elbow" in r for r in result["reasons"])
    assert any("/Workcell/Static" in w for w in result["newtonWarnings"])


def test_joint_frames_from_the_pick_pose_break_forward_kinematics(prepared, q_pick, tmp_path):
    exported = _export(prepared, tmp_path, usd.UsdFaults(joint_frames_at_q=q_pick))
    assert exported["passed"] and exported["findings"] == []  # every validator misses it
    result = newton_crosscheck(tmp_path, write=False)
    assert not result["passed"] and result["orphanJoints"] == 0
    assert result["worstPositionErrorMm"] > 0.1
    assert any(r.startswith("forward kinematics differ") for r in result["reasons"])


def test_wrong_link_mass_fails_the_mass_comparison(prepared, tmp_path: Path) -> None:
    _export(prepared, tmp_path)
    stage = Usd.Stage.Open(str(tmp_path / "scene.usda"))
    mass = UsdPhysics.MassAPI(stage.GetPrimAtPath("/Workcell/forearm_link")).GetMassAttr()
    mass.Set(mass.Get() + 0.005)  # 5 g heavier
    stage.GetRootLayer().Save()
    assert usd.validate_usd(tmp_path / "scene.usda")["passed"]
    result = newton_crosscheck(tmp_path, write=False)
    assert not result["passed"]
    assert result["massDifferencesMg"]["forearm_link"] == pytest.approx(5000.0, rel=1e-3)
    assert any(r.startswith("mass of forearm_link") for r in result["reasons"])


def test_pinocchio_matches_mujoco(prepared, tmp_path: Path) -> None:
    mjcf.write_mjcf(prepared, tmp_path)
    for reference in (None, prepared.cell.model):
        result = dynamics.dynamics_crosscheck(tmp_path, reference)
        assert result["passed"], result["reasons"]
        assert result["configurations"] == 33
        assert result["gravityTorque"]["worstAbsDiff"] <= rules.GRAVITY_TOL_NM
        assert result["massMatrix"]["worstAbsDiff"] <= rules.MASS_MATRIX_TOL
        assert result["armature"]["mujocoKgM2"] == result["armature"]["pinocchioParsedKgM2"]


@pytest.mark.parametrize("attribute, scale", [("mass", 1.0005), ("diaginertia", 1.01)])
def test_perturbed_export_fails_the_dynamics_check(prepared, tmp_path: Path, attribute: str,
                                                    scale: float) -> None:
    """scene.xml with a forearm 0.05 % heavier (or 1 % stiffer in rotation) than simulated."""
    mjcf.write_mjcf(prepared, tmp_path)
    path = tmp_path / "scene.xml"
    root = ET.parse(path).getroot()
    inertial = root.find(".//body[@name='forearm_link']/inertial")
    values = [float(v) * scale for v in inertial.get(attribute).split()]
    inertial.set(attribute, " ".join(repr(v) for v in values))
    path.write_text(ET.tostring(root, encoding="unicode"), encoding="utf-8")
    result = dynamics.dynamics_crosscheck(tmp_path, prepared.cell.model)
    assert not result["passed"]
    assert any("mass matrix differs" in r for r in result["reasons"])
