"""passprice init: a registry of one's own, outside any checkout. Its folders are Root's (a record kind added to Root
is carried without a change to init); the reference facts are copied and the user's own folders start empty; every
command works in it; its pre-commit hook really runs `passprice check` (pre-commit run --all-files on a temporary git
repository: passes, then fails on a broken file); and, end to end, a wheel built from this checkout installed in a
fresh virtual environment does `init demo && cd demo && import && price` and the hook there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, invoke
from passprice.registry import Root, embedded_root, find_root
from passprice.scaffold import (
    HOOK_RUNS,
    PLACEHOLDER,
    installed_requirement,
    plan,
    published_hooks,
    record_folders,
    requirement_from_direct_url,
    write,
)

HEADER = REPO / "tests/data/gemma3-270m-q4_k_m.header.gguf.xz"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def test_the_folders_are_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folders = record_folders(Root(tmp_path))
    assert folders["cards"] == "facts/cards" and folders["checkpoints"] == "registry/checkpoints"
    assert folders["locks"] == "locks" and "schema" not in folders
    # Every Path property of Root below the root is a record folder: one added there is carried by init.
    monkeypatch.setattr(Root, "widgets", property(lambda self: self.path / "registry" / "widgets"), raising=False)
    monkeypatch.setattr(Root, "gadgets", property(lambda self: self.path / "facts" / "gadgets"), raising=False)
    monkeypatch.setattr(Root, "cache", property(lambda self: self.path / ".passprice-cache"), raising=False)
    assert record_folders(Root(tmp_path))["widgets"] == "registry/widgets"
    assert "cache" not in record_folders(Root(tmp_path))
    made = plan(find_root(REPO))
    assert "registry/widgets/.gitkeep" in made.files and "facts/gadgets/.gitkeep" in made.files
    assert "registry/widgets" in made.folders and "registry/widgets" not in made.copied


def test_init_writes_a_registry(tmp_path: Path) -> None:
    result = invoke("init", str(tmp_path / "mine"))
    assert result.exit_code == 0, result.output
    mine = tmp_path / "mine"
    cards = sorted(p.name for p in (REPO / "facts/cards").glob("*.toml"))
    assert sorted(p.name for p in (mine / "facts/cards").glob("*.toml")) == cards
    for name in cards:
        assert (mine / "facts/cards" / name).read_bytes() == (REPO / "facts/cards" / name).read_bytes()
    assert sorted(p.name for p in (mine / "schema").glob("*.json")) == sorted(
        p.name for p in (REPO / "schema").glob("*.json")
    )
    for own in ("registry/servings", "locks"):
        assert [p.name for p in (mine / own).iterdir()] == [".gitkeep"]
    # The measurements the reference stack is fitted from travel with it (check re-runs the fit from its runs), and
    # so do the checkpoint entries those runs ran: the llama 2/3 family, and (session 33's PR runs) gpt-oss-20b-mxfp4
    # and qwen3-30b-a3b-q4_0, and (session 34's vLLM runs) gpt-oss-120b-mxfp4 and (moe48) deepseek-v2-lite-q4_0, not
    # the r1 or other Qwen entries nothing measured.
    measured = sorted(p.name for p in (REPO / "registry/measurements").glob("*.toml"))
    assert measured == ["llamacpp-points.toml", "llamacpp-pr15525-moe.toml", "llamacpp-pr16834-moe.toml",
                        "llamacpp-pr20586-moe.toml", "llamacpp-show-and-tell-15396-moe.toml",
                        "lmdeploy-turbomind-a100.toml", "vllm-inferencemax-gpt-oss-120b-moe.toml",
                        "vllm-inferencex-pr1061-moe.toml",
                        "xiongjiedai-llama3-llamabench.toml"]
    assert sorted(p.name for p in (mine / "registry/measurements").glob("*.toml")) == measured
    ran = sorted(p.name for p in (mine / "registry/checkpoints").iterdir())
    assert "llama3-70b-q4_k_m.toml" in ran and "llama2-7b-q4_0.toml" in ran
    assert "deepseek-r1-distill-qwen-7b-q4_k_m.toml" not in ran and ".gitkeep" not in ran
    assert len(ran) == 15 and "gpt-oss-20b-mxfp4.toml" in ran and "qwen3-30b-a3b-q4_0.toml" in ran
    assert "gpt-oss-120b-mxfp4.toml" in ran
    assert "deepseek-v2-lite-q4_0.toml" in ran
    assert "qwen3-30b-a3b-q4_k_m.toml" not in ran
    # Editors: every folder's files mapped to the schema their #:schema line names.
    taplo = tomllib.loads((mine / ".taplo.toml").read_text(encoding="utf-8"))
    rules = {r["include"][0]: r["schema"]["path"] for r in taplo["rule"]}
    assert rules["facts/cards/*.toml"] == "./schema/card.schema.json"
    assert rules["registry/servings/*.toml"] == "./schema/serving.schema.json"
    assert rules["locks/*.toml"] == "./schema/lock.schema.json"
    for path in rules.values():
        assert (mine / path).is_file()
    hook = (mine / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "entry: passprice check" in hook and "language: system" in hook
    assert "always_run: true" in hook and "files:" not in hook  # every commit (slip 29)
    assert "python -m pip install -r requirements.txt" in (mine / ".github/workflows/facts.yml").read_text()
    # How this passprice was installed (the test environment's: a checkout, editable or not, or a wheel file).
    installed = installed_requirement()
    # (a clone installed not editable and committed: pinned at its commit, tests/test_bound111.py)
    assert installed.origin == "local" and installed.line.startswith(("passprice @ file:///", "passprice @ git+file:///"))
    assert (mine / "requirements.txt").read_text().splitlines()[-1] == installed.line
    assert f"  requirements.txt: {installed.line}\nfirst: requirements.txt installs passprice from this machine (" \
        in result.stdout
    # Every command works there: import, price, lock, check.
    assert invoke("import", str(HEADER), "--name", "mine", root=mine).exit_code == 0
    priced = invoke("price", "--checkpoint", "mine", "--card", "h100_sxm5_80gb", "--batch", "8", "--json", root=mine)
    assert priced.exit_code == 0, priced.output
    assert '"batch": 8' in priced.stdout
    locked = invoke("lock", "--checkpoint", "mine", "--card", "h100_sxm5_80gb", "--name", "mine-h100", root=mine)
    assert locked.exit_code == 0 and (mine / "locks/mine-h100.lock.toml").is_file(), locked.output
    checked = invoke("check", root=mine)
    assert checked.exit_code == 0 and "all holds" in checked.stdout, checked.output


def test_init_replaces_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken" / "facts").mkdir(parents=True)
    bad("init", str(tmp_path / "taken"), says="already holds facts; init writes a registry into an empty folder")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["facts"]  # nothing written, no staging left
    (tmp_path / "file").write_text("x")
    bad("init", str(tmp_path / "file"), says="file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "taken"]
    # A folder below a file: the file is named (the attacker's run said only "cannot write: File exists").
    bad("init", str(tmp_path / "file" / "sub" / "deeper"),
        says=f"{tmp_path}/file/sub/deeper: cannot write: {tmp_path}/file is a regular file, not a folder")  # fmt: skip
    # requirements.txt gets one line: a newline in --requirement would write a second requirement.
    bad("init", "--requirement", "passprice\nevil-package", str(tmp_path / "new"),
        says="--requirement: 'passprice\\nevil-package' is not one requirement line")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "taken"]


def test_the_embedded_facts_say_how_to_begin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli

    # Outside any checkout the embedded default is read, and import is refused with the way out.
    monkeypatch.chdir(tmp_path)
    assert find_root().embedded and embedded_root().embedded
    result = CliRunner().invoke(cli, ["import", str(HEADER)])
    assert result.exit_code == 2
    assert "read-only" in result.stderr  # "the embedded facts are", or an editable install's checkout named as such
    assert "; start a registry of your own with `passprice init DIR`" in result.stderr


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def _pre_commit(folder: Path, bin_dir: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit run --all-files --verbose`` in ``folder``, with ``bin_dir`` first on PATH (the passprice the
    ``language: system`` hook runs) and pre-commit's cache in ``home`` (nothing outside the test is touched)."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose", "--color", "never"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )


def test_the_pre_commit_hook_runs_passprice_check(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    registry = tmp_path / "registry"
    write(plan(find_root(REPO)), registry)
    _git(registry, "init", "-q")
    _git(registry, "add", "-A")
    _git(registry, "commit", "-q", "--no-verify", "-m", "a registry")
    bin_dir = Path(sys.executable).parent
    done = _pre_commit(registry, bin_dir, tmp_path / "pre-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passprice check" in done.stdout and "Passed" in done.stdout
    assert "all holds" in done.stdout  # passprice check's own last line, shown by --verbose
    # A broken card: the hook fails, naming the file and the key.
    card = registry / "facts/cards/b200.toml"
    card.write_text(card.read_text(encoding="utf-8").replace('unit = "TB/s"', 'unit = "GB"', 1), encoding="utf-8")
    done = _pre_commit(registry, bin_dir, tmp_path / "pre-commit")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "facts/cards/b200.toml: memory.bandwidth.unit" in done.stdout


def test_the_project_hook_manifest_is_valid() -> None:
    """The hook a registry in another repository uses (.pre-commit-hooks.yaml, language: python: pre-commit builds
    passprice from its repository, which needs the package index) is checked by pre-commit's own schema."""
    pytest.importorskip("pre_commit")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("direct_url", "line", "origin"),
    [
        # PEP 610's own examples, as pip records them.
        ('{"url": "https://github.com/pypa/pip.git", "vcs_info": {"vcs": "git", "requested_revision": "1.3.1", '
         '"commit_id": "7921be1537eac1e97bc40179a57f0349c2aee67d"}}',
         "passprice @ git+https://github.com/pypa/pip.git@7921be1537eac1e97bc40179a57f0349c2aee67d", "vcs"),
        ('{"url": "https://github.com/OWNER/mono.git", "subdirectory": "passprice", "vcs_info": {"vcs": "git", '
         '"commit_id": "abc123"}}', "passprice @ git+https://github.com/OWNER/mono.git@abc123#subdirectory=passprice",
         "vcs"),
        ('{"url": "https://example.org/passprice-0.1.0-py3-none-any.whl", "archive_info": {"hashes": {"sha256": '
         '"2dc6b5a470a1bde68946f263f1af1515a2574a150a30d6ce02c6ff742fcc0db9"}}}',
         "passprice @ https://example.org/passprice-0.1.0-py3-none-any.whl", "archive"),
        ('{"url": "file:///home/me/passprice-0.1.0-py3-none-any.whl", "archive_info": {}}',
         "passprice @ file:///home/me/passprice-0.1.0-py3-none-any.whl", "local"),
        ('{"url": "file:///home/me/passprice", "dir_info": {"editable": true}}', "passprice @ file:///home/me/passprice",
         "local"),
        # Installed from an index (no direct_url.json), or a record that does not read: the placeholder.
        (None, PLACEHOLDER, "unknown"),
        ("{not json", PLACEHOLDER, "unknown"),
        ('{"url": "https://a b"}', PLACEHOLDER, "unknown"),
    ],
)
def test_the_requirement_is_how_passprice_was_installed(direct_url: str | None, line: str, origin: str) -> None:
    found = requirement_from_direct_url(direct_url)
    assert (found.line, found.origin) == (line, origin)
    assert (found.advice() is None) == (origin in ("vcs", "archive"))


def test_an_unknown_install_leaves_a_placeholder_pip_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``passprice==0.1.0`` is on no package index: where how passprice was installed is not known, init writes a
    placeholder that pip refuses naming the line, and says on its ``first:`` line and in the README what to write."""
    import importlib.metadata

    class FromAnIndex:
        def read_text(self, name: str) -> str | None:
            return None

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: FromAnIndex())
    result = invoke("init", str(tmp_path / "mine"))
    assert result.exit_code == 0, result.output
    mine = tmp_path / "mine"
    assert (mine / "requirements.txt").read_text().splitlines()[-1] == PLACEHOLDER
    advice = ("requirements.txt holds a placeholder: passprice is on no package index, and how this one was installed "
              "is not known; write the line CI installs passprice by (passprice @ git+https://…@COMMIT, a wheel's "
              "URL), or run init again with --requirement SPEC")
    assert f"\nfirst: {advice}\nnext: cd {mine} && git init" in result.stdout
    readme = (mine / "README.md").read_text()
    assert f"**First:** {advice}.\n\n```sh\npip install -r requirements.txt\n" in readme
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "-r",
         str(mine / "requirements.txt")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode != 0 and "Invalid requirement: 'FILL IN: how this registry installs passprice" in done.stderr
    # --requirement SPEC: the line given, and nothing to fill in.
    spec = "passprice @ git+https://github.com/OWNER/passprice@0123abcd"
    given = invoke("init", "--requirement", spec, str(tmp_path / "given"))
    assert given.exit_code == 0 and "first:" not in given.stdout
    assert (tmp_path / "given" / "requirements.txt").read_text().splitlines()[-1] == spec
    assert "**First:**" not in (tmp_path / "given" / "README.md").read_text()
    bad("init", "--requirement", "a\nb", str(tmp_path / "two"),
        says="--requirement: 'a\\nb' is not one requirement line")


def test_both_hooks_run_on_every_commit() -> None:
    """The published hook watched facts|registry|locks, the one init writes facts|locks|registry|schema|sources: a
    broken sources/ file was skipped by the first. Then both watched one list (Root's record folders, schema/ and any
    .gitattributes), which missed a commit removing only a registry document a source names (slip 29): both run on
    every commit now (``always_run``), from one line."""
    import yaml

    published = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8") == published_hooks()  # python docs/make.py
    written = yaml.safe_load(plan(find_root(REPO)).files[".pre-commit-config.yaml"].decode())
    (hook,) = published
    (local,) = written["repos"][0]["hooks"]
    assert HOOK_RUNS == "always_run: true"
    for each in (hook, local):
        assert each["always_run"] is True and each["pass_filenames"] is False and "files" not in each


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks in this checkout (as they are in the work tree), copied to ``dest``: the source a wheel
    is built from here, whatever else lies in the work tree."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def test_a_wheel_in_a_fresh_venv_outside_any_checkout(tmp_path: Path) -> None:
    """The acceptance run: a wheel of passprice, a fresh virtual environment with it installed, then, in a folder
    that is no checkout, ``passprice init demo && cd demo && passprice import … && passprice price …`` and
    ``pre-commit run --all-files`` there running the wheel's ``passprice check``.

    Offline: the wheel is built without build isolation (hatchling from the test extras), installed with
    ``--no-deps``, and the fresh environment sees passprice's dependencies through a ``.pth`` line naming this
    environment's site-packages (the wheel's own passprice comes first on sys.path)."""
    pytest.importorskip("hatchling")
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    source = _tracked_copy(tmp_path / "source")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w",
         str(wheels), str(source)],
        check=True, capture_output=True, timeout=120,
    )
    (wheel,) = wheels.glob("passprice-*.whl")
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True, timeout=120)
    python = fresh / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
         str(wheel)],
        check=True, capture_output=True, timeout=120,
    )
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    Path(site, "borrowed-dependencies.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, **GIT_ENV, "PATH": f"{fresh / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit")}
    env.pop("VIRTUAL_ENV", None)

    def sh(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)

    where = sh("python -c 'import passprice, passprice.registry as r; print(passprice.__file__); "
               "print(r.embedded_root().path)'", work)
    assert where.returncode == 0, where.stderr
    module, data = where.stdout.splitlines()
    assert module.startswith(site) and data == str(Path(site, "passprice", "_data"))
    done = sh(
        f"passprice init demo && cd demo && passprice import {HEADER} --name my-gemma && "
        "passprice price --checkpoint my-gemma --card h100_sxm5_80gb --batch 8 --json",
        work,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    price = done.stdout[done.stdout.index("{"):]
    assert json.loads(price)["batch"] == 8 and json.loads(price)["card"] == "h100_sxm5_80gb"
    demo = work / "demo"
    assert (demo / "registry/checkpoints/my-gemma.toml").is_file()
    # The README's first step: requirements.txt names the wheel this passprice was installed from, which pip takes.
    requirement = (demo / "requirements.txt").read_text().splitlines()[-1]
    assert requirement == f"passprice @ {wheel.resolve().as_uri()}"
    first = subprocess.run(
        # --ignore-installed: the answer must not depend on whether this environment has passprice 0.1.0 already
        # (CI installs it from the checkout, not editable, and pip then says "already installed").
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--ignore-installed", "-r",
         str(demo / "requirements.txt")],
        capture_output=True, text=True, timeout=120,
    )
    assert first.returncode == 0 and "Would install passprice-0.1.0" in first.stdout, first.stdout + first.stderr
    hook = sh("git init -q && git add -A && git commit -q --no-verify -m demo && "
              "python -m pre_commit run --all-files --verbose --color never", demo)
    # pre-commit itself is this environment's (run through the fresh python, which borrows it); the hook runs the
    # fresh environment's passprice console script.
    assert hook.returncode == 0, hook.stdout + hook.stderr
    assert "passprice check" in hook.stdout and "Passed" in hook.stdout
    assert "16 checkpoints" in hook.stdout and "all holds" in hook.stdout  # the 15 init carries, and my-gemma


def test_init_with_examples_copies_the_registry_too(tmp_path: Path) -> None:
    result = invoke("init", "--examples", str(tmp_path / "scratch"))
    assert result.exit_code == 0, result.output
    scratch = tmp_path / "scratch"
    for folder in ("registry/servings", "registry/checkpoints", "locks"):
        assert sorted(p.name for p in (scratch / folder).iterdir()) == sorted(
            p.name for p in (REPO / folder).iterdir() if p.is_file()
        )
    reproduced = invoke("reproduce", "r1-qwen7b-h200", root=scratch)
    # The recorded price, bit for bit (the pricing model's digest may have moved on since the lock: said, no failure).
    assert reproduced.exit_code == 0 and "\n  reproduces" in reproduced.stdout
    assert ": 996.0966124437687 tokens/s at batch 1, binds on memory" in reproduced.stdout


def test_a_device_is_never_replaced(tmp_path: Path) -> None:
    """``-o /dev/null --force`` used to rename a regular file over the device node; a device, pipe or socket is now
    refused and left as it is (shown on a pipe of the test's own, so a regression cannot harm the machine)."""
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    bad("sweep", "r1-qwen7b-h200", "--batches", "1", "-o", str(fifo), "--force",
        says="is a FIFO (named pipe), not a regular file: passprice replaces regular files only")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_the_tour_edits_only_a_scratch_registry() -> None:
    """The README's tour reads the checkout; its editing commands (import, lock, fact set) run in a registry made by
    ``passprice init --examples scratch`` and removed at the end."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tour = readme[readme.index("## A tour"):readme.index("## Facts")]
    blocks = [b.split("```", 1)[0] for b in tour.split("```sh\n")[1:]]
    reading, scratch = blocks[0], blocks[1]
    editing = ("passprice import", "passprice lock", "passprice fact set", "--force")
    assert not any(word in reading for word in editing)
    lines = scratch.strip().splitlines()
    assert lines[0].startswith("passprice init --examples scratch && cd scratch")
    assert lines[-1].startswith("cd .. && rm -rf scratch")
    assert all(word in scratch for word in editing[:3])


def test_a_wheel_refuses_untracked_facts(tmp_path: Path) -> None:
    """In a git checkout, a wheel is built from the registry as git tracks it: an untracked card is refused by name."""
    pytest.importorskip("hatchling")
    source = _tracked_copy(tmp_path / "source")
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "--no-verify", "-m", "tracked")
    (source / "facts/cards/my-edit.toml").write_text("# an experiment\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
         str(tmp_path / "wheels"), str(source)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode != 0
    # One line, no traceback around it (the hook raised RuntimeError: pip printed the backend's traceback).
    assert "Traceback" not in done.stdout + done.stderr
    # The folders named are the ones bundled, read from pyproject.toml's force-include (sources/ among them).
    line = (
        "passprice: error: a wheel bundles facts/, locks/, registry/, schema/ and sources/ as git tracks them, and 1 "
        "file differs: facts/cards/my-edit.toml (not tracked by git); commit them, or undo them (git restore / git "
        "clean), or set PASSPRICE_BUILD_UNTRACKED=1 to bundle them anyway"
    )
    assert line in [text.strip() for text in (done.stdout + done.stderr).splitlines()]
    assert not (tmp_path / "wheels").exists() or not list((tmp_path / "wheels").glob("*.whl"))


def test_the_summary_names_the_checkpoint_entries_init_carries_and_says_no_cd_into_here(tmp_path: Path) -> None:
    """The newcomer walkthrough: init copied 11 checkpoint entries (those the reference stacks' measured runs name)
    and its summary said `registry/checkpoints/   empty`; run without a folder it printed `next: cd . && …`."""
    result = invoke("init", str(tmp_path / "mine"))
    assert result.exit_code == 0, result.output
    carried = sorted(p.name for p in (tmp_path / "mine" / "registry" / "checkpoints").glob("*.toml"))
    # 10 the llama.cpp runs ran, and llama2-13b-f16 of the LMDeploy runs (issue 11); the MoE runs of llama.cpp PR
    # #16834 added gpt-oss-20b-mxfp4 (moe43) and qwen3-30b-a3b-q4_0 (moe44), the vLLM runs gpt-oss-120b-mxfp4 (moe46),
    # those of PR #15525 deepseek-v2-lite-q4_0 (moe48)
    assert len(carried) == 15
    assert {"gpt-oss-20b-mxfp4.toml", "qwen3-30b-a3b-q4_0.toml", "gpt-oss-120b-mxfp4.toml",
            "deepseek-v2-lite-q4_0.toml"} <= set(carried)
    assert (
        f"  registry/checkpoints/   {len(carried)} entries the reference stacks' measured runs name, copied from "
    ) in result.stdout
    assert "  registry/servings/      empty\n" in result.stdout
    here = tmp_path / "here"
    here.mkdir()
    cwd = os.getcwd()
    os.chdir(here)
    try:
        result = invoke("init")
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    assert "\nnext: git init && pre-commit install; passprice import MODEL.gguf --name NAME\n" in result.stdout
