"""Generic key/value tables for evidence records the site has no dedicated view for.

A record (exports, cross-checks, physical validation, provenance) is flattened into rows
of (dotted key, value); numbers stay :class:`Num` values with their JSON pointer, so a
generic table is as traceable as a dedicated one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.site.numbers import Doc, Num, is_number

MAX_ROWS = 400  # a record larger than this is cut, with a note and a link to the file
MAX_INLINE_NUMBERS = 12  # longer number lists are summarised by their length


@dataclass(frozen=True)
class Cell:
    """One displayed value: text, a number, a list of numbers, or a boolean."""

    text: str = ""
    nums: tuple[Num, ...] = ()
    flag: bool | None = None


@dataclass(frozen=True)
class Row:
    key: str
    value: Cell


@dataclass(frozen=True)
class Table:
    """Rows of a flattened record; ``truncated`` when rows were left out."""

    rows: tuple[Row, ...]
    truncated: bool
    source: str


def value_cell(doc: Doc, path: tuple[str | int, ...], kind: str = "default") -> Cell:
    """The display cell for the scalar (or list of numbers) at ``path``."""
    value = doc.get(*path)
    if isinstance(value, bool):
        return Cell(flag=value)
    if is_number(value):
        return Cell(nums=(doc.num(*path, kind=kind),))
    if isinstance(value, list) and value and all(is_number(v) for v in value):
        if len(value) > MAX_INLINE_NUMBERS:
            return Cell(text=f"{len(value)} numbers (see the file)")
        return Cell(nums=tuple(doc.num(*path, i, kind=kind) for i in range(len(value))))
    if value is None:
        return Cell(text="null")
    if isinstance(value, (list, dict)) and not value:
        return Cell(text="(empty)")
    return Cell(text=str(value))


def flatten(doc: Doc, *path: str | int, skip: tuple[str, ...] = ()) -> Table:
    """Flatten the record at ``path`` into rows (depth first, keys in file order)."""
    rows: list[Row] = []
    truncated = _walk(doc, tuple(path), "", rows, skip)
    return Table(tuple(rows), truncated, doc.src(*path))


def _walk(doc: Doc, path: tuple[str | int, ...], label: str, rows: list[Row],
          skip: tuple[str, ...]) -> bool:
    value = doc.get(*path)
    if len(rows) >= MAX_ROWS:
        return True
    if isinstance(value, dict) and value:
        for key in value:
            if key in skip:
                continue
            if _walk(doc, (*path, key), f"{label}.{key}" if label else key, rows, skip):
                return True
        return False
    if isinstance(value, list) and value and not all(is_number(v) for v in value):
        for i in range(len(value)):
            if _walk(doc, (*path, i), f"{label}[{i}]", rows, skip):
                return True
        return False
    rows.append(Row(label or "(value)", value_cell(doc, path)))
    return False


def key_of(record: Any) -> str:
    """A short identifier for a list item (its id or name field), else empty."""
    if isinstance(record, dict):
        for key in ("id", "name", "check", "validator"):
            if isinstance(record.get(key), str):
                return record[key]
    return ""
