"""Work-cell builder: a UR5e-class arm on a pedestal, conveyor, fixture and guards.

Built with ``mujoco.MjSpec`` from the bounded cell parameters; never from user XML.
World frame: z up, metres, robot axis through the origin. The pick station lies on
+x at ``pickDistance``; the place fixture at ``PLACE_AZIMUTH_RAD`` around the axis at
``placeDistance``. The four guard panels' inner faces stand at
``max(pickDistance, placeDistance) + guardClearance`` from the axis on +-x and +-y.

Collision filtering: arm-side geoms (links, gripper, mounted part, payload) have
contype 2 / conaffinity 1, static-scene geoms contype 1 / conaffinity 2, so MuJoCo
generates contacts only between the arm side and the static scene; every such
contact is a collision. The workpiece has no collision geometry (it is attached
kinematically, see simulate.py), which is how the intended gripper-workpiece contact
is excluded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np

from generator import arm
from generator.spec import CellParams

TIMESTEP_S = 0.002  # 500 Hz (design section 1)
PLACE_AZIMUTH_RAD = math.radians(150.0)  # fixture direction around the robot axis
ARM_CONTYPE, ARM_CONAFFINITY = 2, 1
STATIC_CONTYPE, STATIC_CONAFFINITY = 1, 2

PEDESTAL_RADIUS_M = 0.10
GUARD_HEIGHT_M = 2.0
GUARD_THICKNESS_M = 0.02
CONVEYOR_HALF_WIDTH_M = 0.10  # along the radial direction
CONVEYOR_HALF_LENGTH_M = 0.40  # along the belt
CONVEYOR_BELT_THICKNESS_M = 0.10
FIXTURE_HALF_SIZE_M = 0.10
WORKPIECE_HALF_M = 0.02  # 40 mm aluminium cube
WORKPIECE_MASS_KG = 2700.0 * (2 * WORKPIECE_HALF_M) ** 3  # 6061 aluminium, 0.1728 kg
# solid cube about its centre: m a^2 / 6 with edge a [kg m^2]
WORKPIECE_INERTIA_KG_M2 = np.full(3, WORKPIECE_MASS_KG * (2 * WORKPIECE_HALF_M) ** 2 / 6)

# Gripper (parallel-jaw class): palm and fingers in the flange frame (z out of the flange).
GRIPPER_MASS_KG = 0.8
TCP_OFFSET_M = 0.16  # flange to the tool centre point (workpiece centre when gripped)
FINGER_TIP_BEYOND_TCP_M = 0.012  # tips stop 8 mm above the surface the cube stands on
PALM_HALF = (0.035, 0.05, 0.035)
TOOL_MOUNT_POS = (PALM_HALF[0], 0.0, PALM_HALF[2])  # outer +x face of the palm
# The CAD part's base plate bolts to that face: tool z (the plate normal) along the
# gripper's +x, a +90 degree turn about the gripper's y axis.
TOOL_MOUNT_QUAT = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)
# The carried workpiece collides as a box 1 mm smaller than the cube on every side, so the
# faces it is lifted from and placed onto are not contacts while it stands on them.
CARRIED_INSET_M = 0.001
CARRIED_GEOM = "workpiece_carried"

STATIC_OBJECTS = ("guards", "conveyor", "fixture", "pedestal", "floor")


@dataclass(frozen=True)
class Cell:
    """A compiled work cell and the ids the simulation needs."""

    params: CellParams
    spec: mujoco.MjSpec
    model: mujoco.MjModel
    arm_geoms: tuple[int, ...]
    static_geoms: tuple[int, ...]
    static_object_of_geom: dict[int, str]
    tcp_site: int
    pick_xyz: tuple[float, float, float]  # nominal workpiece centre at the pick [m]
    place_xyz: tuple[float, float, float]  # workpiece centre when placed [m]


def station_positions(params: CellParams) -> tuple[np.ndarray, np.ndarray]:
    """Nominal workpiece centres [m] at the pick (conveyor) and place (fixture) stations."""
    pick = np.array([params.pickDistance, 0.0, params.pickHeight + WORKPIECE_HALF_M])
    place = np.array([params.placeDistance * math.cos(PLACE_AZIMUTH_RAD),
                      params.placeDistance * math.sin(PLACE_AZIMUTH_RAD),
                      params.placeHeight + WORKPIECE_HALF_M])
    return pick, place


def build_spec(params: CellParams, mount_tool: Callable[[mujoco.MjSpec, mujoco.MjsBody], None]
               | None = None) -> mujoco.MjSpec:
    """Build the cell's MjSpec; ``mount_tool(spec, gripper_body)`` adds the CAD part."""
    spec = mujoco.MjSpec()
    spec.modelname = "workcell"
    spec.option.timestep = TIMESTEP_S
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.compiler.autolimits = True
    spec.compiler.degree = False
    _add_static_scene(spec, params)
    gripper = _add_arm(spec, params)
    if mount_tool is not None:
        mount_tool(spec, gripper)
    _add_workpiece(spec, params)
    return spec


def _add_static_scene(spec: mujoco.MjSpec, params: CellParams) -> None:
    world = spec.worldbody
    _static_geom(world, "floor", mujoco.mjtGeom.mjGEOM_PLANE, (0, 0, 0), (3, 3, 0.05))
    pedestal = world.add_body(name="pedestal")
    _static_geom(pedestal, "pedestal", mujoco.mjtGeom.mjGEOM_CYLINDER,
                 (0, 0, params.pedestalHeight / 2), (PEDESTAL_RADIUS_M, params.pedestalHeight / 2))
    guards = world.add_body(name="guards")
    reach = params.guard_distance_m
    half_span = reach + GUARD_THICKNESS_M
    for name, sx, sy in (("guard_px", 1, 0), ("guard_nx", -1, 0), ("guard_py", 0, 1),
                         ("guard_ny", 0, -1)):
        centre = (sx * (reach + GUARD_THICKNESS_M / 2), sy * (reach + GUARD_THICKNESS_M / 2),
                  GUARD_HEIGHT_M / 2)
        half = (GUARD_THICKNESS_M / 2 if sx else half_span,
                GUARD_THICKNESS_M / 2 if sy else half_span, GUARD_HEIGHT_M / 2)
        _static_geom(guards, name, mujoco.mjtGeom.mjGEOM_BOX, centre, half)
    conveyor = world.add_body(name="conveyor")
    belt_half_len = min(CONVEYOR_HALF_LENGTH_M, reach - 0.01)
    belt_z = params.pickHeight - CONVEYOR_BELT_THICKNESS_M / 2
    _static_geom(conveyor, "conveyor_belt", mujoco.mjtGeom.mjGEOM_BOX,
                 (params.pickDistance, 0, belt_z),
                 (CONVEYOR_HALF_WIDTH_M, belt_half_len, CONVEYOR_BELT_THICKNESS_M / 2))
    leg_h = (params.pickHeight - CONVEYOR_BELT_THICKNESS_M) / 2
    for i, sy in enumerate((-1, 1)):
        _static_geom(conveyor, f"conveyor_leg_{i}", mujoco.mjtGeom.mjGEOM_BOX,
                     (params.pickDistance, sy * (belt_half_len - 0.03), leg_h),
                     (0.03, 0.03, leg_h))
    fixture = world.add_body(name="fixture")
    c, s = math.cos(PLACE_AZIMUTH_RAD), math.sin(PLACE_AZIMUTH_RAD)
    half_h = params.placeHeight / 2
    _static_geom(fixture, "fixture_table", mujoco.mjtGeom.mjGEOM_BOX,
                 (params.placeDistance * c, params.placeDistance * s, half_h),
                 (FIXTURE_HALF_SIZE_M, FIXTURE_HALF_SIZE_M, half_h),
                 quat=_quat_z(PLACE_AZIMUTH_RAD))


def _quat_z(angle: float) -> tuple[float, float, float, float]:
    return (math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2))


def _static_geom(body: mujoco.MjsBody, name: str, gtype, pos, size, quat=(1, 0, 0, 0)) -> None:
    geom = body.add_geom(name=name, type=gtype, pos=pos, size=list(size) + [0] * (3 - len(size)),
                         quat=quat)
    geom.contype, geom.conaffinity, geom.group = STATIC_CONTYPE, STATIC_CONAFFINITY, 2
    geom.rgba = (0.75, 0.75, 0.2, 1) if body.name == "guards" else (0.55, 0.58, 0.62, 1)


# Collision capsules per link, as (name, frame index, p0, p1, radius): endpoints are in
# the DH frame T_k at zero joint angles (so the geometry follows the published kinematics).
# Housings are cylinders about the joint axes (DH z); tubes run along the links.
LINK_GEOMS = {
    1: (("shoulder_column", 0, (0, 0, 0.09), (0, 0, arm.DH_D[0]), 0.06),
        ("shoulder_housing", 1, (0, 0, -0.065), (0, 0, 0.065), 0.06)),
    2: (("upper_arm_tube", None, "T1", "T2", 0.05),
        ("elbow_housing", 2, (0, 0, -0.06), (0, 0, 0.06), 0.055)),
    3: (("forearm_tube", None, "T2", "T3", 0.04),
        ("wrist_1_drive", 3, (0, 0, -0.045), (0, 0, 0.045), 0.047)),
    4: (("wrist_1_body", 3, (0, 0, 0.045), (0, 0, arm.DH_D[3]), 0.04),
        ("wrist_2_drive", 4, (0, 0, -0.045), (0, 0, 0.045), 0.045)),
    5: (("wrist_2_body", 4, (0, 0, 0.045), (0, 0, arm.DH_D[4]), 0.04),
        ("wrist_3_drive", 5, (0, 0, -0.045), (0, 0, 0.03), 0.045)),
    6: (("flange", 5, (0, 0, 0.03), (0, 0, arm.DH_D[5]), 0.04),),
}


def _add_arm(spec: mujoco.MjSpec, params: CellParams) -> mujoco.MjsBody:
    frames = arm.dh_frames(np.zeros(6))  # T_0..T_6 at zero joint angles, base frame
    base = spec.worldbody.add_body(name="base", pos=(0, 0, params.pedestalHeight))
    housing = base.add_geom(name="base_housing", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                            pos=(0, 0, 0.03), size=(0.075, 0.03, 0))
    housing.contype = housing.conaffinity = 0  # fixed to the pedestal; cannot collide
    parent, parent_frame = base, frames[0]
    for k in range(1, 7):
        frame = frames[k - 1]  # joint k turns about z of DH frame k-1
        rel = np.linalg.inv(parent_frame) @ frame
        body = parent.add_body(name=arm.LINK_NAMES[k - 1], pos=rel[:3, 3],
                               quat=_mat_to_quat(rel[:3, :3]))
        body.gravcomp = 1.0
        _set_link_inertia(body, k, frame, frames[k])
        lo, hi = arm.JOINT_LIMITS_RAD[k - 1]
        joint = body.add_joint(name=arm.JOINT_NAMES[k - 1], type=mujoco.mjtJoint.mjJNT_HINGE,
                               axis=(0, 0, 1), range=(lo, hi))
        joint.armature = arm.ARMATURE_KG_M2[k - 1]
        joint.actfrcrange = (-arm.TORQUE_LIMIT_NM[k - 1], arm.TORQUE_LIMIT_NM[k - 1])
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.actgravcomp = True
        for geom_def in LINK_GEOMS[k]:
            _add_link_geom(body, frame, frames, geom_def)
        parent, parent_frame = body, frame
    flange = np.linalg.inv(frames[5]) @ frames[6]
    gripper = parent.add_body(name="gripper", pos=flange[:3, 3], quat=_mat_to_quat(flange[:3, :3]))
    gripper.gravcomp = 1.0
    _add_gripper(gripper)
    return gripper


def _set_link_inertia(body: mujoco.MjsBody, k: int, frame: np.ndarray, dh_k: np.ndarray) -> None:
    com_world = dh_k @ np.array([*arm.LINK_COM_DH[k - 1], 1.0])
    body.ipos = (np.linalg.inv(frame) @ com_world)[:3]
    body.mass = arm.LINK_MASS_KG[k - 1]
    radius, length = arm.LINK_INERTIA_CYLINDER[k - 1]
    body.inertia = arm.cylinder_inertia(arm.LINK_MASS_KG[k - 1], radius, length)
    # the cylinder axis (local x of the inertial frame) along the link's DH x axis
    body.iquat = _mat_to_quat((np.linalg.inv(frame) @ dh_k)[:3, :3])
    body.explicitinertial = True


def _add_link_geom(body, frame, frames, geom_def) -> None:
    name, index, p0, p1, radius = geom_def
    if index is None:  # tube between two frame origins
        a, b = frames[int(p0[1])][:3, 3], frames[int(p1[1])][:3, 3]
    else:
        a = (frames[index] @ np.array([*p0, 1.0]))[:3]
        b = (frames[index] @ np.array([*p1, 1.0]))[:3]
    inv = np.linalg.inv(frame)
    a_local = (inv @ np.array([*a, 1.0]))[:3]
    b_local = (inv @ np.array([*b, 1.0]))[:3]
    geom = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=(radius, 0, 0),
                         fromto=np.concatenate([a_local, b_local]))
    _arm_geom(geom, (0.35, 0.55, 0.85, 1))


def _arm_geom(geom: mujoco.MjsGeom, rgba) -> None:
    geom.contype, geom.conaffinity, geom.group = ARM_CONTYPE, ARM_CONAFFINITY, 1
    geom.mass = 0.0  # link masses are explicit inertials; geoms only shape collisions
    geom.rgba = rgba


def _add_gripper(gripper: mujoco.MjsBody) -> None:
    gripper.mass = GRIPPER_MASS_KG
    gripper.ipos = (0, 0, 0.05)
    gripper.inertia = (0.0012, 0.0012, 0.0008)
    gripper.explicitinertial = True
    palm = gripper.add_geom(name="gripper_palm", type=mujoco.mjtGeom.mjGEOM_BOX,
                            pos=(0, 0, PALM_HALF[2]), size=PALM_HALF)
    _arm_geom(palm, (0.2, 0.2, 0.22, 1))
    tip = TCP_OFFSET_M + FINGER_TIP_BEYOND_TCP_M
    finger_half_len = (tip - 2 * PALM_HALF[2]) / 2
    for i, sx in enumerate((-1, 1)):
        finger = gripper.add_geom(
            name=f"gripper_finger_{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=(sx * (WORKPIECE_HALF_M + 0.008), 0, 2 * PALM_HALF[2] + finger_half_len),
            size=(0.006, 0.012, finger_half_len))
        _arm_geom(finger, (0.2, 0.2, 0.22, 1))
    carried = gripper.add_geom(name=CARRIED_GEOM, type=mujoco.mjtGeom.mjGEOM_BOX,
                               pos=(0, 0, TCP_OFFSET_M),
                               size=(WORKPIECE_HALF_M - CARRIED_INSET_M,) * 3)
    carried.contype = carried.conaffinity = 0  # tested geometrically while gripped
    carried.mass, carried.group, carried.rgba = 0.0, 3, (0.85, 0.45, 0.2, 0.0)
    gripper.add_site(name="tcp", pos=(0, 0, TCP_OFFSET_M), size=(0.005, 0, 0))
    gripper.add_site(name="tool_mount", pos=TOOL_MOUNT_POS, quat=TOOL_MOUNT_QUAT,
                     size=(0.004, 0, 0))


def _add_workpiece(spec: mujoco.MjSpec, params: CellParams) -> None:
    pick, _ = station_positions(params)
    body = spec.worldbody.add_body(name="workpiece", pos=pick, mocap=True)
    geom = body.add_geom(name="workpiece", type=mujoco.mjtGeom.mjGEOM_BOX,
                         size=(WORKPIECE_HALF_M,) * 3)
    geom.contype = geom.conaffinity = 0
    geom.group = 3
    geom.rgba = (0.85, 0.45, 0.2, 1)


def add_servos(spec: mujoco.MjSpec, kv: np.ndarray) -> None:
    """PD servos with velocity feed-forward on the six joints.

    Per joint a position actuator (``servo_<joint>``, stiffness ``SERVO_KP`` [N m/rad],
    control = desired angle) and a velocity actuator (``servo_vel_<joint>``, gain ``kv``
    [N m s/rad], control = desired joint velocity), so the torque is
    kp (q_d - q) + kv (qd_d - qd): the damping acts on the velocity error, not on the
    velocity itself, and the arm does not lag behind a moving setpoint. Each actuator is
    limited to the joint's torque limit and the joint's total actuator torque (including
    gravity compensation) is clamped to the same limit (``actfrcrange``).
    """
    for k, name in enumerate(arm.JOINT_NAMES):
        limit = (-arm.TORQUE_LIMIT_NM[k], arm.TORQUE_LIMIT_NM[k])
        pos = spec.add_actuator(name=f"servo_{name}", target=name,
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        pos.set_to_position(kp=arm.SERVO_KP[k], kv=0.0)
        pos.ctrlrange = arm.JOINT_LIMITS_RAD[k]
        pos.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        vel = spec.add_actuator(name=f"servo_vel_{name}", target=name,
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        vel.set_to_velocity(kv=float(kv[k]))
        vel.ctrlrange = (-arm.RATED_SPEED_RAD_S[k], arm.RATED_SPEED_RAD_S[k])
        vel.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        for act in (pos, vel):
            act.forcerange = limit
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE


def servo_controls(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Control rows for :func:`add_servos`' actuator order: per joint (angle, velocity)."""
    out = np.empty((len(q), 12))
    out[:, 0::2] = q
    out[:, 1::2] = qd
    return out


def critical_damping(model: mujoco.MjModel, q: np.ndarray) -> np.ndarray:
    """Servo damping [N m s/rad] for ``SERVO_DAMPING_RATIO`` at configuration ``q``.

    Uses the joint-space mass matrix diagonal (armature included) at ``q``:
    kv = 2 zeta sqrt(kp M_jj).
    """
    data = mujoco.MjData(model)
    data.qpos[:6] = q
    mujoco.mj_forward(model, data)
    dense = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, dense)
    diag = np.diag(dense)[:6]
    return 2 * arm.SERVO_DAMPING_RATIO * np.sqrt(np.asarray(arm.SERVO_KP) * diag)


def classify_geoms(model: mujoco.MjModel) -> tuple[tuple[int, ...], tuple[int, ...], dict]:
    """Split geoms into arm side and static scene by their collision bits."""
    arm_side, static, owner = [], [], {}
    for g in range(model.ngeom):
        if model.geom_contype[g] == ARM_CONTYPE and model.geom_conaffinity[g] == ARM_CONAFFINITY:
            arm_side.append(g)
        elif model.geom_contype[g] == STATIC_CONTYPE:
            static.append(g)
            body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g])
            owner[g] = "floor" if body == "world" else body
    return tuple(arm_side), tuple(static), owner


def _mat_to_quat(mat: np.ndarray) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(mat, dtype=float).reshape(9))
    return quat
