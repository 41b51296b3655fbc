"""Attack round 42 (issue 13): hostile input from the process's environment and I/O (outputs that cannot be
written, locale and encoding, the environment's folders, signals and limits). One test per finding, each building
its reproducer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import bad
from passprice import cachefolder, roofline
from passprice.errors import InputError

REPO = Path(__file__).resolve().parent.parent

#: The console script as the user runs it (the memo first, then the command line): both find the cache folder.
_PASSPRICE = [sys.executable, "-m", "passprice"]


def _environment(**values: str) -> dict[str, str]:
    """The test's environment without the cache variables, with ``values`` set."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PASSPRICE_CACHE_DIR", "PASSPRICE_NO_CACHE", "PASSPRICE_NO_MEMO", "XDG_CACHE_HOME",
                        "XDG_CONFIG_HOME", "MPLCONFIGDIR")}  # fmt: skip
    env.update(values)
    return env


def test_a_relative_home_makes_no_cache_in_the_working_folder(tmp_path: Path) -> None:
    """``HOME=.`` (a relative home, with no ``$XDG_CACHE_HOME``) made passprice's cache ``./.cache/passprice`` (the
    memo, the compiled attrs code) inside the folder the command ran in, a registry's own: an untracked folder
    ``git status`` showed. A relative ``$XDG_CACHE_HOME`` was already ignored; a relative home is now no home (no
    cache is kept), as ``HOME=/nonexistent`` is."""
    run = subprocess.run([*_PASSPRICE, "--root", str(REPO), "price", "r1-qwen7b-h200", "--json"], cwd=tmp_path,
                         env=_environment(HOME="."), capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert '"tokens_per_s"' in run.stdout
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError, match="is not an absolute path"):
        cachefolder.existing(".")


@pytest.mark.parametrize("variable", ["XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME"])
def test_a_relative_base_folder_is_no_folder_of_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          variable: str) -> None:  # fmt: skip
    """``roofline --plot`` under ``XDG_CACHE_HOME=relative/dir`` (or a relative ``XDG_CONFIG_HOME`` or ``HOME``)
    left ``relative/dir/matplotlib/fontlist-v3.11.0.json`` in the folder it ran in: passprice created the folder
    to judge it writable and matplotlib filled it. A relative base is now none: matplotlib gets a temporary
    folder, removed at exit."""
    monkeypatch.chdir(tmp_path)
    for name in ("MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(variable, "relative/dir")
    roofline._matplotlib_folder()
    chosen = os.environ["MPLCONFIGDIR"]
    assert os.path.isabs(chosen) and "passprice-matplotlib-" in chosen
    assert sorted(os.listdir(tmp_path)) == ["home"]


@pytest.mark.parametrize("args", [
    ("sweep", "r1-qwen7b-h200", "--batches", "1,2", "-o", "out.csv"),
    ("lock", "r1-qwen7b-h200", "-o", "out.lock.toml"),
    ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", "out.png"),
])  # fmt: skip
def test_an_output_named_in_a_removed_working_folder_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             args: tuple[str, ...]) -> None:  # fmt: skip
    """With the working folder removed while the shell stood in it, ``--root R sweep … -o out.csv`` (simulate,
    roofline and audit ``--plot``) said "standard output: No such file or directory" and ``lock -o
    out.lock.toml`` "not a file name (FileNotFoundError)"; the working folder is now named, as for an input."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    name = args[-1]
    bad(*args, says=f"{name}: cannot write: the working folder no longer exists (it was removed while the shell "
                    "stood in it): cd to a folder that exists, or give --root and absolute paths")  # fmt: skip


@pytest.mark.parametrize("args", [
    ("diff", "HEAD", "HEAD"),
    ("fact", "show", "h200_sxm_141gb", "streams.rewrite", "--history"),
])  # fmt: skip
def test_git_that_cannot_be_started_is_said_so(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Under ``ulimit -n 8`` the pipes to git cannot be made (``os.pipe``: EMFILE, no file name): ``diff`` said
    "standard output: Too many open files" (the command line's last resort blamed standard output), ``fact show
    --history`` "not a git checkout". Both now say git cannot be started, and why."""
    import resource

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (8, 8))

    run = subprocess.run([*_PASSPRICE, "--root", str(REPO), *args], cwd=tmp_path, capture_output=True, text=True,
                         env=_environment(PASSPRICE_NO_CACHE="1"), preexec_fn=few_files)  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("passprice: error: git: cannot be started: Too many open files (raise the limit on open "
                          "files: ulimit -n)\n")  # fmt: skip


#: A child running the command line with its click group replaced by one raising ``RAISED`` (main() sets signal
#: handlers and the collector's thresholds: not in the test's own process).
_RAISING = ("import sys; from passprice.cli import app\n"
            "def raising(**_):\n    raise {raised}\n"
            "app.cli = raising; sys.argv[0] = 'passprice'; app.main()")  # fmt: skip


@pytest.mark.parametrize("raised", [
    "MemoryError()",
    "ImportError('Original error was: libgfortran-040039e1.so.5.0.0: failed to map segment from shared object')",
])  # fmt: skip
def test_running_out_of_memory_is_one_line(raised: str) -> None:
    """Under ``ulimit -v 150000`` ``check`` and ``diff`` printed a ``MemoryError`` traceback, or NumPy's
    ``ImportError`` one (its OpenBLAS or libgfortran not mapped: "failed to map segment from shared object"), and
    exited 1, a refusal's status. Either is now one line and exit 2, as a full disk is. (The limit itself moves the
    failure from run to run, so the child raises what it raised.)"""
    run = subprocess.run([sys.executable, "-c", _RAISING.format(raised=raised)], capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("passprice: error: out of memory: the command needs more memory than this process may "
                          "hold (ulimit -v, a container's limit): raise the limit\n")  # fmt: skip


def test_an_import_error_of_another_kind_is_not_called_memory() -> None:
    """Only a library not mapped is out of memory: any other :class:`ImportError` (a broken install) is raised as
    ever."""
    run = subprocess.run([sys.executable, "-c", _RAISING.format(raised="ImportError('No module named nothing')")],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1 and "ImportError: No module named nothing" in run.stderr


def test_synth_whose_scratch_copy_cannot_be_written_names_its_output(tmp_path: Path) -> None:
    """Under ``ulimit -f 8`` (8 KiB; the header is 18 KB) ``synth -o h.gguf`` said "standard output: File too
    large": the write that failed was its scratch copy in the temporary folder (GGUFWriter writes a file), without
    a file name. It now names the output, why, and where the scratch copy went; nothing is written."""
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    out = tmp_path / "h.gguf"
    run = subprocess.run([*_PASSPRICE, "synth", str(REPO / "examples/configs/llama-3.1-8b.json"), "--mix", "Q4_K_M",
                          "-o", str(out)], cwd=tmp_path, capture_output=True, text=True,
                         env=_environment(PASSPRICE_NO_CACHE="1"), preexec_fn=small_files)  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"passprice: error: {out}: cannot write: File too large (writing its scratch copy "
                                 "in the temporary folder ")  # fmt: skip
    assert run.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_matplotlib_not_mapped_for_want_of_memory_is_not_called_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``roofline --plot`` under ``ulimit -v 120000`` said "--plot needs matplotlib, an optional extra" with
    matplotlib installed: its import failed as NumPy's libraries could not be mapped. That ImportError now goes on to
    the command line, which says out of memory (test_running_out_of_memory_is_one_line); a missing matplotlib is
    still said to be missing."""
    import importlib.abc

    class Unmapped(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, *_: object) -> None:
            if name == "matplotlib":
                raise ImportError("libscipy_openblas64_.so: failed to map segment from shared object")

    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Unmapped(), *sys.meta_path])
    monkeypatch.setattr(roofline, "_matplotlib_folder", lambda: None)
    with pytest.raises(ImportError, match="failed to map segment"):
        roofline.require_matplotlib()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # not installed
    with pytest.raises(InputError, match="--plot needs matplotlib, an optional extra"):
        roofline.require_matplotlib()
