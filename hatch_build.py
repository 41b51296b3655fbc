"""A wheel carries the registry as git has it: built in a git checkout, it refuses when a file below a folder it
bundles (``[tool.hatch.build.targets.wheel.force-include]``: schema/, facts/, registry/, locks/, sources/) is untracked,
ignored or modified, so an edit made while trying passprice out (``fact set``, ``import``) never ships by accident.

Outside a git checkout (a build from an sdist) the folders are taken as they are. ``PASSPRICE_BUILD_UNTRACKED=1``
builds anyway, for a wheel of deliberately local facts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _git(root: Path, *args: str) -> list[str] | None:
    """``git ARGS`` in ``root``, its NUL-separated output as a list; ``None`` when ``root`` is not in a git
    checkout (or git is not installed)."""
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in os.fsdecode(done.stdout).split("\0") if p]


class TrackedData(BuildHookInterface):  # type: ignore[misc]
    """Refuse a wheel whose bundled data folders differ from what git tracks (see the module's docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable" or os.environ.get("PASSPRICE_BUILD_UNTRACKED"):
            return
        root = Path(self.root)
        if _git(root, "rev-parse", "--is-inside-work-tree") is None:
            return
        sources = [Path(src) for src in self.build_config.force_include]  # absolute paths
        folders = [str(p.relative_to(root)) for p in sources if p.is_dir() and p.is_relative_to(root)]
        if not folders:
            return
        untracked = _git(root, "ls-files", "-z", "--others", "--", *folders) or []
        modified = _git(root, "diff", "-z", "--name-only", "HEAD", "--", *folders) or []
        if untracked or modified:
            _refuse(refusal(folders, untracked, modified))


def refusal(folders: list[str], untracked: list[str], modified: list[str]) -> str:
    """The one line a refused build prints: the folders, the files that differ (five at most, then how many more),
    and the three ways out."""
    shown = [f"{p} (not tracked by git)" for p in untracked] + [f"{p} (changed since HEAD)" for p in modified]
    listed = ", ".join(shown[:5]) + (f" and {len(shown) - 5:,} more" if len(shown) > 5 else "")
    return (
        f"passprice: error: a wheel bundles {_listed(folders)} as git tracks them, and {len(shown):,} "
        f"file{'s' if len(shown) != 1 else ''} differ{'s' if len(shown) == 1 else ''}: {listed}; commit them, or undo "
        "them (git restore / git clean), or set PASSPRICE_BUILD_UNTRACKED=1 to bundle them anyway"
    )


def _refuse(line: str) -> NoReturn:
    """End the build with ``line`` on stderr and exit status 1, no traceback: the hook runs inside the build
    backend's process (pip's, build's or hatch's), where an exception is printed as a traceback around the line, and
    ``SystemExit`` ends the process as the line says."""
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(1)


def _listed(folders: list[str]) -> str:
    """``facts/, locks/ and schema/``: the folders a wheel bundles, as they are configured, in words."""
    names = [f"{f.rstrip('/')}/" for f in sorted(folders)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
