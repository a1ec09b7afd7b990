"""Simulation stage tests on the real engine (issue 2)."""

from __future__ import annotations

import itertools
import math

import mujoco
import numpy as np
import pytest

from generator import cell, ik, simulate, trajectory
from generator.evidence.canonical import dumps
from generator.spec import CellParams, Requirements

DEMO_CELL = {"pickDistance": 0.32, "placeDistance": 0.32, "pickHeight": 0.6, "placeHeight": 0.7,
                 "pedestalHeight": 1.0, "guardClearance": 0.30, "speedFraction": 0.75, "jitter": 0.02}
REQ = Requirements(maxCycleSeconds=5.0, minSuccessRate=0.9)


def params(**changes) -> CellParams:
    return CellParams(**(DEMO_CELL | changes))


@pytest.fixture(scope="module")
def prepared():
    return simulate.prepare(params())


def test_ik_converges_on_reachable_targets(prepared):
    targets = simulate.targets_for(prepared, seed=3)
    _, records = simulate.solve_targets(prepared, targets)
    assert [r["name"] for r in records] == list(simulate.TARGET_NAMES)
    for rec in records:
        assert rec["reason"] is None
        assert rec["errorMm"] < 0.01
        assert rec["iterations"] <= ik.MAX_ITERATIONS


def test_ik_reports_unreachable_for_a_target_two_metres_away(prepared):
    c = prepared.cell
    far = np.array([2.0, 0.0, 1.0])
    data = mujoco.MjData(c.model)
    sol = ik.solve(c.model, data, c.tcp_site, far, simulate.DOWN, prepared.start_q)
    assert not sol.converged and sol.iterations == ik.MAX_ITERATIONS
    assert sol.position_error_m > 0.5
    base = np.array([0, 0, c.params.pedestalHeight])
    assert not ik.within_envelope(far, simulate.DOWN, base, cell.TCP_OFFSET_M)
    # and the per-target record names the reason
    targets = simulate.targets_for(prepared, 0)
    targets[1] = far
    _, records = simulate.solve_targets(prepared, targets)
    assert records[1]["reason"] == "unreachable"


def test_envelope_keeps_reachable_targets_inside(prepared):
    base = np.array([0, 0, prepared.cell.params.pedestalHeight])
    for target in simulate.targets_for(prepared, 0):
        assert ik.within_envelope(target, simulate.DOWN, base, cell.TCP_OFFSET_M)


def test_quintic_boundary_conditions_and_peak_velocity():
    s, ds, dds = trajectory.quintic(np.array([0.0, 1.0]))
    assert s.tolist() == [0.0, 1.0]
    assert ds.tolist() == [0.0, 0.0] and dds.tolist() == [0.0, 0.0]
    tau = np.linspace(0, 1, 100001)
    _, ds, _ = trajectory.quintic(tau)
    assert ds.max() == pytest.approx(trajectory.QUINTIC_PEAK_VELOCITY_FACTOR, rel=1e-9)
    # a sampled segment: finite-difference peak velocity = 1.875 dq / T
    q0, q1 = np.zeros(6), np.array([1.0, -0.5, 0.25, 0, 0, 0.1])
    speed = np.full(6, 0.5 * math.pi)
    dt = 0.002
    seg = trajectory.plan([q0, q1], speed, dt, names=("move",))[0]
    assert seg.duration_s == pytest.approx(math.ceil(1.875 * 1.0 / speed[0] / dt) * dt)
    points, _ = trajectory.sample([seg], dt)
    velocity = np.diff(np.vstack([q0, points]), axis=0) / dt
    assert np.abs(velocity[:, 0]).max() == pytest.approx(1.875 / seg.duration_s, rel=1e-3)
    assert np.abs(velocity[:, 0]).max() <= speed[0] * (1 + 1e-9)
    np.testing.assert_allclose(points[-1], q1, atol=1e-12)
    # the fed-forward velocity is the quintic's derivative
    _, qd, _ = trajectory.sample_with_velocity([seg], dt)
    midpoint = (qd[:-1] + qd[1:]) / 2  # the forward difference estimates the midpoint slope
    np.testing.assert_allclose(midpoint, (points[1:] - points[:-1]) / dt, atol=5e-5)
    assert np.abs(qd[:, 0]).max() == pytest.approx(1.875 / seg.duration_s, rel=1e-4)
    assert np.abs(qd[-1]).max() < 1e-12


def test_guard_across_the_path_is_a_collision_and_a_clear_cell_is_not():
    clear = simulate.run_seed(simulate.prepare(params(guardClearance=0.30)), 0, REQ)[0]
    blocked = simulate.run_seed(simulate.prepare(params(guardClearance=0.12)), 0, REQ)[0]
    assert clear["collisionFree"] and clear["collisions"] == []
    assert not blocked["collisionFree"]
    first = blocked["collisions"][0]
    assert first["bodies"][1] == "guards"
    assert first["timeS"] > 0.1  # during the motion, not at the start pose
    assert first["segment"] in trajectory.SEGMENT_NAMES
    assert blocked["failureReason"] == "collision"


def test_clearance_decreases_as_guard_clearance_decreases():
    values = [simulate.run_seed(simulate.prepare(params(guardClearance=g)), 1, REQ)[0]
              ["clearanceByObjectMm"]["guards"] for g in (0.6, 0.45, 0.3, 0.2)]
    assert all(a > b for a, b in itertools.pairwise(values)), values
    # and the clearance moves with the guard, about one-for-one
    assert values[0] - values[-1] == pytest.approx(400.0, abs=40.0)


def test_same_seed_twice_gives_identical_trials(prepared):
    a = simulate.run_seed(prepared, 5, REQ)
    b = simulate.run_seed(simulate.prepare(params()), 5, REQ)
    assert dumps(a) == dumps(b)


def test_start_pose_is_clear_and_settling_is_measured(prepared):
    assert prepared.start_clearance_m >= simulate.START_MIN_CLEARANCE_M
    trial, _ = simulate.run_seed(prepared, 0, REQ)
    assert trial["settled"]
    assert 0 < trial["settleS"] < simulate.SETTLE_WINDOW_S / 2
    assert trial["cycleSeconds"] == pytest.approx(trial["trajectoryEndS"] + trial["settleS"])


def test_unsettled_arm_has_no_cycle_time():
    """Negative control for settling: with the servos cut to 1 % stiffness the arm cannot
    track within 1e-3 rad, and the seed must report no cycle time instead of a capped one."""
    prepared = simulate.prepare(params())
    model = prepared.cell.model
    model.actuator_gainprm[:, 0] *= 0.01  # position and velocity gains
    model.actuator_biasprm[:, 1:3] *= 0.01
    model.jnt_actgravcomp[:] = 0  # and nothing holds the arm up
    trial, _ = simulate.run_seed(prepared, 0, REQ)
    assert trial["settled"] is False and trial["cycleSeconds"] is None
    assert trial["failureReason"] in ("not-settled", "collision")


def test_pick_offsets_are_seeded_and_bounded():
    offsets = [simulate.pick_offset(s, 0.02) for s in range(50)]
    assert all(np.hypot(o[0], o[1]) <= 0.02 for o in offsets)
    np.testing.assert_array_equal(simulate.pick_offset(7, 0.02), simulate.pick_offset(7, 0.02))
    assert len({tuple(np.round(o, 9)) for o in offsets}) == 50


def test_combined_inertial_matches_mujoco_compiling_both_bodies():
    """The carried workpiece's inertia bookkeeping against MuJoCo's own composition."""
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name="b", pos=(0, 0, 1))
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=(0.03, 0.05, 0.02), pos=(0.01, 0, 0.04),
                  mass=0.8, quat=(0.9, 0.2, 0.3, 0.1))
    single = spec.compile()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=(0.02,) * 3, pos=(0, 0, 0.16),
                  mass=cell.WORKPIECE_MASS_KG)
    both = spec.compile()
    mass, com, inertia, quat = simulate.combined_inertial(
        simulate._inertial(single, 1), cell.WORKPIECE_MASS_KG, np.array([0, 0, 0.16]),
        cell.WORKPIECE_INERTIA_KG_M2)
    assert mass == pytest.approx(both.body_mass[1])
    np.testing.assert_allclose(com, both.body_ipos[1], atol=1e-12)

    def tensor(diag, q):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, q)
        rot = rot.reshape(3, 3)
        return rot @ np.diag(diag) @ rot.T

    np.testing.assert_allclose(tensor(inertia, quat),
                               tensor(both.body_inertia[1], both.body_iquat[1]), atol=1e-12)


def test_the_arm_carries_the_workpiece_between_grasp_and_place(prepared):
    targets = simulate.targets_for(prepared, 0)
    waypoints, _ = simulate.solve_targets(prepared, targets)
    segs = trajectory.plan(waypoints, 0.75 * np.full(6, math.pi), cell.TIMESTEP_S)
    setpoints, velocities, index = trajectory.sample_with_velocity(segs, cell.TIMESTEP_S)
    names = [s.name for s in segs]
    attach, detach = simulate.carry_steps(index, names)
    assert names[index[attach]] == "lift" and names[index[attach - 1]] == "grasp"
    assert names[index[detach]] == "retreat" and names[index[detach - 1]] == "place"
    _, tau, *_ = simulate.simulate(prepared, setpoints, velocities, index, names)
    # holding at the pick, gravity compensation through the actuators carries the cube:
    # the shoulder-lift torque changes by about m g r when the mass is added
    before, after = tau[attach - 1, 1], tau[attach + 5, 1]
    assert abs(after - before) > 0.3  # 0.17 kg at ~0.3 m: ~0.5 N m
    assert prepared.cell.model.body_mass[prepared.cell.model.body("gripper").id] == \
        pytest.approx(cell.GRIPPER_MASS_KG)  # the shared model is untouched


def test_the_carried_workpiece_collides_while_gripped_only():
    """A small static probe on the carried cube's path, beside the fingers' sweep, touches
    only the cube: the cube collides while gripped."""
    plain = simulate.prepare(params())
    trial, series = simulate.run_seed(plain, 0, REQ)
    transfer = next(s for s in trial["segments"] if s["name"] == "transfer")
    middle = transfer["startS"] + transfer["durationS"] / 2
    model, data = plain.cell.model, mujoco.MjData(plain.cell.model)
    data.qpos[:] = series["qRad"][int(np.argmin(np.abs(series["timeS"] - middle)))]
    mujoco.mj_kinematics(model, data)
    tcp = model.site("tcp").id
    side = data.site_xmat[tcp].reshape(3, 3)[:, 1]  # gripper y: the fingers span |y| < 12 mm
    probe_at = data.site_xpos[tcp] + 0.017 * side

    def mount_probe(spec, gripper):
        probe = spec.worldbody.add_geom(name="probe", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                                        size=(0.0015, 0, 0), pos=probe_at)
        probe.contype, probe.conaffinity = cell.STATIC_CONTYPE, cell.STATIC_CONAFFINITY

    trial, _ = simulate.run_seed(simulate.prepare(params(), mount_probe), 0, REQ)
    hits = [c for c in trial["collisions"] if c["geoms"][1] == "probe"]
    assert hits and {c["geoms"][0] for c in hits} == {cell.CARRIED_GEOM}
    assert {c["segment"] for c in hits} == {"transfer"}
    assert trial["failureReason"] == "collision"


def test_far_stations_give_a_run_with_unreachable_targets_not_an_error():
    far = params(pickDistance=1.1, placeDistance=1.1, pedestalHeight=0.3, pickHeight=0.6,
                 placeHeight=0.6)
    prepared = simulate.prepare(far)  # start pose found closer to the robot
    assert prepared.start_clearance_m >= simulate.START_MIN_CLEARANCE_M
    trial, _ = simulate.run_seed(prepared, 0, REQ)
    assert not trial["reached"] and trial["failureReason"] == "unreachable"
    assert {t["reason"] for t in trial["targets"]} >= {"unreachable"}
