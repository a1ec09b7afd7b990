"""Plotly figures for the run page, prepared in Python as plain JSON.

Every value plotted is read from robot.json or timeseries.json; requirement lines come
from the recorded requirements and checks. Figures are built with plotly's graph objects
(so property names are validated) and converted to JSON here; the page's script only
hands them to the vendored plotly.js. Layouts use the "none" template, fixed sizes and
no random ids, so the same evidence gives the same bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from generator.site.discover import SIDES, CellEvidence
from generator.site.numbers import is_number

SIDE_COLOURS = {"reference": "#6b7a8f", "candidate": "#d9822b"}
LIMIT_COLOUR = "#c0392b"
JOINT_LABELS = tuple(f"joint {i}" for i in range(1, 7))
CYLINDER_SIDES = 16  # facets used to draw a cylinder geom in the 3D view
STATIC_ROLES = ("guard", "equipment")
ROLE_COLOURS = {"guard": "#e3c84a", "equipment": "#9aa3ad"}
GUARD_OPACITY = 0.08  # the guards surround the cell: keep them see-through
PLOT_HEIGHT_PX = 360
PLOT_3D_HEIGHT_PX = 560


def figure_json(fig: go.Figure) -> dict[str, Any]:
    """Plain-JSON form of a figure (plotly's own encoder, no uids)."""
    return json.loads(pio.to_json(fig, remove_uids=True, validate=True))


def _layout(title: str, xaxis: str, yaxis: str, categories: bool = True,
            **extra: Any) -> dict[str, Any]:
    x: dict[str, Any] = {"title": {"text": xaxis}}
    if categories:
        x["type"] = "category"
    return {"template": "none", "title": {"text": title}, "height": PLOT_HEIGHT_PX,
            "margin": {"l": 60, "r": 20, "t": 50, "b": 50}, "barmode": "group",
            "xaxis": x, "yaxis": {"title": {"text": yaxis}},
            "legend": {"orientation": "h", "y": -0.25}, **extra}


def _trials(cells: Mapping[str, CellEvidence], side: str) -> list[dict[str, Any]]:
    robot = cells[side].doc("robot") if side in cells else None
    trials = robot.get("trials") if robot else None
    return [t for t in trials if isinstance(t, dict)] if isinstance(trials, list) else []


def _per_seed(cells: Mapping[str, CellEvidence], key: str) -> list[go.Bar]:
    bars = []
    for side in SIDES:
        trials = _trials(cells, side)
        if not trials:
            continue
        bars.append(go.Bar(name=side, x=[f"seed {t.get('seed')}" for t in trials],
                           y=[t.get(key) if is_number(t.get(key)) else None for t in trials],
                           marker={"color": SIDE_COLOURS[side]}))
    return bars


def _hline(value: Any, label: str) -> list[dict[str, Any]]:
    if not is_number(value):
        return []
    return [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": value, "y1": value,
             "line": {"color": LIMIT_COLOUR, "dash": "dash", "width": 2},
             "label": {"text": label, "textposition": "end"}}]


def cycle_time_figure(cells: Mapping[str, CellEvidence], max_cycle_s: Any) -> dict[str, Any]:
    """Per-seed cycle time, reference next to candidate, against the requirement."""
    fig = go.Figure(_per_seed(cells, "cycleSeconds"), _layout(
        "Cycle time per seed (with settling)", "seed", "cycle time [s]",
        shapes=_hline(max_cycle_s, "maxCycleSeconds")))
    return figure_json(fig)


def tcp_error_figure(cells: Mapping[str, CellEvidence], tolerance_mm: Any) -> dict[str, Any]:
    """Per-seed worst TCP (IK) error against the reach tolerance (log scale)."""
    layout = _layout("Worst TCP error per seed", "seed", "TCP error [mm] (log)",
                     shapes=_hline(tolerance_mm, "reach tolerance"))
    layout["yaxis"]["type"] = "log"
    bars = _per_seed(cells, "ikErrorMm")
    values = [v for bar in bars for v in bar.y if is_number(v) and v > 0]
    if is_number(tolerance_mm) and tolerance_mm > 0:
        values.append(tolerance_mm)
    if values:  # log axes need an explicit range: bars start at the bottom of the axis
        layout["yaxis"]["range"] = [math.log10(min(values)) - 0.5,
                                    math.log10(max(values)) + 0.3]
    return figure_json(go.Figure(bars, layout))


def clearance_figure(cells: Mapping[str, CellEvidence]) -> dict[str, Any]:
    """Per-seed minimum signed clearance (negative: penetration)."""
    fig = go.Figure(_per_seed(cells, "minClearanceMm"), _layout(
        "Minimum clearance per seed (negative = contact)", "seed", "clearance [mm]",
        shapes=_hline(0.0, "contact")))
    return figure_json(fig)


def _series(cells: Mapping[str, CellEvidence]) -> dict[str, dict[str, Any]]:
    """``{"side:seed": series}`` from every timeseries.json."""
    out: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        doc = cells[side].doc("timeseries") if side in cells else None
        seeds = doc.get("seeds") if doc else None
        for series in seeds if isinstance(seeds, list) else []:
            if isinstance(series, dict) and "seed" in series:
                out[f"{side}:{series['seed']}"] = series
    return out


def _joint_traces(times: Sequence[Any], rows: Sequence[Sequence[Any]]) -> list[go.Scatter]:
    columns = list(zip(*rows, strict=False)) if rows else []
    return [go.Scatter(x=list(times), y=list(col), mode="lines", name=JOINT_LABELS[i])
            for i, col in enumerate(columns[:len(JOINT_LABELS)])]


def joint_figures(cells: Mapping[str, CellEvidence]) -> dict[str, dict[str, dict[str, Any]]]:
    """Joint angles and actuator torques over time, one figure pair per side and seed."""
    angles, torques = {}, {}
    for key, series in _series(cells).items():
        times = series.get("timeS") or []
        side, seed = key.split(":", 1)
        angles[key] = figure_json(go.Figure(
            _joint_traces(times, series.get("qRad") or []),
            _layout(f"Joint angles, {side}, seed {seed}", "time [s]", "angle [rad]",
                    categories=False)))
        torques[key] = figure_json(go.Figure(
            _joint_traces(times, series.get("torqueNm") or []),
            _layout(f"Actuator torques, {side}, seed {seed}", "time [s]", "torque [N m]",
                    categories=False)))
    return {"angles": angles, "torques": torques}


def _box_vertices(pos: Sequence[float], mat: Sequence[float],
                  half: Sequence[float]) -> list[tuple[float, float, float]]:
    corners = [(sx * half[0], sy * half[1], sz * half[2])
               for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    return [_transform(pos, mat, c) for c in corners]


def _cylinder_vertices(pos: Sequence[float], mat: Sequence[float], radius: float,
                       half_height: float) -> list[tuple[float, float, float]]:
    ring = [(radius * math.cos(2 * math.pi * k / CYLINDER_SIDES),
             radius * math.sin(2 * math.pi * k / CYLINDER_SIDES)) for k in range(CYLINDER_SIDES)]
    return [_transform(pos, mat, (x, y, z)) for z in (-half_height, half_height)
            for x, y in ring]


def _transform(pos: Sequence[float], mat: Sequence[float],
               local: Sequence[float]) -> tuple[float, float, float]:
    """World point of ``local`` for a geom at ``pos`` with row-major rotation ``mat``."""
    return tuple(pos[r] + sum(mat[3 * r + c] * local[c] for c in range(3))  # type: ignore
                 for r in range(3))


def _geom_mesh(geom: Mapping[str, Any]) -> go.Mesh3d | None:
    pos, mat, size = geom.get("pos"), geom.get("mat"), geom.get("size")
    if not (isinstance(pos, list) and isinstance(mat, list) and isinstance(size, list)
            and len(pos) == 3 and len(mat) == 9 and len(size) >= 2):
        return None
    if geom.get("type") == "box" and len(size) == 3:
        points = _box_vertices(pos, mat, size)
    elif geom.get("type") == "cylinder":
        points = _cylinder_vertices(pos, mat, size[0], size[1])
    else:
        return None
    xs, ys, zs = zip(*points, strict=True)
    opacity = GUARD_OPACITY if geom.get("role") == "guard" else 0.35
    return go.Mesh3d(x=xs, y=ys, z=zs, alphahull=0, opacity=opacity, name=str(geom.get("name")),
                     color=ROLE_COLOURS.get(str(geom.get("role")), "#9aa3ad"),
                     hovertext=str(geom.get("name")), hoverinfo="text", showlegend=False)


def _arm_lines(geoms: Sequence[Mapping[str, Any]]) -> go.Scatter3d | None:
    """Arm capsules at the start pose as line segments (NaN-free: None separates)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    zs: list[float | None] = []
    for geom in geoms:
        pos, mat, size = geom.get("pos"), geom.get("mat"), geom.get("size")
        if geom.get("role") != "arm" or geom.get("type") != "capsule" or not (
                isinstance(pos, list) and isinstance(mat, list) and isinstance(size, list)):
            continue
        for end in (-1, 1):
            x, y, z = _transform(pos, mat, (0.0, 0.0, end * size[1]))
            xs.append(x)
            ys.append(y)
            zs.append(z)
        xs.append(None)
        ys.append(None)
        zs.append(None)
    if not xs:
        return None
    return go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", name="arm at start pose",
                        line={"color": "#2c6fbb", "width": 8})


def cell_figures(cells: Mapping[str, CellEvidence]) -> dict[str, dict[str, Any]]:
    """3D view per side and seed: static scene, arm at its start pose, TCP path, contacts."""
    series = _series(cells)
    out = {}
    for side in SIDES:
        robot = cells[side].doc("robot") if side in cells else None
        if robot is None:
            continue
        geoms = robot.get("model", "geoms") or []
        scene = [m for g in geoms if isinstance(g, dict) and g.get("role") in STATIC_ROLES
                 for m in [_geom_mesh(g)] if m is not None]
        arm = _arm_lines([g for g in geoms if isinstance(g, dict)])
        for trial in _trials(cells, side):
            key = f"{side}:{trial.get('seed')}"
            traces: list[Any] = list(scene) + ([arm] if arm else [])
            traces += _path_traces(series.get(key), trial)
            out[key] = figure_json(go.Figure(traces, {
                "template": "none", "height": PLOT_3D_HEIGHT_PX,
                "title": {"text": f"Cell, {side}, seed {trial.get('seed')}"},
                "margin": {"l": 0, "r": 0, "t": 40, "b": 0},
                "legend": {"orientation": "h"},
                "scene": {"aspectmode": "data", "xaxis": {"title": {"text": "x [m]"}},
                          "yaxis": {"title": {"text": "y [m]"}},
                          "zaxis": {"title": {"text": "z [m]"}},
                          "camera": {"eye": {"x": 1.6, "y": -1.6, "z": 1.0}}}}))
    return out


def _path_traces(series: Mapping[str, Any] | None, trial: Mapping[str, Any]) -> list[Any]:
    traces: list[Any] = []
    tcp = series.get("tcpM") if series else None
    if isinstance(tcp, list) and tcp:
        xs, ys, zs = zip(*tcp, strict=False)
        traces.append(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", name="TCP path",
                                   line={"color": "#1b9e77", "width": 4}))
    targets = [t for t in trial.get("targets") or [] if isinstance(t, dict)
               and isinstance(t.get("target"), list) and len(t["target"]) == 3]
    if targets:
        xs, ys, zs = zip(*(t["target"] for t in targets), strict=True)
        traces.append(go.Scatter3d(x=xs, y=ys, z=zs, mode="markers", name="IK targets",
                                   text=[str(t.get("name")) for t in targets],
                                   marker={"size": 4, "color": "#333333"}))
    contacts = [c for c in trial.get("collisions") or [] if isinstance(c, dict)
                and isinstance(c.get("pointM"), list) and len(c["pointM"]) == 3]
    if contacts:
        xs, ys, zs = zip(*(c["pointM"] for c in contacts), strict=True)
        traces.append(go.Scatter3d(
            x=xs, y=ys, z=zs, mode="markers", name="contacts",
            text=[" / ".join(map(str, c.get("geoms") or [])) for c in contacts],
            marker={"size": 7, "color": LIMIT_COLOUR, "symbol": "x"}))
    return traces
