"""Command-line interface: thin click commands that parse options and call one function."""

from __future__ import annotations

import sys

import click

from generator import __version__

# Exit codes shared by every command.
EXIT_OK = 0
EXIT_FAILED = 1  # the run/verification completed and found a failure
EXIT_USAGE = 2  # bad input: invalid spec, refused tool, unreadable file


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evidence")
def main() -> None:
    """workcell-evidence: simulate a robot work cell and publish signed evidence."""


def fail_usage(message: str) -> None:
    """Print a user error (no traceback) and exit with the usage code."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)
