"""Attack round 12 (issue 13) on the code of the last rounds (sweep --jobs, new-serving, the pricing model's record,
diff's new checks): each test builds the input that broke it and asserts what passprice now does with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root

# --- a registry record written through a link to a file outside the registry ----------------------------------------

_GEMMA = Path(__file__).parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"


@pytest.mark.parametrize("what", ["serving", "lock", "checkpoint"])
def test_a_record_link_to_a_file_outside_the_registry_is_not_written_through(tmp_path: Path, what: str) -> None:
    """``new-serving NAME --force``, ``lock --name NAME --force`` and ``import --name NAME --force`` over a record that
    is a symbolic link to a file outside the registry wrote the record onto that file (any file the link names:
    a pull request may add such a link), which passprice then refused to read ("a symbolic link to …, outside the
    registry"). The link is refused before anything is written, in the line a read gives, and the file outside is
    left as it was."""
    root = copy_root(tmp_path)
    outside = tmp_path / "outside.toml"
    outside.write_text("kept = 1\n", encoding="utf-8")
    if what == "serving":
        link = root / "registry" / "servings" / "x.toml"
        args: tuple[str, ...] = ("new-serving", "x", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card",
                                 "h200_sxm_141gb", "--force")  # fmt: skip
    elif what == "lock":
        link = root / "locks" / "x.lock.toml"
        args = ("lock", "r1-qwen7b-h200", "--name", "x", "--force")
    else:
        link = root / "registry" / "checkpoints" / "x.toml"
        args = ("import", str(_GEMMA), "--name", "x", "--force")
    link.symlink_to(outside)
    bad(*args, root=root, says=f"{link}: a symbolic link to {outside}, outside the registry ({root}): a registry's "
        "files lie inside it (copy the file in, or link to one inside)")  # fmt: skip
    assert outside.read_text(encoding="utf-8") == "kept = 1\n" and link.is_symlink()


# --- the pricing model's digest: relative imports, and a record in a source tree ------------------------------------


def test_a_module_imported_relatively_is_in_the_pricing_model(tmp_path: Path) -> None:
    """The walk followed ``from passprice.cost import …`` but not ``from .cost import …`` or ``from . import
    serving``: a package importing its modules so had a closure of its two roots (``locks``, ``reproduce``), and
    an edit to ``cost.py`` (``np.maximum`` → ``np.minimum`` in the pass's time) left the digest as it was."""
    from passprice import pins

    folder = tmp_path / "passprice"
    folder.mkdir()
    (folder / "locks.py").write_text("from .cost import limit\nfrom . import serving\n", encoding="utf-8")
    (folder / "reproduce.py").write_text("from ..other import x\n", encoding="utf-8")  # above the package: not one
    (folder / "cost.py").write_text("def limit(a, b):\n    return max(a, b)\n", encoding="utf-8")
    (folder / "serving.py").write_text("K = 2\n", encoding="utf-8")
    assert pins.pricing_modules(folder) == ("cost", "locks", "reproduce", "serving")
    first = pins.pricing_model_digest(folder)
    (folder / "cost.py").write_text("def limit(a, b):\n    return min(a, b)\n", encoding="utf-8")
    edited = pins.pricing_model_digest(folder)
    (folder / "serving.py").write_text("K = 3\n", encoding="utf-8")
    assert len({first, edited, pins.pricing_model_digest(folder)}) == 3


def test_a_record_in_a_source_tree_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In an editable install the running package's record is a file of the checkout, which a branch can carry
    (``git add -f``) and ``git checkout`` puts in place without a build: a record naming the two roots with their
    true bytes and the digest an old lock pinned made ``check`` say "pricing model: same" of edited code. A record
    in a source tree (``pyproject.toml``, ``setup.py`` or ``.git`` beside the package or above it) is not read;
    the same record in an installed package still is."""
    import hashlib
    import json
    import shutil

    from passprice import pins

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    # no editable install's record in site-packages (fastcheck99: tests/test_fastcheck99.py reads one): the record
    # beside the modules is the only one here
    monkeypatch.setattr(pins, "SITE_RECORD", Path("passprice") / "no-such-record.json")
    forged = "sha256:" + "5" * 64
    for tree, marker in (("checkout", "pyproject.toml"), ("worktree", ".git"), ("installed", None)):
        package = tmp_path / tree / "src" / "passprice"
        shutil.copytree(pins.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
        if marker is not None:
            (tmp_path / tree / marker).write_text("", encoding="utf-8")
        roots = {n: hashlib.sha256((package / f"{n}.py").read_bytes()).hexdigest() for n in pins.PRICING_ROOTS}
        record = package / "pricing_model.json"
        record.write_text(json.dumps({"format": 1, "python": pins._python(), "digest": forged, "modules": roots,
                                      "algorithm": hashlib.sha256(Path(pins.__file__).read_bytes()).hexdigest()}),
                          encoding="utf-8")  # fmt: skip
        monkeypatch.setattr(pins, "RECORD", record)
        assert pins._recorded(str(package)) == (None if marker else forged), tree


# --- the LockFloor advice: a lock file's name in the command it prints ----------------------------------------------


def test_the_floor_advice_quotes_a_lock_file_name_for_the_shell_and_the_code_span(tmp_path: Path) -> None:
    """A lock file named ``locks/a b;`touch PWN`$(id).lock.toml`` (a pull request may add one) whose floor refuses a
    price: the advice printed ``passprice lock … -o locks/a b;`touch PWN`$(id).lock.toml --force …`` inside
    backticks, so pasting it ran ``touch PWN`` and ``id``, and its backticks ended the code span. Each word is now
    quoted for the shell and the span fenced by more backticks than the command holds in a row."""
    from cli_helpers import invoke

    root = copy_root(tmp_path)
    weakened = invoke(
        "fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "3.0", "--unit", "TB/s", "--provenance",
        "estimated", "--source", "nvidia-h200-datasheet", "--locator", "an estimate for this test", root=root,
    )  # fmt: skip
    assert weakened.exit_code == 0, weakened.output
    odd = "a b;`touch PWN`$(id).lock.toml"
    (root / "locks" / "r1-qwen7b-h200.lock.toml").rename(root / "locks" / odd)
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 1
    assert result.stderr.endswith(
        "loosen the lock's floor for it on purpose through review (`` passprice lock --update -o "
        "'locks/a b;`touch PWN`$(id).lock.toml' --force --require memory.bandwidth=estimated ``; `passprice lock "
        "--update -o locks/r1-qwen7b-h200-best.lock.toml --force --require memory.bandwidth=estimated`; `passprice "
        "lock --update -o locks/r1-qwen7b-h200-llamacpp.lock.toml --force --require memory.bandwidth=estimated`)\n"
    ), result.stderr


# --- standard output however its name is spelled --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["//dev/stdout", "/dev/../dev/stdout", "/proc/self/fd/./1"])
def test_standard_output_spelled_otherwise_is_still_standard_output(tmp_path: Path, name: str) -> None:
    """``-o /dev/stdout`` is refused by name for a lock, but ``-o //dev/stdout`` (or ``/dev/../dev/stdout``) slipped
    past the list of names: with standard output redirected to a file, ``lock -o //dev/stdout --force`` replaced
    that file with the lock. Any spelling of the folder is now the same name: refused for a lock, the rows on
    standard output for a sweep."""
    from cli_helpers import invoke

    root = copy_root(tmp_path)
    bad("lock", "gemma3-270m-h100", "--name", "q", "-o", name, "--force", root=root,
        says=f"Invalid value for '-o' / '--output': '{name}' would be standard output; this option writes a file: "
        "give its name")  # fmt: skip
    result = invoke("sweep", "gemma3-270m-h100", "--batches", "1,2", "-o", name, root=root)
    assert result.exit_code == 0, result.output
    assert [row.split(",")[7] for row in result.stdout.splitlines()] == ["batch", "1", "2"]


# --- sweep --jobs: no more processes than CPUs ----------------------------------------------------------------------


def test_sweep_jobs_64_forks_no_more_processes_than_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sweep --jobs 64`` on the 2-CPU machine forked 63 workers, each reading the pass shapes of its part's
    servings again: a grid of 323 (serving, card) pairs with an empty cache took 4 to 5 s of wall time (5.1 to 5.6 s
    of CPU) where ``--jobs 1`` took 1.1 to 1.6 s. The processes are now at most the CPUs (2 at least), the text the
    same."""
    import os

    from cli_helpers import invoke
    from passprice import sweepjobs

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert [sweepjobs.usable_jobs(n) for n in (1, 2, 3, 64)] == [1, 2, 2, 2]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert [sweepjobs.usable_jobs(n) for n in (1, 2, 64)] == [1, 2, 2]  # asked for a worker: one
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert sweepjobs.usable_jobs(64) == 8
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    started = []
    start = sweepjobs._start

    def counted(*args: object, **kwargs: object) -> object:
        started.append(1)
        return start(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sweepjobs, "_start", counted)
    args = ("sweep", "gemma3-270m-h100", "r1-qwen7b-h200", "--cards", "h100_sxm5_80gb,h200_sxm_141gb,rtx_3080",
            "--batches", "1,8,64", "--no-lock")  # fmt: skip
    many = invoke(*args, "--jobs", "64", "-o", str(tmp_path / "many.csv"))
    assert many.exit_code == 0 and started == [1], many.output
    one = invoke(*args, "--jobs", "1", "-o", str(tmp_path / "one.csv"))
    assert one.exit_code == 0 and started == [1], one.output
    assert (tmp_path / "many.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()


# --- new-serving: a name that is a relative path ----------------------------------------------------------------------


@pytest.mark.parametrize(("key", "option", "ref"), [
    ("checkpoint", "--checkpoint", "registry/q.gguf"),
    ("card", "--card", "facts/cards/h200_sxm_141gb.toml"),
])  # fmt: skip
def test_new_serving_refuses_a_relative_path_that_reads_back_from_one_folder_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, option: str, ref: str
) -> None:
    """``new-serving x --checkpoint registry/q.gguf`` (run in the registry) wrote ``checkpoint = "registry/q.gguf"``,
    which read back there (the check before writing passed) but a serving file's paths are looked up from the
    reader's working folder: ``price x`` anywhere else said "checkpoint: registry/q.gguf: no such file". A relative
    path is refused, nothing written; so is an absolute one inside the registry (one clone's file: check passed it
    where diff of two revisions refused it, #13); a registry name is written."""
    root = copy_root(tmp_path)
    header = Path(__file__).parent / "data" / "qwen35-27b-like.header.gguf"
    (root / "registry" / "q.gguf").write_bytes(header.read_bytes())
    monkeypatch.chdir(root)
    names = {"--checkpoint": "deepseek-r1-distill-qwen-7b-q4_k_m", "--card": "h200_sxm_141gb", option: ref}
    args = [a for pair in names.items() for a in pair]
    written = root / "registry" / "servings" / "x.toml"
    bad("new-serving", "x", *args, root=root,  # the file relative to the registry, as check names it (left29b)
        says=f"registry/servings/x.toml: {key}: '{ref}' is a path relative to the working folder, which a serving "
        "file read from another folder does not find (nothing written)")  # fmt: skip
    assert not written.exists()
    names[option] = str(root / ref)
    from cli_helpers import invoke

    bad("new-serving", "x", *[a for pair in names.items() for a in pair], root=root,
        says=f"registry/servings/x.toml: {key}: '{root / ref}' is an absolute path")  # fmt: skip
    assert not written.exists()
    names[option] = "deepseek-r1-distill-qwen-7b-q4_k_m" if key == "checkpoint" else "h200_sxm_141gb"
    made = invoke("new-serving", "x", *[a for pair in names.items() for a in pair], root=root)
    assert made.exit_code == 0 and written.exists(), made.output
