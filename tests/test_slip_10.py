"""Slip round 10: pull requests that moved what a locked price is while the review passed them.

- The review's verdict is made by the running passprice, and the CI workflow installed the pull request's own
  (``pip install .``): a pull request that rewrote ``diff.py``'s exit status (outside the pricing model's digest, so
  no price moved for that reason) and moved a locked price in the same commit passed ``passprice diff`` run with its
  code (exit 0), and no line of the review named the code change (``src/`` is not a registry folder). The workflow
  now installs the base branch's passprice and runs the verdict with it before any of the pull request's code runs,
  and the review names every file of ``src/passprice`` HEAD changes.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from passprice.cli import cli
from test_diff import REPO, commit_all, git, make_lock_file
from test_slip_34 import printed  # one in-process review rendered per format, its stderr too

SERVING = "r1-qwen7b-h200"
SERVING_FILE = f"registry/servings/{SERVING}.toml"
EXIT = ("        if (self.broken or self.stale or self.unsound or self.dropping or self.head_check or "
        "self.requestioned\n                or self.quotes_not_found or self.quotes_lost or self.quotes_unchecked "
        "or self.quotes_mismatched\n                or self.runs_mismatched or self.quotes_against_removed "
        "or self.provenance_contradicted):\n")


#: The registry :func:`_base` builds, made once per test process (:func:`_build`) and copied for each caller.
_BUILT: list[Path] = []


def _base(path: Path) -> Path:
    """A registry with its own ``src/passprice`` (as this repository is), one lock, committed on ``main``, at
    ``path``: a copy (work tree and git history: the same commit) of the one :func:`_build` made in this process, where
    14 test files built and priced it afresh for each test (~1 s of CPU each; session 33)."""
    if not _BUILT:
        folder = Path(tempfile.mkdtemp(prefix="passprice-slip10-"))
        atexit.register(shutil.rmtree, folder, True)
        _BUILT.append(_build(folder / "registry"))
    shutil.copytree(_BUILT[0], path, symlinks=True)
    return path


def _build(path: Path) -> Path:
    """:func:`_base`'s registry built at ``path``: this checkout's registry files and ``src/passprice``, one lock of
    ``SERVING``, committed on ``main``."""
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    shutil.copytree(REPO / "src" / "passprice", path / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a registry with its code and a lock")
    return path


def test_a_pull_request_rewriting_the_review_s_verdict_is_named_and_judged_by_base_s_code(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    module = path / "src" / "passprice" / "review" / "verdict.py"  # the review's code lies in a subpackage
    text = module.read_text(encoding="utf-8")
    assert text.count(EXIT) == 1
    module.write_text(text.replace(EXIT, "        if False:\n"), encoding="utf-8")  # never 1
    serving = path / SERVING_FILE
    serving.write_text(serving.read_text(encoding="utf-8").replace("position = 2048", "position = 1024"),
                       encoding="utf-8")
    commit_all(path, "a quieter review; half the context")

    # Run by HEAD's own code (what `pip install .` of the pull request gave the workflow): the slip.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(path / "src")
    own = subprocess.run([sys.executable, "-B", "-m", "passprice", "--root", str(path), "diff", "main", "HEAD",
                          "--json"], cwd=path, env=env, capture_output=True, text=True, timeout=120)
    assert own.returncode == 0, own.stderr
    assert json.loads(own.stdout)["code_changed"] == ["src/passprice/review/verdict.py"]  # named, but passed

    # Run by BASE's code (this passprice: the workflow's reviewer): refused, and the code change named.
    status, (text, markdown), err = printed(path, "text", "markdown")  # one review, as text and as markdown
    assert status == 1, text + err
    assert f"passprice: refused: it moves the locked price of {SERVING} without re-locking" in err
    summary = text.splitlines()[1]
    assert summary.endswith("; passprice's own code changed (1 file)"), summary
    assert ("\npassprice's own code changed: the verdict is sound only from BASE's passprice (the CI workflow "
            "installs the base branch's to review): HEAD's code could pass its own change\n"
            "  src/passprice/review/verdict.py\n") in text
    assert "#### passprice's own code" in markdown and "- `src/passprice/review/verdict.py`" in markdown


def test_the_workflow_reviews_with_the_base_branch_s_passprice_before_the_pull_request_s_code_runs() -> None:
    workflow = (REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8")
    reviewer = workflow.index('. "$RUNNER_TEMP/reviewer/bin/activate"\n          python -m pip install .\n')
    verdict = workflow.index('"$RUNNER_TEMP/reviewer/bin/passprice" diff "refs/remotes/origin/$BASE_REF"')
    own = workflow.index("run: python -m pip install .")
    assert 'git worktree add --detach "$RUNNER_TEMP/reviewer-src" "refs/remotes/origin/$BASE_REF"' in workflow
    assert reviewer < verdict < own
    assert "          passprice diff" not in workflow  # no verdict from the pull request's own install
    from passprice.scaffold import workflow as template

    registry = template("python -m pip install -r requirements.txt")  # a registry `init` makes: its base's pins
    # the reviewer's install, the pull request's own, and the default branch's after a merge (slip 29: job merged)
    assert registry.count("python -m pip install -r requirements.txt") == 3
    merged = workflow.index("\n  merged:\n")
    job = workflow[workflow.index("\n  facts:\n"):merged].splitlines()  # the pull request job: the reviewer alone
    assert not [line for line in job if line.strip().startswith(("passprice diff", "run: passprice diff"))]
    assert workflow[merged:].count('run: passprice diff "$BEFORE" "$GITHUB_SHA"') == 1
    assert registry.index('cd "$RUNNER_TEMP/reviewer-src"') < registry.index("pip install -r requirements.txt")


def test_a_lock_moved_into_a_subfolder_with_its_serving_s_edit_fails_the_review_and_check(tmp_path: Path) -> None:
    """A lock moved to ``locks/sub/`` in the commit that moved its serving's price read "removed" (no floor dropped:
    another lock of the serving kept them), its price never compared with the one it still records; ``check`` counted
    one lock fewer and said "all holds" (exit 0)."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, SERVING, SERVING)
    make_lock_file(path, "r1-twin", SERVING)  # keeps every floor the moved lock set
    commit_all(path, "two locks of one serving")
    git(path, "checkout", "-q", "-b", "pr")
    (path / "locks" / "sub").mkdir()
    git(path, "mv", f"locks/{SERVING}.lock.toml", f"locks/sub/{SERVING}.lock.toml")
    serving = path / SERVING_FILE
    serving.write_text(serving.read_text(encoding="utf-8").replace("position = 2048", "position = 1024"),
                       encoding="utf-8")
    make_lock_file(path, "r1-twin", SERVING)  # the twin re-locked: only the moved lock is left behind
    commit_all(path, "move a lock aside; half the context")
    line = ("locks/sub: not a folder passprice reads: its 1 .toml file is neither checked nor priced (passprice reads "
            "locks/ itself, not the folders in it: move them to locks/)")
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 2 and f"passprice: error: {line}\n" in checked.stderr, checked.output
    result = CliRunner().invoke(cli, ["--root", str(path), "diff", "main", "HEAD"])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"passprice: error: on HEAD: {line}\n"
    assert "HEAD fails passprice check (1 problem)" in result.stdout.splitlines()[1]


DATASHEET = ("locator = \"Specifications table, H200 SXM column (a row: its label, "
             "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"\n"
             "provenance = \"published\"\nsource = \"nvidia-h200-product-page\"")  # the datasheet until cite102
WHITEPAPER = ("locator = \"Table 3, H100 SXM5 column: memory bandwidth 4.8 TB/s\"\nprovenance = \"published\"\n"
              "source = \"nvidia-hopper-whitepaper\"")


def _recite(lock: Path) -> None:
    """Re-cite the lock's pinned memory.bandwidth to another registered source (same value) and recompute the pinned
    fact's digest and the lock's, as someone reading passprice's code would."""
    import hashlib
    import tomllib

    from passprice.facts import Fact
    from passprice.locks import _canonical, _sorted

    text = lock.read_text(encoding="utf-8")
    assert text.count(DATASHEET) == 1
    text = text.replace(DATASHEET, WHITEPAPER)
    entry = dict(tomllib.loads(text)["facts"]["memory.bandwidth"])
    stated = entry.pop("digest")
    text = text.replace(stated, Fact.from_entry(entry, "memory.bandwidth").digest())
    body = _sorted(tomllib.loads(text))
    stated = body["lock"].pop("digest")
    lock.write_text(text.replace(stated, "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()),
                    encoding="utf-8")


def test_a_lock_s_pinned_citation_rewritten_by_hand_fails_the_review(tmp_path: Path) -> None:
    """The lock priced as it records and cited a registered source, so ``check`` passed and the review said
    "re-locked" (exit 0); ``audit LOCK`` traced the locked price to a document no card ever cited for it."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    _recite(path / "locks" / f"{SERVING}.lock.toml")
    commit_all(path, "re-cite the lock's memory bandwidth")
    audit = CliRunner().invoke(cli, ["--root", str(path), "audit", f"locks/{SERVING}.lock.toml"])
    assert "nvidia-hopper-whitepaper" in audit.stdout  # what an auditor would be shown

    result = CliRunner().invoke(cli, ["--root", str(path), "diff", "main", "HEAD"])
    assert result.exit_code == 1, result.output
    line = (f"locks/{SERVING}.lock.toml: facts.memory.bandwidth: pins 4.8 TB/s (published) cited "
            "nvidia-hopper-whitepaper: Table 3, H100 SXM5 column: memory bandwidth 4.8 TB/s, a fact no side of the "
            "change holds (HEAD's today: 4.8 TB/s (published) cited nvidia-h200-product-page: Specifications table, "
            "H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth "
            "4.8TB/s 4.8TB/s') and BASE's lock did not pin: a lock's facts are "
            "pinned by passprice lock from a registry, and a pin neither side holds (written by hand, or made before "
            f"a later commit of the change edited the fact) cannot be traced; re-lock it: passprice lock --update -o "
            f"locks/{SERVING}.lock.toml")
    # a pin no side holds: the review's own rule (tests/test_fix53w.py)
    assert (f"passprice: refused: HEAD fails the review's rules (1 problem; passprice check does not check them); "
            f"first: {line}") in result.stderr
    # Re-locked by passprice on today's facts, the same file passes.
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "re-lock")
    assert CliRunner().invoke(cli, ["--root", str(path), "diff", "main", "HEAD"]).exit_code == 0
