"""OpenUSD export: ``scene.usda`` (Z up, metres, kilograms), validated by every UsdValidation validator.

Layout (flat: rigid bodies are never nested, so no ``resetXformStack`` is needed)::

    /Workcell                 Xform, default prim, PhysicsArticulationRootAPI
      PhysicsScene            gravity -Z, 9.81 m/s^2
      Static/<body>/<geom>    fixed scene (pedestal, guards, conveyor, fixture, floor):
                              colliders only, no rigid body
      Props/<body>/<geom>     mocap bodies (the workpiece): visual geometry at the
                              keyframe-free initial pose, no rigid body (see below)
      <body>/<geom>           every other MuJoCo body: RigidBodyAPI + MassAPI (mass,
                              centerOfMass, diagonalInertia, principalAxes from the compiled
                              model)
      Joints/<name>           base welded to the world, six revolute joints (limits in
                              degrees), gripper and the part on it as fixed joints

Body transforms are the model's body poses at zero joint angles; each joint's frames come
from the model constants (``body_pos``/``body_quat`` of the child in its parent, and the
joint's own position and axis), i.e. the zero-angle frames. Mesh colliders use the
``convexHull`` approximation (MuJoCo collides every mesh as its convex hull too).

The workpiece is a MuJoCo mocap body: posed by the script, without joint, collision or
influence on the arm. As a USD rigid body (kinematic or not) Newton gives it a floating base
and a second articulation, so it is exported as a prop without RigidBodyAPI; it is the only
MuJoCo body that is not a USD rigid body, and the Newton cross-check lists it as such.

:class:`UsdFaults` re-creates the two export bugs the reference system's first Newton run
found (DESIGN.md section 3) so tests can show the cross-check catches what validators miss.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdValidation, Vt

from generator.rules import usd_reasons

USD_FILE = "scene.usda"
ROOT = "/Workcell"
STATIC = f"{ROOT}/Static"
JOINTS = f"{ROOT}/Joints"
PROPS = f"{ROOT}/Props"
GRAVITY_M_S2 = 9.81  # MuJoCo's default |gravity|, also the model's option


@dataclass(frozen=True)
class UsdFaults:
    """Deliberate export bugs, for tests only (the defaults write a correct file).

    Attributes:
        articulation_root_not_ancestor: put ArticulationRootAPI on ``/Workcell/Static``, a prim
            that is not an ancestor of any rigid body, instead of on ``/Workcell``.
        joint_frames_at_q: joint angles [rad]; when set, each joint's parent-side frame is
            taken from the body poses at this configuration (e.g. the pick pose) instead of
            the zero-angle model constants.
    """

    articulation_root_not_ancestor: bool = False
    joint_frames_at_q: tuple[float, ...] | None = None


@dataclass(frozen=True)
class _Pose:
    pos: np.ndarray  # [m]
    quat: np.ndarray  # (w, x, y, z)


def write_usd(prepared: Any, out_dir: Path, faults: UsdFaults = UsdFaults()) -> dict[str, Any]:
    """Write ``scene.usda`` into ``out_dir``, reopen it and validate it.

    Args:
        prepared: a ``simulate.PreparedCell`` (its compiled ``cell.model`` is exported).
        out_dir: the cell folder (created if missing).
        faults: injected bugs for tests; leave the default in production.

    Returns:
        The ``exports.usd`` record for robot.json: file, sha256, counts, validator names,
        ``validatorCount``, sorted ``findings``, ``passed`` and ``reasons``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = prepared.cell.model
    stage = build_stage(model, faults)  # keep the stage alive while its layer is read
    text = stage.GetRootLayer().ExportToString()
    path = out_dir / USD_FILE
    path.write_text(text, encoding="utf-8")
    record = validate_usd(path)
    return {"file": USD_FILE, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "upAxis": "Z", "metersPerUnit": 1.0, "kilogramsPerUnit": 1.0,
            "defaultPrim": ROOT, "jointFrames": "model constants at zero joint angle",
            **record}


# --------------------------------------------------------------------------- validation


def validate_usd(path: Path) -> dict[str, Any]:
    """Reopen ``path`` and run every registered UsdValidation validator on it.

    Any error or warning fails; so does a count of non-fixed joints other than six.

    Returns:
        ``validators`` (sorted names), ``validatorCount``, ``findings`` (sorted
        ``"TYPE validator: message [sites]"`` strings, infos included), ``errors``,
        ``warnings``, ``revoluteJoints``, ``nonFixedJoints``, ``fixedJoints``,
        ``rigidBodies``, ``passed``, ``reasons``.
    """
    stage = Usd.Stage.Open(str(path))
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(stage)
    findings, bad = [], {"Error": 0, "Warn": 0}
    for error in errors:
        if error.HasNoError():
            continue
        kind = str(error.GetType()).rsplit(".", 1)[-1]
        bad[kind] = bad.get(kind, 0) + 1
        sites = ",".join(sorted(str(s.GetPrim().GetPath()) if s.GetPrim() else "" for s in
                                error.GetSites()))
        validator = error.GetValidator()
        name = validator.GetMetadata().name if validator else error.GetName()
        findings.append(f"{kind} {name}: {error.GetMessage()} [{sites}]")
    record = {"validators": sorted(v.GetMetadata().name for v in validators),
              "validatorCount": len(validators), "findings": sorted(findings),
              "errors": bad["Error"], "warnings": bad["Warn"], **_joint_counts(stage)}
    reasons = usd_reasons(record)
    return record | {"passed": not reasons, "reasons": reasons}


def _joint_counts(stage: Usd.Stage) -> dict[str, int]:
    revolute = fixed = other = bodies = 0
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            bodies += 1
        if prim.IsA(UsdPhysics.RevoluteJoint):
            revolute += 1
        elif prim.IsA(UsdPhysics.FixedJoint):
            fixed += 1
        elif prim.IsA(UsdPhysics.Joint):
            other += 1
    return {"revoluteJoints": revolute, "fixedJoints": fixed, "nonFixedJoints": revolute + other,
            "rigidBodies": bodies}


# --------------------------------------------------------------------------- stage


def build_stage(model: mujoco.MjModel, faults: UsdFaults = UsdFaults()) -> Usd.Stage:
    """The in-memory USD stage of ``model`` at zero joint angles (see module docstring)."""
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    root = UsdGeom.Xform.Define(stage, ROOT)
    stage.SetDefaultPrim(root.GetPrim())
    scene = UsdPhysics.Scene.Define(stage, f"{ROOT}/PhysicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0.0, 0.0, -1.0))
    scene.CreateGravityMagnitudeAttr(float(np.linalg.norm(model.opt.gravity)))
    UsdGeom.Scope.Define(stage, STATIC)
    UsdGeom.Scope.Define(stage, JOINTS)
    zero = _world_poses(model, np.zeros(model.nq))
    frames = zero if faults.joint_frames_at_q is None else _world_poses(
        model, _qpos_with_arm(model, faults.joint_frames_at_q))
    UsdGeom.Scope.Define(stage, PROPS)
    for body in range(model.nbody):
        if _is_static(model, body) or _is_prop(model, body):
            _static_body(stage, model, body)
        else:
            _rigid_body(stage, model, body, zero[body])
            _body_joint(stage, model, body, frames)
    holder = STATIC if faults.articulation_root_not_ancestor else ROOT
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(holder))
    return stage


def _qpos_with_arm(model: mujoco.MjModel, q: tuple[float, ...]) -> np.ndarray:
    qpos = np.zeros(model.nq)
    qpos[: len(q)] = q
    return qpos


def _world_poses(model: mujoco.MjModel, qpos: np.ndarray) -> list[_Pose]:
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    return [_Pose(data.xpos[b].copy(), data.xquat[b].copy()) for b in range(model.nbody)]


def _is_prop(model: mujoco.MjModel, body: int) -> bool:
    """A mocap body (the workpiece): posed by the script, no joint, no collision."""
    return bool(model.body_mocapid[body] >= 0)


def _is_static(model: mujoco.MjModel, body: int) -> bool:
    """World, or welded to the world with no moving body below it (the fixed scene)."""
    if body == 0:
        return True
    if _is_prop(model, body) or model.body_parentid[body] != 0:
        return False
    subtree = [b for b in range(model.nbody) if _ancestor(model, body, b)]
    return all(model.body_jntnum[b] == 0 for b in subtree)


def _ancestor(model: mujoco.MjModel, anc: int, body: int) -> bool:
    while body != 0:
        if body == anc:
            return True
        body = int(model.body_parentid[body])
    return anc == 0


def _name(model: mujoco.MjModel, obj: mujoco.mjtObj, index: int, prefix: str) -> str:
    name = mujoco.mj_id2name(model, obj, index)
    return name if name else f"{prefix}_{index}"


def _body_path(model: mujoco.MjModel, body: int) -> str:
    name = _name(model, mujoco.mjtObj.mjOBJ_BODY, body, "body")
    if _is_prop(model, body):
        return f"{PROPS}/{name}"
    return f"{STATIC}/{name}" if _is_static(model, body) else f"{ROOT}/{name}"


def _static_body(stage: Usd.Stage, model: mujoco.MjModel, body: int) -> None:
    if not any(model.geom_bodyid == body):
        return
    xform = UsdGeom.Xform.Define(stage, _body_path(model, body))
    _set_pose(xform, _Pose(model.body_pos[body], model.body_quat[body]))
    _geoms(stage, model, body)


def _rigid_body(stage: Usd.Stage, model: mujoco.MjModel, body: int, pose: _Pose) -> None:
    xform = UsdGeom.Xform.Define(stage, _body_path(model, body))
    _set_pose(xform, pose)
    prim = xform.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    mass = UsdPhysics.MassAPI.Apply(prim)
    mass.CreateMassAttr(float(model.body_mass[body]))
    mass.CreateCenterOfMassAttr(Gf.Vec3f(*map(float, model.body_ipos[body])))
    mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*map(float, model.body_inertia[body])))
    mass.CreatePrincipalAxesAttr(Gf.Quatf(*map(float, model.body_iquat[body])))
    _geoms(stage, model, body)


def _body_joint(stage: Usd.Stage, model: mujoco.MjModel, body: int, frames: list[_Pose]) -> None:
    """The joint that holds ``body``: revolute for a hinge, fixed for a weld."""
    parent = int(model.body_parentid[body])
    name = _name(model, mujoco.mjtObj.mjOBJ_BODY, body, "body")
    if model.body_jntnum[body] == 0:
        joint = UsdPhysics.FixedJoint.Define(stage, f"{JOINTS}/{name}_weld")
        local1 = _Pose(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
    elif model.body_jntnum[body] == 1 and model.jnt_type[model.body_jntadr[body]] == \
            mujoco.mjtJoint.mjJNT_HINGE:
        jid = int(model.body_jntadr[body])
        jname = _name(model, mujoco.mjtObj.mjOBJ_JOINT, jid, "joint")
        joint = UsdPhysics.RevoluteJoint.Define(stage, f"{JOINTS}/{jname}")
        joint.CreateAxisAttr(UsdPhysics.Tokens.z)
        low, high = model.jnt_range[jid]
        joint.CreateLowerLimitAttr(math.degrees(low))
        joint.CreateUpperLimitAttr(math.degrees(high))
        local1 = _Pose(model.jnt_pos[jid].copy(), _z_to(model.jnt_axis[jid]))
    else:
        raise ValueError(f"body {name!r}: only hinge and welded bodies are exported to USD")
    if parent != 0:
        joint.CreateBody0Rel().SetTargets([Sdf.Path(_body_path(model, parent))])
    joint.CreateBody1Rel().SetTargets([Sdf.Path(_body_path(model, body))])
    rel = _relative(frames[parent], frames[body])  # child frame in parent frame
    local0 = _compose(rel, local1)
    joint.CreateLocalPos0Attr(Gf.Vec3f(*map(float, local0.pos)))
    joint.CreateLocalRot0Attr(Gf.Quatf(*map(float, local0.quat)))
    joint.CreateLocalPos1Attr(Gf.Vec3f(*map(float, local1.pos)))
    joint.CreateLocalRot1Attr(Gf.Quatf(*map(float, local1.quat)))


def _z_to(axis: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) rotating +Z onto ``axis`` (USD joints turn about their Z)."""
    quat = np.zeros(4)
    mujoco.mju_quatZ2Vec(quat, np.asarray(axis, dtype=float))
    return quat


def _relative(parent: _Pose, child: _Pose) -> _Pose:
    inv_q = np.zeros(4)
    mujoco.mju_negQuat(inv_q, parent.quat)
    pos, quat = np.zeros(3), np.zeros(4)
    mujoco.mju_rotVecQuat(pos, child.pos - parent.pos, inv_q)
    mujoco.mju_mulQuat(quat, inv_q, child.quat)
    return _Pose(pos, quat)


def _compose(a: _Pose, b: _Pose) -> _Pose:
    pos, quat = np.zeros(3), np.zeros(4)
    mujoco.mju_rotVecQuat(pos, b.pos, a.quat)
    mujoco.mju_mulQuat(quat, a.quat, b.quat)
    return _Pose(a.pos + pos, quat)


def _set_pose(xform: UsdGeom.Xformable, pose: _Pose, scale: np.ndarray | None = None) -> None:
    xform.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*map(float, pose.pos)))
    xform.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(*map(float, pose.quat)))
    if scale is not None:
        xform.AddScaleOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*map(float, scale)))


# --------------------------------------------------------------------------- geoms


def _geoms(stage: Usd.Stage, model: mujoco.MjModel, body: int) -> None:
    for gid in np.flatnonzero(model.geom_bodyid == body):
        _geom(stage, model, int(gid), _body_path(model, body))


def _geom(stage: Usd.Stage, model: mujoco.MjModel, gid: int, parent: str) -> None:
    path = f"{parent}/{_name(model, mujoco.mjtObj.mjOBJ_GEOM, gid, 'geom')}"
    gtype, size = mujoco.mjtGeom(int(model.geom_type[gid])), model.geom_size[gid]
    pose = _Pose(model.geom_pos[gid], model.geom_quat[gid])
    scale = None
    if gtype == mujoco.mjtGeom.mjGEOM_BOX:
        gprim = UsdGeom.Cube.Define(stage, path)
        gprim.CreateSizeAttr(2.0)
        scale = size[:3]
    elif gtype == mujoco.mjtGeom.mjGEOM_PLANE:
        gprim = UsdGeom.Plane.Define(stage, path)
        gprim.CreateAxisAttr(UsdGeom.Tokens.z)
        gprim.CreateWidthAttr(2.0 * float(size[0]))
        gprim.CreateLengthAttr(2.0 * float(size[1]))
    elif gtype in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE):
        cls = UsdGeom.Cylinder if gtype == mujoco.mjtGeom.mjGEOM_CYLINDER else UsdGeom.Capsule
        gprim = cls.Define(stage, path)
        gprim.CreateAxisAttr(UsdGeom.Tokens.z)
        gprim.CreateRadiusAttr(float(size[0]))
        gprim.CreateHeightAttr(2.0 * float(size[1]))
    elif gtype == mujoco.mjtGeom.mjGEOM_SPHERE:
        gprim = UsdGeom.Sphere.Define(stage, path)
        gprim.CreateRadiusAttr(float(size[0]))
    elif gtype == mujoco.mjtGeom.mjGEOM_MESH:
        gprim = _mesh(stage, model, gid, path)
    else:
        raise ValueError(f"geom {path}: type {gtype.name} is not exported")
    _set_pose(gprim, pose, scale)
    rgba = model.geom_rgba[gid]
    gprim.CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, rgba[:3]))]))
    if model.geom_contype[gid] or model.geom_conaffinity[gid]:
        UsdPhysics.CollisionAPI.Apply(gprim.GetPrim())
        if gtype == mujoco.mjtGeom.mjGEOM_MESH:
            mesh_api = UsdPhysics.MeshCollisionAPI.Apply(gprim.GetPrim())
            mesh_api.CreateApproximationAttr(UsdPhysics.Tokens.convexHull)


def _mesh(stage: Usd.Stage, model: mujoco.MjModel, gid: int, path: str) -> UsdGeom.Mesh:
    """Mesh in MuJoCo's recentred mesh frame (the compiled geom pose includes the offset)."""
    mid = int(model.geom_dataid[gid])
    v0, nv = int(model.mesh_vertadr[mid]), int(model.mesh_vertnum[mid])
    f0, nf = int(model.mesh_faceadr[mid]), int(model.mesh_facenum[mid])
    verts = model.mesh_vert[v0 : v0 + nv].astype(float)
    faces = model.mesh_face[f0 : f0 + nf].astype(int)
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, v)) for v in verts]))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray([3] * nf))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray([int(i) for i in faces.ravel()]))
    mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    mesh.CreateExtentAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, lo)), Gf.Vec3f(*map(float, hi))]))
    return mesh
