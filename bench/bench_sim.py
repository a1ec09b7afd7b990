"""Simulation loop benchmark: prints ratios measured in this one run.

For each demo cell (with the accepted bracket mounted): seconds per seed (IK, planning,
dynamics, clearance), simulated steps per second of our loop, and the ratio of our
loop's step rate to a bare ``mj_step`` loop over the same compiled model, the same
number of steps and the same controls. Then the seeds again across processes, checked
identical to the serial results.

    .venv/bin/python bench/bench_sim.py
"""

from __future__ import annotations

import os
import time

import mujoco
import numpy as np

from generator import arm, cell, demo, pipeline, simulate, trajectory
from generator.evidence.canonical import dumps
from generator.tool import gate_tool

REPEATS = 9  # best of: the machine is shared, the minimum is the least disturbed run


def bare_loop(model, controls: np.ndarray, n_steps: int) -> float:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    n_traj = len(controls)
    t0 = time.process_time()
    for i in range(n_traj):
        data.ctrl[:] = controls[i]
        mujoco.mj_step(model, data)
    for _ in range(n_steps - n_traj):  # settling: the last control held
        mujoco.mj_step(model, data)
    return time.process_time() - t0


def bare_loop_no_ctrl(model, n_steps: int) -> float:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    t0 = time.process_time()
    for _ in range(n_steps):
        mujoco.mj_step(model, data)
    return time.process_time() - t0


def main() -> None:
    specs = demo.iteration_specs()
    cells = [("reference", specs[0].reference), ("iteration-1 candidate", specs[0].candidate),
             ("iteration-2 candidate", specs[1].candidate)]
    gated = gate_tool(specs[0].tool, specs[0].project)
    req = pipeline._req(specs[0])
    seeds = list(specs[0].seeds)
    print(f"loop timings: CPU time of this process, best of {REPEATS}; parallel: wall time")
    print(f"{'cell':24s} {'s/seed':>7s} {'steps/s ours':>13s} {'steps/s bare':>13s} "
          f"{'ratio':>6s} {'ratio vs bare mj_step only':>27s}")
    for name, params in cells:
        prepared = pipeline.prepare_side(params, gated)
        t0 = time.process_time()
        for seed in seeds:
            simulate.run_seed(prepared, seed, req)
        per_seed = (time.process_time() - t0) / len(seeds)
        # loop-only timing on seed 0
        targets = simulate.targets_for(prepared, 0)
        waypoints, _ = simulate.solve_targets(prepared, targets)
        dt = prepared.cell.model.opt.timestep
        segs = trajectory.plan(waypoints, params.speedFraction * np.asarray(
            arm.RATED_SPEED_RAD_S), dt)
        setpoints, velocities, index = trajectory.sample_with_velocity(segs, dt)
        controls = cell.servo_controls(setpoints, velocities)
        names = [s.name for s in segs]
        best_ours, best_bare, best_raw, n = np.inf, np.inf, np.inf, 0
        for _ in range(REPEATS):
            t0 = time.process_time()
            qlog, *_ = simulate.simulate(prepared, setpoints, velocities, index, names)
            best_ours = min(best_ours, time.process_time() - t0)
            n = len(qlog)
            best_bare = min(best_bare, bare_loop(prepared.cell.model, controls, n))
            best_raw = min(best_raw, bare_loop_no_ctrl(prepared.cell.model, n))
        print(f"{name:24s} {per_seed:7.3f} {n / best_ours:13.0f} {n / best_bare:13.0f} "
              f"{best_bare / best_ours:6.2f} {best_raw / best_ours:27.2f}")
    cores = os.cpu_count() or 1
    params = specs[0].candidate
    prepared = pipeline.prepare_side(params, gated)
    t0 = time.perf_counter()
    serial = pipeline.run_trials(params, gated, prepared, seeds, req, workers=1)
    t_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    parallel = pipeline.run_trials(params, gated, prepared, seeds, req, workers=cores)
    t_par = time.perf_counter() - t0
    identical = all(dumps(a) == dumps(b) for a, b in zip(serial, parallel, strict=True))
    print(f"\n{len(seeds)} seeds: serial {t_serial:.2f} s, {cores} processes {t_par:.2f} s "
          f"(x{t_serial / t_par:.2f}); per-seed records identical: {identical}")


if __name__ == "__main__":
    main()
