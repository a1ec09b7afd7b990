"""Newton cross-check wall time, cold and warm warp kernel cache (issue 4, not a timed test).

Usage: ``.venv/bin/python bench/bench_crosscheck.py [--keep-cache]``

Exports the demo-like cell (NEMA 17 bracket mounted) once, then runs
``newton_crosscheck`` in fresh processes: first with an empty kernel cache (cold: warp
compiles every kernel), then with the cache that run filled (warm), then a second call
inside the warm process (hot: kernels already loaded). Each line shows the cross-check's
own ``wallTimeS`` (Newton import included) and the whole process time, next to the
reference system's published 4.8 s for 33 configurations.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

REFERENCE_S = 4.8  # reference system, published: 33 configurations (DESIGN.md section 3)
CHILD = """
import json, sys, time
from pathlib import Path
from generator.crosscheck.newton import newton_crosscheck
cell, cache = Path(sys.argv[1]), Path(sys.argv[2])
first = newton_crosscheck(cell, cache_dir=cache, write=False)
t = time.perf_counter()
second = newton_crosscheck(cell, cache_dir=cache, write=False)
print(json.dumps({"first": first["wallTimeS"], "second": second["wallTimeS"],
                  "passed": first["passed"], "configurations": first["configurations"],
                  "worstPositionErrorMm": first["worstPositionErrorMm"],
                  "worstAngleErrorDeg": first["worstAngleErrorDeg"]}))
"""


def export_cell(folder: Path) -> None:
    """Write scene.xml, tool.stl and scene.usda of the demo-like cell into ``folder``."""
    from generator import cell, simulate, tool
    from generator.export import mjcf, usd
    from generator.spec import CellParams, ToolSpec

    params = CellParams(pickDistance=0.32, placeDistance=0.32, pickHeight=0.6, placeHeight=0.7,
                        pedestalHeight=1.0, guardClearance=0.30, speedFraction=0.75,
                        jitter=0.02)
    gated = tool.gate_tool(ToolSpec(cadReviewId="cr-0142-nema17-bracket", payloadKg=0.3),
                           "workcell-demo")
    prepared = simulate.prepare(params, lambda spec, body: tool.mount_tool(
        spec, body, gated, cell.TOOL_MOUNT_POS, cell.TOOL_MOUNT_QUAT))
    mjcf.write_mjcf(prepared, folder)
    usd.write_usd(prepared, folder)


def run_child(cell_dir: Path, cache: Path) -> tuple[dict, float]:
    """One fresh process: two cross-checks; returns their timings and the process time [s]."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(cell_dir), str(cache)], cwd=REPO,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1]), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-cache", action="store_true", help="keep the bench's cache")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-crosscheck-"))
    cache = REPO / ".cache" / "warp-bench"  # fresh, project-controlled, gitignored
    shutil.rmtree(cache, ignore_errors=True)
    try:
        export_cell(work)
        cold, cold_proc = run_child(work, cache)
        warm, warm_proc = run_child(work, cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not args.keep_cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"Newton cross-check, {cold['configurations']} configurations, CPU "
          f"(passed={cold['passed']}, worst {cold['worstPositionErrorMm'] * 1e3:.3f} um, "
          f"{cold['worstAngleErrorDeg']:.2e} deg)")
    print(f"  {'':28s}{'crosscheck [s]':>16s}{'process [s]':>14s}")
    print(f"  {'cold kernel cache':28s}{cold['first']:16.2f}{cold_proc:14.2f}")
    print(f"  {'warm kernel cache':28s}{warm['first']:16.2f}{warm_proc:14.2f}")
    print(f"  {'hot (same process, 2nd)':28s}{warm['second']:16.2f}{'':>14s}")
    print(f"  {'reference system (published)':28s}{REFERENCE_S:16.2f}")


if __name__ == "__main__":
    main()
