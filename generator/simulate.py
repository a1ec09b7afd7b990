"""Per-seed trial: IK for six targets, quintic trajectory, 500 Hz dynamics, contacts,
clearance and settling.

The loop is deliberately small: set the servo targets, ``mj_step``, copy joint angles
and joint torques into preallocated arrays, and only when MuJoCo reports a contact
(``ncon > 0``, which the collision filter in cell.py limits to arm-vs-static pairs)
look at the contacts. Clearance is computed afterwards from the recorded angles
(clearance.py). The workpiece is attached kinematically while gripped: it has no
contact geometry in the dynamics (so the intended gripper-workpiece contact never
registers). From the end of ``grasp`` to the end of ``place`` its mass and inertia are
added to the gripper body at the TCP, so the arm carries its weight, and its collision box
(1 mm inside the cube, so the faces it stands on are not contacts) is tested against the
static scene at every step: any overlap is a collision, recorded like an arm contact.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from generator import arm, cell, ik, rules, trajectory
from generator.checks import REACH_TOLERANCE_MM, trial_success
from generator.clearance import min_clearance

APPROACH_HEIGHT_M = 0.12  # above-pick / lift / above-place / retreat offset (design)
DOWN = np.array([0.0, 0.0, -1.0])
TARGET_NAMES = ("above-pick", "pick", "lift", "above-place", "place", "retreat")
# Settling: every joint within 1e-3 rad of the final setpoint and below 0.01 rad/s,
# held for SETTLE_HOLD_S. A seed that has not settled SETTLE_WINDOW_S after the end of
# its trajectory has no cycle time (it fails; the window is an observation limit, not
# a cap added to the cycle).
SETTLE_POSITION_RAD = 1e-3
SETTLE_VELOCITY_RAD_S = 0.01
SETTLE_HOLD_S = 0.05
SETTLE_WINDOW_S = 3.0
# Start pose: tool down, between the stations, at least this far from every fixed part.
START_MIN_CLEARANCE_M = 0.020
START_HEIGHT_ABOVE_STATIONS_M = 0.25
START_HEIGHT_STEP_M = 0.05
START_HEIGHT_TRIES = 8
START_FALLBACK_RADII_M = (0.6, 0.45, 0.35)  # closer start radii when the stations are far
# Taught posture: elbow up, wrist inward (the wrist-1 drive between the tool point and
# the robot axis), tool pointing down. q1 is replaced by the target azimuth + pi (the
# DH zero pose points the arm along -x), unwrapped next to the previous waypoint. Every
# IK solve starts from this posture, so all targets of a cell are on one branch.
POSTURE_RAD = np.array([math.pi, -1.63, 1.8, -1.74, -1.57, 0.0])
TIMESERIES_STRIDE = 20  # 25 Hz samples for plots
# The carried workpiece touches the belt it is lifted from and the fixture it is set on.
CARRIED_INTENDED_CONTACTS = (("conveyor_belt", "lift"), ("fixture_table", "place"))


class CellError(RuntimeError):
    """The cell cannot be prepared (e.g. no collision-free start pose)."""


@dataclass(frozen=True)
class PreparedCell:
    cell: cell.Cell
    start_q: np.ndarray
    start_clearance_m: float
    start_clearance_pair: tuple[str, str]
    kv: np.ndarray = field(repr=False)


def prepare(params, mount_tool=None) -> PreparedCell:
    """Build the cell, choose its start pose, add servos tuned at that pose, compile."""
    spec = cell.build_spec(params, mount_tool)
    model0 = spec.compile()
    start_q, start_clear = _start_pose(model0, params)
    kv = cell.critical_damping(model0, start_q)
    cell.add_servos(spec, kv)
    spec.add_key(name="start", qpos=start_q,
                 ctrl=cell.servo_controls(start_q[None, :], np.zeros((1, 6)))[0],
                 mpos=cell.station_positions(params)[0], mquat=(1, 0, 0, 0))
    model = spec.compile()
    arm_geoms, static_geoms, owner = cell.classify_geoms(model)
    pick, place = cell.station_positions(params)
    built = cell.Cell(params=params, spec=spec, model=model, arm_geoms=arm_geoms,
                      static_geoms=static_geoms, static_object_of_geom=owner,
                      tcp_site=model.site("tcp").id,
                      pick_xyz=tuple(pick), place_xyz=tuple(place))
    return PreparedCell(built, start_q, start_clear.distance_m, start_clear.geoms, kv)


def _posture(azimuth: float, near_q1: float = 0.0) -> np.ndarray:
    """The taught posture turned to ``azimuth`` [rad], q1 taken nearest to ``near_q1``."""
    q = POSTURE_RAD.copy()
    wanted = azimuth + math.pi
    q[0] = near_q1 + math.atan2(math.sin(wanted - near_q1), math.cos(wanted - near_q1))
    return q


def _start_pose(model: mujoco.MjModel, params):
    """Tool down, between the stations (half the place azimuth), above both stations and
    clear of every fixed part by ``START_MIN_CLEARANCE_M``. Tried at the nearer station's
    radius first, then closer to the robot (for stations beyond comfortable reach), each
    at rising heights; the first clear, converged pose wins (deterministic order)."""
    arm_geoms, static_geoms, owner = cell.classify_geoms(model)
    data = mujoco.MjData(model)
    site = model.site("tcp").id
    azimuth = cell.PLACE_AZIMUTH_RAD / 2
    nearer = min(params.pickDistance, params.placeDistance)
    radii = [nearer] + [r for r in START_FALLBACK_RADII_M if r < nearer]
    base_z = max(params.pickHeight, params.placeHeight) + START_HEIGHT_ABOVE_STATIONS_M
    for radius in radii:
        for attempt in range(START_HEIGHT_TRIES):
            target = np.array([radius * math.cos(azimuth), radius * math.sin(azimuth),
                               base_z + attempt * START_HEIGHT_STEP_M])
            sol = ik.solve(model, data, site, target, DOWN, _posture(azimuth))
            if not sol.converged:
                continue
            overall, _ = min_clearance(model, sol.q[None, :], arm_geoms, static_geoms, owner)
            if overall.distance_m >= START_MIN_CLEARANCE_M:
                return sol.q, overall
    raise CellError(
        "no start pose with the tool down between the stations is clear of the fixed parts "
        f"by {START_MIN_CLEARANCE_M * 1000:.0f} mm; move the stations or the guards")


def pick_offset(seed: int, jitter_m: float) -> np.ndarray:
    """Seeded pick-position offset [m], uniform over a disc of radius ``jitter_m``."""
    rng = np.random.default_rng(seed)
    radius = jitter_m * math.sqrt(rng.uniform())
    angle = rng.uniform(0.0, 2 * math.pi)
    return np.array([radius * math.cos(angle), radius * math.sin(angle), 0.0])


def targets_for(prepared: PreparedCell, seed: int) -> list[np.ndarray]:
    c = prepared.cell
    pick = np.asarray(c.pick_xyz) + pick_offset(seed, c.params.jitter)
    place = np.asarray(c.place_xyz)
    up = np.array([0.0, 0.0, APPROACH_HEIGHT_M])
    return [pick + up, pick, pick + up, place + up, place, place + up]


def solve_targets(prepared: PreparedCell, targets: list[np.ndarray]):
    """IK for every target; returns joint waypoints and per-target records."""
    c = prepared.cell
    model = c.model
    data = mujoco.MjData(model)
    base = np.array([0.0, 0.0, c.params.pedestalHeight])
    waypoints, records = [prepared.start_q], []
    for name, target in zip(TARGET_NAMES, targets, strict=True):
        posture = _posture(math.atan2(target[1], target[0]), waypoints[-1][0])
        sol = ik.solve(model, data, c.tcp_site, target, DOWN, posture)
        error_mm = sol.position_error_m * 1000.0
        reached = error_mm <= REACH_TOLERANCE_MM and \
            math.degrees(sol.axis_error_rad) <= rules.REACHED_AXIS_DEG
        reason = None
        if not reached:
            inside = ik.within_envelope(target, DOWN, base, cell.TCP_OFFSET_M)
            reason = "not-converged" if inside else "unreachable"
        records.append({"name": name, "target": target, "errorMm": error_mm,
                        "axisErrorDeg": math.degrees(sol.axis_error_rad),
                        "iterations": sol.iterations, "reason": reason})
        waypoints.append(sol.q)
    return waypoints, records


@dataclass
class _ContactLog:
    pairs: dict = field(default_factory=dict)

    def add(self, model, data, step: int, segment: str) -> None:
        for i in range(data.ncon):
            con = data.contact[i]
            self.record((int(con.geom1), int(con.geom2)), step, segment,
                        max(0.0, -float(con.dist)), con.pos)

    def record(self, geoms: tuple[int, int], step: int, segment: str, depth: float,
               point: np.ndarray) -> None:
        key = tuple(sorted(geoms))
        rec = self.pairs.get(key)
        if rec is None:
            self.pairs[key] = {"firstStep": step, "lastStep": step, "segment": segment,
                               "depth": depth, "point": np.array(point), "steps": 1}
        else:
            rec["lastStep"] = step
            rec["steps"] += 1
            rec["depth"] = max(rec["depth"], depth)


def simulate(prepared: PreparedCell, setpoints: np.ndarray, velocities: np.ndarray,
             segment_index: np.ndarray, segment_names: list[str]):
    """Run the dynamics along ``setpoints`` [rad] (with feed-forward ``velocities`` [rad/s])
    then hold the last setpoint at zero velocity until settled.

    Returns (qpos log, joint torque log, number of trajectory steps, settled step or
    None, contact log).
    """
    model = copy.copy(prepared.cell.model)  # the carried workpiece changes body inertia
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    dt = model.opt.timestep
    n_traj = len(setpoints)
    attach, detach = carry_steps(segment_index, segment_names)
    controls = cell.servo_controls(setpoints, velocities)
    n_max = n_traj + round(SETTLE_WINDOW_S / dt)
    qlog = np.empty((n_max, model.nq))
    tau = np.empty((n_max, model.nv))
    contacts = _ContactLog()
    ctrl = data.ctrl
    step = mujoco.mj_step
    gripper = model.body("gripper").id
    empty = _inertial(model, gripper)
    loaded = combined_inertial(empty, cell.WORKPIECE_MASS_KG,
                               np.array([0.0, 0.0, cell.TCP_OFFSET_M]),
                               cell.WORKPIECE_INERTIA_KG_M2)
    for start, stop, inertial in ((0, attach, empty), (attach, detach, loaded),
                                  (detach, n_traj, empty)):
        _set_inertial(model, gripper, inertial)
        for i in range(start, stop):
            ctrl[:] = controls[i]
            step(model, data)
            qlog[i] = data.qpos
            tau[i] = data.qfrc_actuator
            if data.ncon:
                contacts.add(model, data, i, segment_names[segment_index[i]])
    final = setpoints[-1]
    ctrl[:] = cell.servo_controls(final[None, :], np.zeros((1, 6)))[0]
    hold_steps = round(SETTLE_HOLD_S / dt)
    held, settled_at, end = 0, None, n_max
    for i in range(n_traj, n_max):
        step(model, data)
        qlog[i] = data.qpos
        tau[i] = data.qfrc_actuator
        if data.ncon:
            contacts.add(model, data, i, "settle")
        if (np.max(np.abs(data.qpos - final)) < SETTLE_POSITION_RAD
                and np.max(np.abs(data.qvel)) < SETTLE_VELOCITY_RAD_S):
            held += 1
            if held >= hold_steps:
                settled_at, end = i - hold_steps + 1, i + 1
                break
        else:
            held = 0
    return qlog[:end], tau[:end], n_traj, settled_at, contacts


def carried_contacts(model: mujoco.MjModel, qlog: np.ndarray, attach: int, detach: int,
                     static_geoms, segment_index: np.ndarray, segment_names: list[str]
                     ) -> _ContactLog:
    """Contacts of the carried workpiece with the static scene, from the recorded states.

    The workpiece rides kinematically (it exerts no contact force), so its contacts are
    found geometrically at every gripped step: ``mj_geomDistance`` < 0 between its
    collision box and a static geom is a collision, recorded like an arm contact. The
    surface it leaves during ``lift`` and the one it is set on during ``place`` are the
    intended contacts (``CARRIED_INTENDED_CONTACTS``) and are not counted.
    """
    data = mujoco.MjData(model)
    carried = model.geom(cell.CARRIED_GEOM).id
    intended = {(model.geom(g).id, seg) for g, seg in CARRIED_INTENDED_CONTACTS}
    fromto = np.zeros(6)
    log = _ContactLog()
    for i in range(attach, detach):
        data.qpos[:] = qlog[i]
        mujoco.mj_kinematics(model, data)
        segment = segment_names[segment_index[i]]
        for s in static_geoms:
            if (s, segment) in intended:
                continue
            dist = mujoco.mj_geomDistance(model, data, carried, s, 0.0, fromto)
            if dist < 0:
                log.record((carried, s), i, segment, -dist,
                           (fromto[:3] + fromto[3:]) / 2)
    return log


def carry_steps(segment_index: np.ndarray, segment_names: list[str]) -> tuple[int, int]:
    """First step of ``lift`` (gripper closed) and of ``retreat`` (gripper open)."""
    lift = segment_names.index("lift")
    retreat = segment_names.index("retreat")
    return (int(np.argmax(segment_index == lift)), int(np.argmax(segment_index == retreat)))


def _inertial(model: mujoco.MjModel, body: int) -> tuple[float, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    return (float(model.body_mass[body]), model.body_ipos[body].copy(),
            model.body_inertia[body].copy(), model.body_iquat[body].copy())


def _set_inertial(model: mujoco.MjModel, body: int, inertial) -> None:
    mass, ipos, inertia, iquat = inertial
    model.body_mass[body] = mass
    model.body_ipos[body] = ipos
    model.body_inertia[body] = inertia
    model.body_iquat[body] = iquat


def combined_inertial(inertial, mass_kg: float, pos_m: np.ndarray, inertia_diag: np.ndarray):
    """A body's inertial with a rigidly attached point-centred mass added (body frame).

    Args:
      inertial: (mass [kg], COM [m], principal inertia [kg m^2], principal-axes quat).
      mass_kg: added mass; pos_m: its centre in the body frame [m];
      inertia_diag: its principal inertia about its centre, axes along the body frame.
    Returns:
      The combined (mass, COM, principal inertia, principal-axes quat).
    """
    m0, c0, i0, q0 = inertial
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, q0)
    rot = rot.reshape(3, 3)
    total = m0 + mass_kg
    com = (m0 * c0 + mass_kg * pos_m) / total

    def shifted(m, d):
        return m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))

    tensor = (rot @ np.diag(i0) @ rot.T + shifted(m0, c0 - com)
              + np.diag(inertia_diag) + shifted(mass_kg, pos_m - com))
    values, vectors = np.linalg.eigh(tensor)
    if np.linalg.det(vectors) < 0:
        vectors[:, 0] *= -1
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(vectors).reshape(9))
    return total, com, values, quat


def run_seed(prepared: PreparedCell, seed: int, requirements) -> tuple[dict, dict]:
    """One seed: returns the trial record (robot.json) and its plot time series."""
    c = prepared.cell
    model = c.model
    dt = model.opt.timestep
    targets = targets_for(prepared, seed)
    waypoints, target_records = solve_targets(prepared, targets)
    speed = prepared.cell.params.speedFraction * np.asarray(arm.RATED_SPEED_RAD_S)
    segments = trajectory.plan(waypoints, speed, dt)
    setpoints, velocities, seg_index = trajectory.sample_with_velocity(segments, dt)
    names = [s.name for s in segments]
    qlog, tau, n_traj, settled_at, contacts = simulate(prepared, setpoints, velocities,
                                                       seg_index, names)
    attach, detach = carry_steps(seg_index, names)
    carried = carried_contacts(model, qlog, attach, detach, c.static_geoms, seg_index, names)
    contacts.pairs.update(carried.pairs)
    # row 0 is the start pose at t = 0; row k the state after step k, at t = k dt
    states = np.vstack([np.concatenate([prepared.start_q, qlog[0, 6:]]), qlog])
    overall, per_object = min_clearance(model, states, c.arm_geoms, c.static_geoms,
                                        c.static_object_of_geom)
    name = lambda kind, i: mujoco.mj_id2name(model, kind, i)
    geom_name = lambda g: name(mujoco.mjtObj.mjOBJ_GEOM, g)
    body_name = lambda g: name(mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g])
    collisions = []
    for (g1, g2), rec in sorted(contacts.pairs.items(), key=lambda kv: kv[1]["firstStep"]):
        a, s = (g2, g1) if g1 in c.static_geoms else (g1, g2)
        collisions.append({
            "timeS": (rec["firstStep"] + 1) * dt, "lastS": (rec["lastStep"] + 1) * dt,
            "segment": rec["segment"], "geoms": [geom_name(a), geom_name(s)],
            "bodies": [body_name(a), body_name(s)], "depthMm": rec["depth"] * 1000.0,
            "pointM": rec["point"], "steps": rec["steps"]})
    trajectory_end = n_traj * dt
    cycle = None if settled_at is None else (settled_at + 1) * dt
    ik_error = max(r["errorMm"] for r in target_records)
    reached = all(r["reason"] is None for r in target_records)
    trial = {
        "seed": seed,
        "pickOffsetMm": pick_offset(seed, c.params.jitter)[:2] * 1000.0,
        "reached": reached,
        "ikErrorMm": ik_error,
        "ikAxisErrorDeg": max(r["axisErrorDeg"] for r in target_records),
        "targets": target_records,
        "collisionFree": not collisions,
        "collisions": collisions,
        "minClearanceMm": overall.distance_m * 1000.0,
        "minClearancePair": list(overall.geoms),
        "minClearanceTimeS": overall.step * dt,
        "clearanceByObjectMm": {o: v.distance_m * 1000.0 for o, v in per_object.items()},
        "segments": [{"name": s.name, "startS": s.start_s, "durationS": s.duration_s}
                     for s in segments],
        "trajectoryEndS": trajectory_end,
        "settled": settled_at is not None,
        "settleS": None if cycle is None else cycle - trajectory_end,
        "cycleSeconds": cycle,
        "peakTorqueNm": np.max(np.abs(tau[:, :6]), axis=0),
        "torqueLimitNm": list(arm.TORQUE_LIMIT_NM),
        # time each joint spent at its torque limit, and the worst servo tracking error
        "torqueLimitedS": np.count_nonzero(
            np.abs(tau[:, :6]) >= np.asarray(arm.TORQUE_LIMIT_NM) * (1 - 1e-9), axis=0) * dt,
        "maxTrackingErrorRad": float(np.max(np.abs(qlog[:n_traj, :6] - setpoints))),
    }
    trial["success"] = trial_success(trial, _req_dict(requirements))
    trial["failureReason"] = rules.failure_reason(trial, target_records, _req_dict(requirements))
    return trial, _timeseries(model, qlog, tau, dt, seed, (attach, detach))


def _req_dict(requirements) -> dict:
    if isinstance(requirements, dict):
        return requirements
    return {"maxCycleSeconds": requirements.maxCycleSeconds,
            "minSuccessRate": requirements.minSuccessRate}


def _timeseries(model, qlog, tau, dt, seed, carry: tuple[int, int]) -> dict:
    data = mujoco.MjData(model)
    site = model.site("tcp").id
    idx = np.arange(0, len(qlog), TIMESERIES_STRIDE)
    tcp = np.empty((len(idx), 3))
    for k, i in enumerate(idx):
        data.qpos[:] = qlog[i]
        mujoco.mj_kinematics(model, data)
        tcp[k] = data.site_xpos[site]
    return {"seed": seed, "timeS": np.round((idx + 1) * dt, 6),
            "qRad": np.round(qlog[idx, :6], 6), "torqueNm": np.round(tau[idx, :6], 4),
            "tcpM": np.round(tcp, 6),
            "carriedS": [round((carry[0] + 1) * dt, 6), round((carry[1] + 1) * dt, 6)]}
