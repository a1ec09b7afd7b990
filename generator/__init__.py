"""workcell-evidence: pinned work-cell simulation, validation, signed evidence, static site."""

__version__ = "0.1.0"
