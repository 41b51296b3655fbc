"""A wheel carries the registry as git has it: built in a git checkout, it refuses when a file below a folder it
bundles (``[tool.hatch.build.targets.wheel.force-include]``: schema/, facts/, registry/, locks/, sources/) is untracked,
ignored or modified, so an edit made while trying passprice out (``fact set``, ``import``) never ships by accident.

Outside a git checkout (a build from an sdist) the folders are taken as they are. ``PASSPRICE_BUILD_UNTRACKED=1``
builds anyway, for a wheel of deliberately local facts.

Every wheel also records the pricing model's digest of the code it packages (``passprice.pins.record``: the digest
and the sha256 of each module file it is a function of) as ``passprice/pricing_model.json``, so the first ``check``,
``diff`` or ``lock`` of a fresh install (a CI machine, its cache empty) hashes the module files instead of parsing
them. An editable install gets one too, but not in its package, the checkout's own folder, where a record is a file
a branch can carry and passprice never uses one (``pins._recorded``): the editable wheel puts it at the same path in
site-packages (``passprice/pricing_model.json``, beside ``passprice/_data``), where ``pins._record_file`` finds it,
as trusted as the ``.pth`` file beside it that puts the checkout on the path. The record is only a shortcut:
passprice uses it only when every module it names still holds the recorded bytes, and computes the digest otherwise.
A record that cannot be made (the code does not parse) is left out, and the digest is computed at run time as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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
        if self.target_name == "wheel":
            self._record_pricing_model(version, build_data)
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


    def _record_pricing_model(self, version: str, build_data: dict[str, Any]) -> None:
        """Write the pricing model's record (see the module's docstring) into the wheel, as
        ``passprice/pricing_model.json``: beside the modules of an installed package, and in site-packages (beside
        the embedded data, outside the checkout) for an editable install."""
        source = Path(self.root) / "src"
        text = pricing_model_record(source)
        if text is None:
            return
        folder = Path(tempfile.mkdtemp(prefix="passprice-build-"))
        self._made = folder
        made = folder / "pricing_model.json"
        made.write_text(text, encoding="utf-8")
        build_data.setdefault("force_include", {})[str(made)] = "passprice/pricing_model.json"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """Remove the record's temporary folder once the wheel holds it."""
        made = getattr(self, "_made", None)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def pricing_model_record(source: Path) -> str | None:
    """``passprice.pins.record()`` of the package in ``source`` (a ``src`` folder) as JSON text, computed in a child
    interpreter (the build backend's own, whose environment need not hold passprice's dependencies: ``pins`` imports
    only the standard library and passprice's ``errors`` and ``files``), or ``None`` when it cannot be made."""
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(source)!r})\n"
        "from passprice.pins import record\n"
        "sys.stdout.write(json.dumps(record(), indent=1, sort_keys=True) + '\\n')\n"
    )
    try:
        done = subprocess.run([sys.executable, "-I", "-B", "-c", script], capture_output=True, check=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8")


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
