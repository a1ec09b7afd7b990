"""Canonical JSON: the one way evidence JSON is written, so equal content hashes equal.

Rules: UTF-8, keys sorted, two-space indent, a trailing newline, no NaN/Infinity
(they are not JSON), floats in Python's shortest round-trip form (``repr``), which
is deterministic across platforms for IEEE-754 doubles. numpy scalars and arrays
are converted to Python numbers and lists first.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np


def to_jsonable(obj: Any) -> Any:
    """Convert numpy values, dataclasses, enums, tuples and paths to plain JSON types."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        value = float(obj)
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} cannot be written as evidence")
        return value
    if isinstance(obj, enum.Enum):
        return obj.value
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Path):
        raise TypeError("paths are machine-specific and never written into evidence")
    return obj


def dumps(obj: Any) -> str:
    """Serialise ``obj`` canonically (see module docstring)."""
    return (
        json.dumps(
            to_jsonable(obj), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False
        )
        + "\n"
    )


def dump_bytes(obj: Any) -> bytes:
    return dumps(obj).encode("utf-8")


def write_json(path: Path, obj: Any) -> None:
    """Write canonical JSON to ``path`` via a temporary file and an atomic rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(dump_bytes(obj))
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def same_value(a: Any, b: Any) -> bool:
    """Equality of JSON values as evidence means it: numbers by value (``1 == 1.0``),
    booleans never equal to numbers, containers element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
