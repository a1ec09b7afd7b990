"""Robot-model self-consistency and the seed-003 two-link example."""

from __future__ import annotations

import math

import numpy as np
import pytest

from generator import cell
from generator.physval import robot, twolink
from generator.physval.results import Status


@pytest.fixture(scope="module")
def record() -> dict:
    return robot.robot_model_checks()


def test_every_robot_check_passes(record):
    assert {c["id"]: c["status"] for c in record["checks"]} == {
        "robot.fk": "PASS", "robot.gravity": "PASS", "robot.mass_matrix": "PASS",
        "robot.mass_matrix_spd": "PASS", "robot.energy": "PASS", "robot.ik_round_trip": "PASS"}
    assert record["checks"][0]["measured"]["configurations"] == 33


def _arm():
    spec = robot.arm_spec(cell.build_spec(robot._mid_params()))
    return spec, spec.compile()


def test_fk_fails_on_a_wrong_link_length():
    spec, _ = _arm()
    spec.body("forearm_link").pos = np.asarray(spec.body("forearm_link").pos) * 1.01
    assert robot.check_fk(spec.compile(), robot.configurations()).status is Status.FAIL


def test_dynamics_fail_on_a_wrong_mass():
    spec, model = _arm()
    reference = robot._pinocchio(spec, model)  # Pinocchio loaded from the correct arm
    model.body_mass[model.body("upper_arm_link").id] *= 1.05  # then MuJoCo's mass is wrong
    checks = {c.id: c.status
              for c in robot.check_dynamics(spec, model, robot.configurations(), reference)}
    assert checks["robot.gravity"] is Status.FAIL
    assert checks["robot.mass_matrix"] is Status.FAIL


def test_energy_check_fails_with_damping():
    spec, _ = _arm()
    drift = robot.energy_drift(spec, 3, robot.ENERGY_DT_S)  # 3 = mjINT_IMPLICITFAST
    assert drift["relativeDrift"] > robot.ENERGY_DRIFT_TOL  # the cell's integrator at 1 ms


def test_two_link_holding_torques_match_hand_calculation():
    g = 9.81
    # hand calculation: joint 2 carries link 2 (COM at 0.15 m); joint 1 both links
    tau2 = 1.5 * g * 0.15 * math.cos(math.radians(75))
    tau1 = (2.0 * 0.2 + 1.5 * 0.4) * g * math.cos(math.radians(30)) + tau2
    assert tau1 == pytest.approx(9.0670, abs=1e-4) and tau2 == pytest.approx(0.5713, abs=1e-4)
    rec = twolink.two_link_record()
    np.testing.assert_allclose(rec["numpyNm"], [tau1, tau2], rtol=1e-12)
    np.testing.assert_allclose(rec["mujocoNm"], [tau1, tau2], rtol=1e-9)
    assert rec["documentNm"] == [12.6, 4.4]
    assert rec["agreesWithDocument"] is False  # reported honestly: the document differs
