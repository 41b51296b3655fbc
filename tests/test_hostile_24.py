"""Round 24 of hostile input (#13): the cache folder and ``init``'s folder given as paths of thousands of missing
folders.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

from passprice.cachefolder import make_folders

R1 = "r1-qwen7b-h200"


def _deep(base: Path, depth: int = 2_000) -> Path:
    """A path of up to ``depth`` missing folders below ``base``: within the 4,096 bytes a path may hold, with 128
    left for what passprice puts below it (``passprice/documents/…``: under pytest-xdist a worker's temporary folder
    is longer, and 2,000 folders left too little), past the interpreter's recursion limit (1,000)."""
    depth = min(depth, (4_096 - 128 - len(os.fsencode(base))) // 2)
    assert depth > 1_000
    path = base.joinpath(*(["y"] * depth))
    assert len(os.fsencode(path)) < 4_096 - 120
    return path


@pytest.fixture
def deep_trees() -> Iterator[list[Path]]:
    """Folders made by :func:`_deep` to remove after the test, from the bottom up (pytest's own clean-up of old
    temporary folders removes by recursion, and a tree 2,000 deep raised RecursionError at its exit)."""
    made: list[Path] = []
    yield made
    for base in made:
        # From the top, a level at a time: base/y/y moved up beside base/y, base/y (now shallow) removed, the moved
        # folder named base/y again. Each step names a path two folders deep; walking down to the bottom named
        # paths of every depth (2,000 x 2,000 / 2 folders looked up, most of the test's time).
        top, below = base / "y", base / "y-below"
        while top.is_dir():
            if (top / "y").is_dir():
                (top / "y").rename(below)
            shutil.rmtree(top)
            if below.is_dir():
                below.rename(top)


def _passprice(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script's command (``python -m passprice``: the memo and the code cache included)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "XDG_"))}
    return subprocess.run([sys.executable, "-m", "passprice", *args], cwd=cwd, env={**base, **env},
                          capture_output=True, text=True, timeout=300)


@functools.cache
def _plain(*args: str) -> subprocess.CompletedProcess[str]:
    """``passprice ARGS`` run once for the module with no cache and no memo: the output each variant must match."""
    return _passprice(*args, cwd=REPO, PASSPRICE_NO_CACHE="1", PASSPRICE_NO_MEMO="1")


# Each variable and each memo setting once (pairwise, not all four): both variables name the folder passprice makes
# with one function (cachefolder.make_folders); the memo on makes the memo's folder as well as the documents' and the
# compiled code's (the three RecursionErrors), the memo off only the last two.
@pytest.mark.parametrize(("variable", "memo"), [("XDG_CACHE_HOME", ""), ("PASSPRICE_CACHE_DIR", "1")])
def test_a_cache_folder_thousands_of_folders_deep_is_made_without_a_traceback(
    tmp_path: Path, variable: str, memo: str, deep_trees: list[Path]
) -> None:
    # Round 24: XDG_CACHE_HOME (or PASSPRICE_CACHE_DIR) = /tmp/x/y/y/…/y, 2,000 folders not yet there (4,000
    # bytes, a path Linux takes): `passprice price R1` printed the price, then a 1,000-frame traceback ending in
    # RecursionError (os.makedirs for the memo's folder, pathlib's mkdir for the cache's documents, os.makedirs
    # again for the compiled code at exit), exit 1. The cache's folders are now made in a loop.
    deep = _deep(tmp_path / "cache")
    deep_trees.append(tmp_path / "cache")
    expected = _plain("price", R1)
    assert expected.returncode == 0, expected.stderr
    done = _passprice("price", R1, cwd=REPO, **{variable: str(deep), "PASSPRICE_NO_MEMO": memo})
    assert (done.returncode, done.stderr, done.stdout) == (0, "", expected.stdout)
    # Round 63: a cache folder past cachefolder.MAX_FOLDER_BYTES (1,024) keeps no cache (each lookup resolved every
    # folder: 8.7 s a run at 3,000 deep), so nothing is made there; the price is the same.
    assert not (tmp_path / "cache").joinpath("y").exists()
    again = _passprice("price", R1, cwd=REPO, **{variable: str(deep), "PASSPRICE_NO_MEMO": memo})
    assert (again.returncode, again.stderr, again.stdout) == (0, "", expected.stdout)


def test_init_into_thousands_of_missing_folders_writes_the_registry(tmp_path: Path, deep_trees: list[Path]) -> None:
    # Round 24: `passprice init /tmp/x/y/…/y` (2,000 folders not there) raised RecursionError from pathlib's
    # mkdir(parents=True), a traceback; init makes the missing folders above a new registry, so it now makes these.
    deep = _deep(tmp_path / "init", 1_800)  # room left below it for the registry's own paths
    deep_trees.append(tmp_path / "init")
    result = invoke("init", str(deep))
    assert result.exit_code == 0, result.output
    assert (deep / "facts" / "cards" / "h100_sxm5_80gb.toml").is_file()
    # The registry written is the one init writes anywhere, file for file and byte for byte, and that one checks:
    # ``check`` of the deep one cost 7.4 s of CPU (each of its reads resolves 1,800 folders), of the shallow one 0.2 s.
    shallow = tmp_path / "shallow"
    assert invoke("init", str(shallow)).exit_code == 0
    assert _tree(deep) == _tree(shallow)
    assert invoke("check", root=shallow).exit_code == 0


def _tree(top: Path) -> dict[str, tuple[str, bytes]]:
    """Each path below ``top`` (relative), its kind (``file``, ``link``, ``folder``) and its bytes (a link's
    target)."""
    found: dict[str, tuple[str, bytes]] = {}
    for path in sorted(top.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(top))] = ("link", os.fsencode(os.readlink(path)))
        elif path.is_dir():
            found[str(path.relative_to(top))] = ("folder", b"")
        else:
            found[str(path.relative_to(top))] = ("file", path.read_bytes())
    return found


def test_make_folders_refuses_a_file_in_the_way_as_os_makedirs_does(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        make_folders(tmp_path / "file" / "a" / "b")
    with pytest.raises(FileExistsError):
        make_folders(tmp_path / "file")
    make_folders(tmp_path / "a" / "b", 0o700)
    make_folders(tmp_path / "a" / "b")  # already there: nothing to do
    assert (tmp_path / "a" / "b").is_dir() and (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700


# price under both encodings; explain and facts (which had failed alike) under one each: every command and every
# encoding once, the encoding applied to standard output once for all commands.
@pytest.mark.parametrize(("args", "encoding"), [(("price", R1), "latin-1"), (("price", R1), "cp1252"),
                                                (("explain", "array"), "cp1252"),
                                                (("facts", "h200_sxm_141gb"), "latin-1")])
def test_output_under_an_encoding_other_than_utf8_is_escaped_not_a_traceback(
    encoding: str, args: tuple[str, ...]
) -> None:
    # Round 24: PYTHONIOENCODING=latin-1 (or cp1252, a Windows console's or pipe's encoding) made `price R1` print a
    # UnicodeEncodeError traceback at its first '←' ("memory 1.004 ms 100.0 % ← binds"), exit 1; `explain` and
    # `facts` likewise. What the encoding holds is written in it, the rest escaped (\u2190) as Python escapes
    # standard error.
    env = {"PASSPRICE_CACHE_DIR": os.environ["PASSPRICE_CACHE_DIR"], "PASSPRICE_NO_MEMO": "1"}  # the session's
    plain = _plain(*args)
    assert plain.returncode == 0 and "\u2190" in plain.stdout + "\u2190" * (args[0] != "price"), plain.stderr
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "XDG_"))}
    done = subprocess.run([sys.executable, "-m", "passprice", *args], cwd=REPO, capture_output=True, timeout=300,
                          env={**base, **env, "PYTHONIOENCODING": encoding})
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == plain.stdout.encode(encoding, errors="backslashreplace")


def test_a_measured_run_past_its_checkpoint_context_names_the_file_and_key(tmp_path: Path) -> None:
    # Round 24: a run of registry/measurements/ whose positions end past its checkpoint's context (positions =
    # [0, 9000] on an 8,192-position Llama 3 8B) made `calibrate` and `check` say "run … (xiongjiedai-llama3-
    # llamabench): context limit 9000 is past the checkpoint's context length 8192: lower --limit" (no file, no key,
    # advice about an option neither command has), and `validate` showed it as a refused row, exit 0. It is bad
    # input: the file and run.0.positions are named, exit 2, nothing written.
    root = copy_root(tmp_path)
    runs = root / "registry" / "measurements" / "xiongjiedai-llama3-llamabench.toml"
    text = runs.read_text(encoding="utf-8")
    first = text.index("positions = [", text.index("[[run]]\nid ="))
    end = text.index("]", first) + 1
    runs.write_text(text[:first] + "positions = [0, 9000]" + text[end:], encoding="utf-8")
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    before = stack.read_bytes()
    # calibrate names the file as validate and check do, relative to the registry (leftovers 28d: it named it
    # ROOT/registry/… under --root)
    rel = runs.relative_to(root).as_posix()
    line = (f"passprice: error: {rel}: run.0.positions: last position 9,000 is past the context length of checkpoint "
            "llama3-8b-q4_k_m, 8,192 positions (a model reads no position past its context: correct the run's "
            "positions or its checkpoint)")
    assert bad("calibrate", "--stack", "llamacpp-cuda-2405", root=root) == [line]
    assert bad("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root) == [line]
    assert stack.read_bytes() == before
    result = invoke("validate", root=root)  # the file named as check names it (leftovers 28c)
    assert result.exit_code == 2 and result.stderr.splitlines() == [line]
    assert "xd3.h100_pcie_80gb.8b-q4km.tg512" not in result.stdout  # left out, not a refused row
    result = invoke("check", root=root)
    assert result.exit_code == 2
    detail = line.removeprefix("passprice: error: ")
    assert any(detail in shown for shown in result.stderr.splitlines()) and "lower --limit" not in result.output


def test_a_writer_refuses_a_name_that_differs_from_one_there_only_by_case(tmp_path: Path) -> None:
    # Round 24: `import --name GEMMA3-270M-Q4_K_M`, `new-serving R1-QWEN7B-H200` and `lock --name R1-QWEN7B-H200`
    # each wrote a second file beside gemma3-270m-q4_k_m.toml (r1-qwen7b-h200.toml, r1-qwen7b-h200.lock.toml), exit
    # 0, after which `check` failed ("names that differ only by case or Unicode normalization"): what a writer
    # writes must read back. On macOS and Windows the two are one file, and --force replaced the other entry.
    root = copy_root(tmp_path)
    header = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    folders = {"checkpoints": root / "registry" / "checkpoints", "servings": root / "registry" / "servings",
               "locks": root / "locks"}
    before = {name: sorted(p.name for p in folder.iterdir()) for name, folder in folders.items()}

    def line(folder: Path, name: str, there: str) -> str:
        return (f"passprice: error: {folder / name}: {folder} already holds '{there}', a name that differs only by "
                "case or Unicode normalization (they show alike, and are one file on macOS and Windows): use that "
                "name, or another")

    for force in ((), ("--force",)):
        assert bad("import", str(header), "--name", "GEMMA3-270M-Q4_K_M", *force, root=root) == [
            line(folders["checkpoints"], "GEMMA3-270M-Q4_K_M.toml", "gemma3-270m-q4_k_m.toml")]
        assert bad("new-serving", "R1-QWEN7B-H200", R1, *force, root=root) == [
            line(folders["servings"], "R1-QWEN7B-H200.toml", "r1-qwen7b-h200.toml")]
        assert bad("lock", R1, "--name", "R1-QWEN7B-H200", *force, root=root) == [
            line(folders["locks"], "R1-QWEN7B-H200.lock.toml", "r1-qwen7b-h200.lock.toml")]
    assert {name: sorted(p.name for p in folder.iterdir()) for name, folder in folders.items()} == before
    assert invoke("check", root=root).exit_code == 0
    # The same name is no lookalike: replaced with --force, as before.
    assert invoke("lock", R1, "--force", root=root).exit_code == 0
    assert invoke("import", str(header), "--name", "gemma3-270m-q4_k_m", "--force", root=root).exit_code == 0


@pytest.mark.parametrize("command", [("sweep", R1), ("simulate", R1, "--synthetic", "5")])
def test_plot_and_output_on_one_file_are_refused_before_either_is_written(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # Round 24: `sweep R1 --plot F.svg -o F.svg --force` drew the plot, said "plot -> F.svg", then replaced it with
    # the CSV, exit 0 (the plot lost without a word); `simulate` likewise with its text; without --force the plot
    # was written and -o refused, exit 2 with a file left behind. Through a link (-o L.svg, L.svg -> F.svg) too.
    plot = tmp_path / "f.svg"
    for output, force in ((plot, ("--force",)), (plot, ()), (tmp_path / "link.svg", ("--force",))):
        if output != plot:
            output.symlink_to(plot.name)
        assert bad(*command, "--plot", str(plot), "-o", str(output), *force) == [
            f"passprice: error: {output}: --plot {plot} and -o {output} name the same file, which would hold only the "
            "last written: give two files"
        ]
        assert not plot.exists()


def test_synth_refuses_a_header_and_an_entry_on_one_file(tmp_path: Path) -> None:
    # Round 24: `synth CONFIG --import l3x -o registry/checkpoints/l3x.toml --force` wrote the entry, then the
    # binary header over it, printed "header -> …/l3x.toml" and "entry -> …/l3x.toml", exit 0; `check` then failed
    # ("byte 414: not UTF-8 text"). Without --force the entry was written and -o refused: exit 2, a file left.
    # The header is no record, and -o lands in registry/: refused before either is written.
    root = copy_root(tmp_path)
    config = REPO / "examples" / "configs" / "meta-llama-3-8b.json"
    entry = root / "registry" / "checkpoints" / "l3x.toml"
    for force in (("--force",), ()):
        assert bad("synth", str(config), "--import", "l3x", "-o", str(entry), *force, root=root) == [
            f"passprice: error: {entry}: -o would write into {root / 'registry'}/, where every .toml file is a record "
            "passprice reads (this output is none): write it outside the registry's record folders, or under "
            "another suffix"
        ]
        assert not entry.exists()
    assert invoke("check", root=root).exit_code == 0


def test_an_output_is_never_written_over_a_record_of_the_registry(tmp_path: Path) -> None:
    # Round 24: `sweep R1 -o registry/servings/R1.toml --force` replaced the serving it had just priced with its CSV,
    # exit 0; every later command on the registry failed ("not valid TOML"). `simulate … -o facts/cards/X.toml
    # --force` and `synth CONFIG -o registry/checkpoints/new.toml` (a binary header where check reads entries) alike.
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / f"{R1}.toml"
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = serving.read_bytes(), card.read_bytes()
    config = REPO / "examples" / "configs" / "meta-llama-3-8b.json"

    def line(output: Path, tree: str) -> str:
        return (f"passprice: error: {output}: -o would write into {root / tree}/, where every .toml file is a record "
                "passprice reads (this output is none): write it outside the registry's record folders, or under "
                "another suffix")

    assert bad("sweep", R1, "-o", str(serving), "--force", root=root) == [line(serving, "registry")]
    assert bad("simulate", R1, "--synthetic", "3", "-o", str(card), "--force", root=root) == [line(card, "facts")]
    new = root / "registry" / "checkpoints" / "new.toml"
    assert bad("synth", str(config), "-o", str(new), root=root) == [line(new, "registry")]
    through = root / "facts" / ".." / "locks" / "x.lock.toml"
    assert bad("sweep", R1, "-o", str(through), root=root) == [line(through, "locks")]
    assert (serving.read_bytes(), card.read_bytes()) == before and not new.exists()
    assert invoke("check", root=root).exit_code == 0
    assert invoke("sweep", R1, "-o", str(root / "registry" / "servings" / "out.csv"), root=root).exit_code == 0


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_review_of_a_revision_names_no_temporary_folder(tmp_path: Path) -> None:
    # Round 24: `diff BASE HEAD` where HEAD renamed facts/cards/a40.toml (a card the llama.cpp stack's runs name)
    # said "card 'a40': not found in /tmp/passprice-diff-1_lpfmmh/facts/cards; a40 is a card of the facts passprice
    # ships, not of this registry (/tmp/passprice-diff-1_lpfmmh): copy …/a40.toml into
    # /tmp/passprice-diff-1_lpfmmh/facts/cards to use it here": a folder diff made for the revision and removed
    # before the line was read. The revision's paths are now relative to the registry, the folder its commit id.
    repo = copy_root(tmp_path)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "base")
    _git(repo, "mv", "facts/cards/a40.toml", "facts/cards/a40x.toml")
    _git(repo, "commit", "-q", "--no-verify", "-m", "rename")
    done = invoke("diff", "HEAD~1", "HEAD", root=repo)  # in-process: the same review as the console script's
    assert done.exit_code == 2, done.stderr
    assert "passprice-diff-" not in done.stdout + done.stderr
    line = done.stderr.splitlines()[-1]
    assert line.startswith("passprice: error: on HEAD: facts/stacks/llamacpp-cuda-2405.toml: ")
    # Since walkthrough 22 a card whose file was renamed is named by its file, not sent to the shipped copy.
    assert ("card 'a40': not found in facts/cards; facts/cards/a40x.toml is 'NVIDIA A40' too, the card passprice "
            "ships as a40 (its file renamed?): rename it back to a40.toml, or name the card a40x here") in line


def test_init_below_the_top_of_a_git_repository_warns_that_its_workflow_and_hook_never_run(tmp_path: Path) -> None:
    # Round 24: `init sub` inside a git checkout wrote sub/.github/workflows/facts.yml and
    # sub/.pre-commit-config.yaml, which GitHub and pre-commit never read (they read the repository's top only),
    # and advised `cd sub && git init`, a repository inside a repository: the review meant to catch a change that
    # moves a locked price never ran, without a word.
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    sub = repo / "sub"
    result = invoke("init", str(sub))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"passprice: warning: {sub} lies inside the git repository at {repo}: GitHub runs only {repo}/.github/"
        f"workflows/ and pre-commit reads only {repo}/.pre-commit-config.yaml, so the workflow and hook written in "
        "sub/ never run; move them there (the workflow's steps in sub: working-directory), or run init at the "
        "repository's top"
    ]
    assert result.stdout.splitlines()[-2] == f"next: cd {sub} && passprice import MODEL.gguf --name NAME"
    assert (sub / ".github" / "workflows" / "facts.yml").is_file()
    top = invoke("init", str(repo))  # the repository's own top: nothing to warn of
    # ... and no `git init` there either: it is a repository already (walkthrough 33)
    assert top.exit_code == 0 and top.stderr == "" and top.stdout.splitlines()[-2] == (
        f"next: cd {repo} && pre-commit install; passprice import MODEL.gguf --name NAME")


def test_a_sweep_output_suffix_picks_the_format_and_a_contradiction_is_refused(tmp_path: Path) -> None:
    # Round 24: `sweep R1 -o grid.json` wrote CSV into the .json file, exit 0 (--format defaulted to csv whatever the
    # file's name).
    out = tmp_path / "grid.json"
    done = invoke("sweep", "r1-qwen7b-h200", "--batches", "1,2", "-o", str(out))
    assert done.exit_code == 0, done.output
    rows = json.loads(out.read_text())
    assert [r["batch"] for r in rows] == [1, 2] and rows[0]["tokens_per_s"] == 996.0966124437687
    csv_out = tmp_path / "grid.csv"
    assert invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "-o", str(csv_out)).exit_code == 0
    assert csv_out.read_text().startswith("card,serving,checkpoint,")
    for args, says in (
        (["-o", str(tmp_path / "x.json"), "--format", "csv"],
         f"-o {tmp_path / 'x.json'}: a .json file, but the rows would be csv: give --format json, or name the file "
         ".csv"),
        (["-o", str(tmp_path / "x.csv"), "--json"],
         f"-o {tmp_path / 'x.csv'}: a .csv file, but the rows would be json: give --format csv, or name the file "
         ".json"),
    ):  # fmt: skip
        assert bad("sweep", "r1-qwen7b-h200", "--batches", "1", *args) == [f"passprice: error: {says}"]
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "x.csv").exists()
