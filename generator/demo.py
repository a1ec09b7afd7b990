"""The bundled demo: the design-revision story of DESIGN.md section 6, with our numbers.

Iteration 1 pulls the guards in to 0.12 m and runs at 75 % speed: rejected (the arm
meets a guard during the motion). Iteration 2 changes one thing, guardClearance 0.12 ->
0.30. The reference cell (50 % speed, guards at 0.40 m) is the same in both runs. The
cell geometry (a high pedestal reaching down to a low conveyor close to the robot) makes
the elbow stand out beyond the pick station, which is why the guard distance matters.
Nothing here is special-cased: each iteration is an ordinary ``evidence run`` spec, and
demo.json only compares what the runs recorded.
"""

from __future__ import annotations

from pathlib import Path

from generator.evidence.atomic import finalize_run, staged_run
from generator.evidence.canonical import write_json
from generator.spec import RunSpec, parse_spec

DEMO_SCHEMA = "workcell-evidence/demo/v1"
PROJECT = "workcell-demo"
TOOL = {"cadReviewId": "cr-0142-nema17-bracket", "payloadKg": 0.28}
REQUIREMENTS = {"maxCycleSeconds": 5.0, "minSuccessRate": 0.9}
REFERENCE = {"pickDistance": 0.32, "placeDistance": 0.32, "pickHeight": 0.6,
             "placeHeight": 0.7, "pedestalHeight": 1.0, "guardClearance": 0.40,
             "speedFraction": 0.5, "jitter": 0.02}
CANDIDATES = (
    ("Faster cell, guards pulled in", REFERENCE | {"speedFraction": 0.75,
                                                    "guardClearance": 0.12}),
    ("Revision: guards back out to 0.30 m", REFERENCE | {"speedFraction": 0.75,
                                                          "guardClearance": 0.30}),
)


def iteration_specs() -> list[RunSpec]:
    return [parse_spec({
        "title": f"Demo iteration {i}: {title}",
        "notes": "Bundled demo (DESIGN.md section 6). Target cycle tightened to 5 s.",
        "project": PROJECT, "reference": REFERENCE, "candidate": candidate,
        "requirements": REQUIREMENTS, "tool": TOOL, "seeds": list(range(10)),
    }) for i, (title, candidate) in enumerate(CANDIDATES, start=1)]


def parameter_diff(before: dict, after: dict) -> list[dict]:
    return [{"field": k, "from": before[k], "to": after[k]}
            for k in sorted(before) if before[k] != after[k]]


def requirements_relaxed(before: dict, after: dict) -> bool:
    """True when the later requirements accept anything the earlier ones rejected."""
    return (after["maxCycleSeconds"] > before["maxCycleSeconds"]
            or after["minSuccessRate"] < before["minSuccessRate"])


def slowest(cell_summary: dict) -> float | None:
    for check in cell_summary["checks"]:
        if check["id"] == "cycle-time":
            return check["observed"]
    return None


def iteration_record(index: int, folder: str, run: dict, previous: dict | None,
                     trials: dict[str, list[dict]]) -> dict:
    """demo.json's record of one iteration, from its run.json, the previous iteration's
    run.json (None for the first) and the trials of each side (robot.json ``trials``).
    ``evidence verify`` rebuilds it from the iteration folders with this very function."""
    spec = run["spec"]
    before_cell = spec["reference"] if previous is None else previous["spec"]["candidate"]
    before_req = spec["requirements"] if previous is None else previous["spec"]["requirements"]
    ref_cycle = slowest(run["cells"]["reference"])
    cand_cycle = slowest(run["cells"]["candidate"])
    speed_up = None if not ref_cycle or cand_cycle is None else (ref_cycle - cand_cycle) / ref_cycle
    candidate_trials = trials["candidate"]
    return {
        "index": index,
        "title": run["title"],
        "runFolder": folder,
        "specDigest": run["specDigest"],
        "verdict": run["verdict"],
        "reasons": run["reasons"],
        "comparedWith": "reference" if previous is None else f"iteration-{index - 1}",
        "parameterDiff": parameter_diff(before_cell, spec["candidate"]),
        "requirementsRelaxed": requirements_relaxed(before_req, spec["requirements"]),
        "referenceSlowestCycleS": ref_cycle,
        "candidateSlowestCycleS": cand_cycle,
        "speedUp": speed_up,
        "referenceSuccesses": sum(t["success"] for t in trials["reference"]),
        "candidateSuccesses": sum(t["success"] for t in candidate_trials),
        "candidateCollidingSeeds": sum(not t["collisionFree"] for t in candidate_trials),
        "seeds": len(candidate_trials),
        "firstContacts": [{"seed": t["seed"], **t["collisions"][0]}
                          for t in candidate_trials if t["collisions"]],
    }


def run_demo(out_dir: Path, sign_key: Path | None = None, overwrite: bool = False,
             workers: int | None = None, progress=None) -> dict:
    """Run every iteration, then write demo.json and the iteration run folders atomically."""
    from generator import pipeline  # the simulation stack; demo records above stay light
    from generator.evidence.atomic import RunExistsError
    from generator.evidence.sign import load_private_key

    key = load_private_key(sign_key) if sign_key is not None else None  # before computing
    out_dir = Path(out_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise RunExistsError(f"{out_dir} exists and is not empty; pass --overwrite")
    computed, reuse = [], {}
    for spec in iteration_specs():
        if progress:
            print(f"{spec.title}", flush=True)
        computed.append((spec, *pipeline.compute(spec, workers=workers, progress=progress,
                                                 reuse=reuse)))
    with staged_run(out_dir, sign_key=key, overwrite=overwrite) as tmp:
        records, previous = [], None
        for index, (spec, gated, sides) in enumerate(computed, start=1):
            folder = f"iteration-{index}"
            run = pipeline.write_run(tmp / folder, spec, gated, sides,
                                     ["evidence", "demo"])
            finalize_run(tmp / folder, key)
            records.append(iteration_record(index, folder, run, previous,
                                            {side: r.trials for side, r in sides.items()}))
            previous = run
        demo = {"schema": DEMO_SCHEMA, "title": "Design-revision demo",
                "requirements": REQUIREMENTS, "reference": REFERENCE,
                "iterations": records}
        write_json(tmp / "demo.json", demo)
    return demo
