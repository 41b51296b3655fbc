"""Newcomer walkthrough 34: a company registry kept in its own git repository, wired into its tooling from the README.

A maintainer ran ``passprice init .`` in a fresh repository, added a fact, set up the pre-commit hook, ran each step
of the review workflow ``init`` wrote by hand, reviewed two pull requests with ``passprice diff`` and upgraded
passprice under a lock. What did not say what to do, each kept as a test:

- After an upgrade whose code moves a lock's figures, ``check`` and ``reproduce`` advised ``passprice lock --update
  -o LOCK`` for a lock whose file they had just named, and ``check``'s ``git log`` named it by its absolute path
  (``/tmp/…/locks/l3-h200.lock.toml``) where its other lines say ``locks/l3-h200.lock.toml``.
- The registry's README (``init``'s) said ``git init`` after ``init .`` at the top of a repository (the ``next:``
  line leaves it out), and neither it nor the README said to install pre-commit: ``pre-commit install`` in a fresh
  virtual environment is ``command not found`` (requirements.txt names passprice alone).
- The README's hook snippet (and ``.pre-commit-hooks.yaml``'s) said ``rev: main``: pre-commit 4.7 warns that "the
  'rev' field … appears to be a mutable reference … never updated after first install".
- The workflow's sticky-comment step took the first line of an empty review file as its marker when the base
  branch's passprice did not install (the first pull request of a registry, whose base has no requirements.txt):
  ``startswith("")`` selects the first comment of any ``github-actions[bot]`` workflow (a coverage report) to
  overwrite. Its header said the job fails on a broken floor or an unreadable file only; a moved locked price fails
  it too (exit 1, seen on a pull request raising the H200's bandwidth 4.8 → 4.89 TB/s under a lock).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import yaml

from cli_helpers import LISTED_MODEL, REPO, copy_root, invoke
from passprice.registry import find_root
from passprice.scaffold import plan, published_hooks, workflow

BEST = "locks/r1-qwen7b-h200-best.lock.toml"


def _redigested(path: Path, table: str, key: str, value: object) -> None:
    """``path``'s lock with ``[table] key = value`` and its digest computed again (as test_newcomer_20 writes it)."""
    import tomlkit

    from passprice.digests import sha256
    from passprice.locks import _PREAMBLE, _canonical, lock_document, read_lock

    body = lock_document(read_lock(path))
    body[table][key] = value
    del body["lock"]["digest"]
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    path.write_text(_PREAMBLE + tomlkit.dumps(body), encoding="utf-8")


def _written_by_other_code(root: Path) -> None:
    """The best lock as other code would have written it: another pricing-model digest, one more vector MAC."""
    lock = root / BEST
    import tomllib

    recorded = tomllib.loads(lock.read_text(encoding="utf-8"))["price"]["vector_macs"]
    _redigested(lock, "lock", "pricing_model", LISTED_MODEL)
    _redigested(lock, "price", "vector_macs", recorded + 1.0)


UPGRADED = (
    "  does NOT reproduce: the pricing model changed and moves the price (first: vector_macs); the lock's own price "
    "comes from the code that wrote it: the passprice this registry's requirements.txt named at the commit that last "
    f"changed the lock (`git show \"$(git log -1 --format=%H -- {BEST})\":requirements.txt`), installed in a virtual "
    f"environment of its own; or re-lock it with today's code (`passprice lock --update -o {BEST}`) and review the "
    "change"
)


def test_check_names_the_lock_file_in_the_re_lock_and_the_git_log_it_advises(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _written_by_other_code(root)
    out = invoke("check", root=root)
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    at = lines.index(f"lock r1-qwen7b-h200-best ({BEST}, locks serving r1-qwen7b-h200): FAILS")
    assert lines[at + 1] == UPGRADED  # was: `git log -1 --format=%H -- /tmp/…/root/locks/…` and `-o LOCK`
    assert str(tmp_path) not in lines[at + 1]


def test_reproduce_names_the_lock_file_as_given(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _written_by_other_code(root)
    out = invoke("reproduce", str(root / BEST), root=root)
    assert out.exit_code == 1, out.output
    assert out.stdout.splitlines()[1] == UPGRADED.replace(BEST, str(root / BEST))


def test_the_registry_readme_leaves_out_git_init_at_a_repository_top_and_installs_pre_commit(tmp_path: Path) -> None:
    fresh = plan(find_root(REPO)).files["README.md"].decode()
    lines = fresh.splitlines()
    at = lines.index("pip install -r requirements.txt")
    assert lines[at: at + 4] == [
        "pip install -r requirements.txt",
        "pip install pre-commit                   # the hook's runner (not in requirements.txt: CI runs no hook)",
        "git init && pre-commit install           # passprice check before each commit, the first too",
        'git add . && git commit -m "A passprice registry"',  # the hook installed first (tests/test_fix190.py)
    ]
    # `init .` in the company's own repository: the README's commands are the next: line's (no second `git init`).
    company = tmp_path / "company"
    company.mkdir()
    subprocess.run(["git", "init", "-q", str(company)], check=True)
    out = invoke("init", str(company))
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[-2].endswith("pre-commit install; passprice import MODEL.gguf --name NAME")
    readme = (company / "README.md").read_text(encoding="utf-8").splitlines()
    at = readme.index("pip install -r requirements.txt")
    assert readme[at + 2] == ("pre-commit install                       # passprice check before each commit, the "
                              "first too")
    assert readme[at + 3] == 'git add . && git commit -m "A passprice registry"'
    assert not any("git init" in line for line in readme)


def test_the_readme_installs_pre_commit_and_pins_the_published_hook_by_commit() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    own = text[text.index("## Your own registry"):text.index("## Reviewing a fact change")]
    block = own[own.index("```sh"):own.index("```", own.index("```sh") + 5)].splitlines()
    assert block.index("pip install pre-commit                                     # the hook's runner: "
                       "requirements.txt names passprice alone") + 1 == block.index(
        "git init && pre-commit install                             # passprice check before every commit, the "
        "first too") == block.index('git add . && git commit -m "A passprice registry"          # as init\'s next: '
                                    "line: the hook installed first") - 1
    assert "rev: main" not in text and "rev: main" not in published_hooks()
    assert "    rev: COMMIT                                  # a commit sha or tag of it, not a branch\n" in text
    assert "#       rev: COMMIT   # a commit sha or tag: pre-commit never updates a branch name once installed\n" in (
        published_hooks())
    flat = " ".join(text.split())
    assert ("`pre-commit try-repo /path/to/passprice passprice-check --all-files` tries the published hook from a "
            "checkout on disk") in flat
    assert ("Commit the registry `init` wrote to the default branch before the first pull request: the reviewer is "
            "the base branch's passprice, installed by its `requirements.txt`") in flat


def _sticky_step() -> str:
    """The run script of the workflow's sticky-comment step, as ``init`` writes it."""
    steps = yaml.safe_load(workflow("python -m pip install -r requirements.txt"))["jobs"]["facts"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "passprice diff (sticky pull-request comment)"]
    script: str = step["run"]
    return script


def _run_sticky(tmp_path: Path, review: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """The sticky step run by bash against a fake ``gh`` that logs each call and lists one comment of another
    workflow (id 7, a coverage report); what it printed, and the calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        'case "$*" in *--jq*) printf \'%s\' \'[{"id":7,"user":{"login":"github-actions[bot]"},'
        '"body":"Coverage 93 %"}]\' | jq -r "$(printf \'%s\' "$*" | sed \'s/.*--jq //\')";; esac\n',
        encoding="utf-8",
    )
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    temp = tmp_path / "runner"
    temp.mkdir()
    (temp / "passprice-diff.md").write_text(review, encoding="utf-8")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(temp),
           "GITHUB_REPOSITORY": "acme/registry", "PR": "12", "GH_TOKEN": "x"}
    done = subprocess.run(["bash", "-e", "-c", _sticky_step()], env=env, capture_output=True, text=True, timeout=60)
    return done, log.read_text(encoding="utf-8") if log.exists() else ""


def test_the_sticky_step_posts_nothing_when_no_review_was_written(tmp_path: Path) -> None:
    import shutil

    if shutil.which("jq") is None:
        import pytest

        pytest.skip("jq is not installed (the fake gh filters with it, as gh --jq does)")
    done, calls = _run_sticky(tmp_path / "empty", "")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no review to post: passprice diff wrote no comment (its step says why)\n"
    assert calls == ""  # was: PATCH repos/acme/registry/issues/comments/7, the coverage report, with an empty body
    done, calls = _run_sticky(tmp_path / "review", "<!-- passprice diff: this comment is updated in place on every "
                              "push -->\n✅ **passprice diff** …\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "posted a new comment\n"  # the coverage report is not the review's comment
    assert calls.splitlines()[-1].startswith("api --method POST repos/acme/registry/issues/12/comments -F body=@")


FLOOR_WARNING = (
    "passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.rewrite is estimated now, below the floor measured "
    "of lock qwen35-27b-h200-mtp: `passprice check` (the pre-commit hook) and the review fail it; restore the fact, or "
    "loosen that floor on purpose (`passprice lock --update -o locks/qwen35-27b-h200-mtp.lock.toml --force --require "
    "streams.rewrite=estimated`)"
)


def test_fact_set_says_when_an_edit_puts_a_fact_below_a_lock_s_floor(tmp_path: Path) -> None:
    # Walkthrough 34: the H200's memory.bandwidth set `estimated` under a lock flooring it at `published` printed only
    # its edit line (exit 0); the refusal came from the pre-commit hook at commit. Of the registered locks only the
    # Gated-DeltaNet MTP lock rests on the H200's streams.rewrite (README, Reviewing a fact change), at `measured`.
    root = copy_root(tmp_path)
    args = ("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1", "--source",
            "azure-ai-benchmarking-guide", "--locator", "BabelStream Mul share x 0.96 (an engineering estimate)")
    out = invoke(*args, "--provenance", "estimated", root=root)
    assert out.exit_code == 0, out.output
    warnings = out.stderr.splitlines()
    assert warnings[-1] == FLOOR_WARNING and sum("below the floor" in w for w in warnings) == 1
    # The lock is named as `check` names it: check fails it with the same re-lock.
    checked = invoke("check", root=root)
    assert checked.exit_code == 1
    assert ("(`passprice lock --update -o locks/qwen35-27b-h200-mtp.lock.toml --force --require "
            "streams.rewrite=estimated`)") in checked.stdout
    # Made stronger again, or kept at a floor's provenance: no such line.
    out = invoke(*args, "--provenance", "measured", root=root)
    assert out.exit_code == 0 and "below the floor" not in out.stderr, out.output
    # A fact no lock's price rests on (the H200's host.stream: no registered price holds sequences in host memory).
    out = invoke("fact", "set", "h200_sxm_141gb", "host.stream", "--value", "0.8125", "--unit", "1", "--provenance",
                 "assumed", "--source", "azure-ai-benchmarking-guide", "--locator", "an assumption", root=root)
    assert out.exit_code == 0 and "below the floor" not in out.stderr, out.output
    flat = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert " ".join(FLOOR_WARNING.removeprefix("passprice: warning: facts/cards/h200_sxm_141gb.toml: ").split()) in flat
