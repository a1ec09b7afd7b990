"""Numbers that remember where they came from.

Every number the site displays is a :class:`Num`: its value, the evidence file and JSON
pointer (RFC 6901) it was read from, and the text shown. Templates render it as
``<span data-source="FILE#POINTER" data-value="...">TEXT</span>`` so a reader (and the
tests) can trace each figure back to the evidence. A few numbers are simple functions of
one value (``op``): ``count:KEY`` (items of an array whose KEY is true), ``len`` (array
length), ``percent`` (value x 100) and ``diff`` (value minus the value at ``minus``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

# Decimals shown per kind of quantity. Display rounding only: data-value keeps the
# exact evidence value.
DECIMALS = {"s": 3, "mm": 3, "g": 3, "kg": 4, "m": 3, "Nm": 2, "rad": 4, "deg": 4,
            "rate": 2, "percent": 1, "fraction": 3, "count": 0, "default": 4}


def pointer(*parts: str | int) -> str:
    """JSON pointer for a path of keys and indices (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(data: Any, ptr: str) -> Any:
    """Value at JSON pointer ``ptr`` in ``data``; KeyError/IndexError when absent."""
    if ptr == "":
        return data
    for raw in ptr.lstrip("/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(data, list):
            if not key.isdigit():
                raise KeyError(f"not an array index: {key!r}")
            data = data[int(key)]
        else:
            data = data[key]
    return data


def format_number(value: float, kind: str = "default") -> str:
    """Display text for a number: fixed decimals per kind, scientific when tiny or huge."""
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers on this site")
    if isinstance(value, int):
        return str(value)
    decimals = DECIMALS.get(kind, DECIMALS["default"])
    if value == 0:
        return f"{0:.{decimals}f}"
    magnitude = abs(value)
    if magnitude < 10 ** -decimals or magnitude >= 1e7:
        return f"{value:.3e}"
    return f"{value:.{decimals}f}"


@dataclass(frozen=True)
class Num:
    """A displayed number and its source.

    Attributes:
        value: the evidence value after ``op`` (None when the field is absent or null).
        source: ``FILE#POINTER``; FILE relative to the evidence folder.
        text: what the page shows.
        unit: unit label shown after the number ("" for none).
        op: how ``value`` follows from the pointed-to value ("" for identity).
        minus: for ``op == "diff"``, the ``FILE#POINTER`` subtracted.
    """

    value: float | int | None
    source: str
    text: str
    unit: str = ""
    op: str = ""
    minus: str = ""

    @property
    def raw(self) -> str:
        """The value as JSON (the data-value attribute)."""
        return json.dumps(self.value)

    @property
    def sort_key(self) -> str:
        """Value for table sorting (empty when absent)."""
        return "" if self.value is None else repr(self.value)

    @property
    def present(self) -> bool:
        return self.value is not None


class Doc:
    """One evidence JSON file, with accessors that return :class:`Num` values.

    Args:
        rel: path relative to the evidence folder (POSIX).
        data: the parsed JSON.
    """

    def __init__(self, rel: str, data: Any):
        self.rel = rel
        self.data = data

    def get(self, *path: str | int, default: Any = None) -> Any:
        """Value at ``path`` or ``default`` when any step is missing."""
        try:
            return resolve(self.data, pointer(*path))
        except (KeyError, IndexError, TypeError, ValueError):
            return default

    def src(self, *path: str | int) -> str:
        return f"{self.rel}#{pointer(*path)}"

    def num(self, *path: str | int, kind: str = "default", unit: str = "") -> Num:
        """The number at ``path`` (value None when missing, null or not a number)."""
        value = self.get(*path)
        if not is_number(value):
            return Num(None, self.src(*path), "n/a", unit)
        return Num(value, self.src(*path), format_number(value, kind), unit)

    def percent(self, *path: str | int) -> Num:
        """A fraction at ``path`` shown as a percentage."""
        value = self.get(*path)
        if not is_number(value):
            return Num(None, self.src(*path), "n/a", "%", "percent")
        shown = value * 100.0
        return Num(shown, self.src(*path), format_number(float(shown), "percent"), "%",
                   "percent")

    def count(self, *path: str | int, key: str) -> Num:
        """Number of items of the array at ``path`` whose ``key`` is true."""
        items = self.get(*path)
        if not isinstance(items, list):
            return Num(None, self.src(*path), "n/a", "", f"count:{key}")
        value = sum(1 for item in items if isinstance(item, dict) and item.get(key) is True)
        return Num(value, self.src(*path), str(value), "", f"count:{key}")

    def length(self, *path: str | int) -> Num:
        """Length of the array at ``path``."""
        items = self.get(*path)
        if not isinstance(items, list):
            return Num(None, self.src(*path), "n/a", "", "len")
        return Num(len(items), self.src(*path), str(len(items)), "", "len")


def diff(a: Num, b: Num, kind: str = "default") -> Num:
    """``a - b`` as a derived number (None when either is absent or derived)."""
    if a.value is None or b.value is None or a.op or b.op:
        return Num(None, a.source, "n/a", a.unit, "diff", b.source)
    value = a.value - b.value
    text = format_number(value, kind)
    if value > 0:
        text = "+" + text
    return Num(value, a.source, text, a.unit, "diff", b.source)


def is_number(value: Any) -> bool:
    """True for finite ints and floats (not booleans)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value)
