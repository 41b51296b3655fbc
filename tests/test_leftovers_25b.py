"""Leftovers of session 25 (issue 13), each reproduced first.

1. ``validate`` ends with a line naming the unregistered stacks and the ``passprice price … --stack S`` command that
   prices such a run under a registered one, and ``reproduce`` names the commit whose code wrote an older lock; neither
   was in ``--json``. Now ``validate --json``'s ``unregistered`` and ``reproduce --json``'s ``pricing_model.commit``.
2. ``audit LOCK`` ran one ``git show`` a source the lock's facts cite (6 git processes for 3 sources, 9 for 5): the
   records and documents at the lock's commit are now read by one ``git cat-file --batch`` (4 processes however
   many sources), its output the same byte for byte.
3. The review's summary read "2 to verify in its source": "in their sources" for more than one.
4. The listings' lines for a file that does not read (``cards``, ``servings``, ``checkpoints``, ``sources``, and
   ``compare``'s every card, under ``--root``) named it by absolute path where ``check`` names it relative to the
   registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import LISTED_MODEL, REPO, copy_root, invoke

# 1. validate's and reproduce's last words, in --json too.


def test_1_validate_json_names_the_unregistered_runs_and_their_price_command() -> None:
    data = json.loads(invoke("validate", "--json").stdout)
    u = data["unregistered"]
    # the text's last line: "stack not registered: 16 runs of llamacpp-cuda-2312, … (stacks registered: …)"
    stacks = ["llamacpp-cuda-2312", "llamacpp-cuda-2401", "llamacpp-cuda-2404", "llamacpp-cuda-2404-graphs",
              "llamacpp-cuda-2508", "llamacpp-cuda-2508-pr15525", "llamacpp-cuda-2510", "llamacpp-cuda-2511",
              "llamacpp-cuda-2603", "vllm-cuda-2601", "vllm-rocm-0170"]
    assert u["stacks"] == stacks
    assert u["registered"] == ["llamacpp-cuda-2405", "lmdeploy-turbomind-2312"]
    # 16, llamacpp-pr16834-moe.toml's 3 (moe43) and 3 more (moe44), pr20586's 10 (moe45); moe46's 4 llama.cpp runs of
    # gpt-oss-20b and 12 vLLM runs of gpt-oss-120b; pr15525's 19 (moe48)
    assert len(u["runs"]) == 67
    assert sorted({r["stack"] for r in u["runs"]}) == stacks
    by_id = {r["id"]: r for r in u["runs"]}  # each run by its id: the list is in file order, which new files shift
    assert u["runs"][0] == {
        "id": "xd2.h100_pcie_80gb.l2-7b-q4_0.main", "stack": "llamacpp-cuda-2312",
        "price_command": "passprice price --checkpoint llama2-7b-q4_0 --card h100_pcie_80gb --batch 1 --limit 512 "
                         "--position 384 --stack S"}
    # a run at depth 32,768 reading 512 positions more: --limit 33,280, --position their mean (32,768 + 33,280) / 2
    assert by_id["pr17505.rtx_4090.l31-8b-q4_0.d32768"] == {
        "id": "pr17505.rtx_4090.l31-8b-q4_0.d32768", "stack": "llamacpp-cuda-2511",
        "price_command": "passprice price --checkpoint llama31-8b-q4_0 --card rtx_4090 --batch 1 --limit 33280 "
                         "--position 33024 --stack S"}
    # a mixture of experts' run: its command names its routing record (moe43)
    assert by_id["pr16834.rtx_4090.gpt-oss-20b-mxfp4.tg512"] == {
        "id": "pr16834.rtx_4090.gpt-oss-20b-mxfp4.tg512", "stack": "llamacpp-cuda-2510",
        "price_command": "passprice price --checkpoint gpt-oss-20b-mxfp4 --card rtx_4090 --batch 1 --limit 512 "
                         "--position 256 --routing uniform --stack S"}
    assert by_id["pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg512"] == {
        "id": "pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg512", "stack": "llamacpp-cuda-2510",
        "price_command": "passprice price --checkpoint qwen3-30b-a3b-q4_0 --card rtx_4090 --batch 1 --limit 512 "
                         "--position 256 --routing uniform --stack S"}
    # a run of many token-rows a pass: --batch its rows (moe45)
    assert by_id["pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub512"] == {
        "id": "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub512", "stack": "llamacpp-cuda-2603",
        "price_command": "passprice price --checkpoint gpt-oss-20b-mxfp4 --card rtx_3090 --batch 512 --limit 512 "
                         "--position 256 --routing uniform --stack S"}
    # a serving benchmark's run: B requests in flight of 1,024 prompt tokens, decoding positions 1,024 to 2,048 (moe46)
    assert by_id["ix1061.mi300x.gpt-oss-120b-mxfp4.c256"] == {
        "id": "ix1061.mi300x.gpt-oss-120b-mxfp4.c256", "stack": "vllm-rocm-0170",
        "price_command": "passprice price --checkpoint gpt-oss-120b-mxfp4 --card mi300x --batch 256 --limit 2048 "
                         "--position 1536 --routing uniform --stack S"}
    # a microbatch run of PR #15525's branch, a stack of its own (moe48)
    assert by_id["pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub32"] == {
        "id": "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub32", "stack": "llamacpp-cuda-2508-pr15525",
        "price_command": "passprice price --checkpoint deepseek-v2-lite-q4_0 --card rtx_3090 --batch 32 --limit 512 "
                         "--position 256 --routing uniform --stack S"}
    # the text names the first run's command, word for word
    last = invoke("validate").stdout.splitlines()[-1]
    assert f"e.g. {u['runs'][0]['id']}: `{u['runs'][0]['price_command']}` (" in last
    # every run's stack registered: null
    assert json.loads(invoke("validate", "--stack", "llamacpp-cuda-2405", "--json").stdout)["unregistered"] is None


def test_1_reproduce_json_names_the_commit_whose_code_wrote_the_lock(tmp_path: Path) -> None:
    from test_newcomer_29 import _redigested

    root = copy_root(tmp_path)
    # A checkout of passprice itself (a registry of one's own adds the requirements.txt line: test_newcomer_33).
    (root / "src" / "passprice").mkdir(parents=True)
    (root / "src" / "passprice" / "pins.py").write_text('"""The code of the commit."""\n', encoding="utf-8")
    lock = root / "locks" / "qwen3-30b-a3b-h200.lock.toml"
    _redigested(lock, lock, LISTED_MODEL)

    def git(*args: str) -> str:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", "GIT_COMMITTER_DATE": "2026-12-03T12:00:00+00:00",
               "GIT_AUTHOR_DATE": "2026-12-03T12:00:00+00:00", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "the lock, written by the old code")
    wrote = git("rev-parse", "HEAD")[:12]
    handed = tmp_path / "old.lock.toml"
    handed.write_bytes(lock.read_bytes())
    _redigested(handed, lock, "sha256:2516003eb31b4a1ce53a7ec3a98c5bcfa8d819e7ee158f9105bd12160d72271c")  # listed
    git("commit", "-qam", "re-locked")
    out = json.loads(invoke("reproduce", str(handed), "--json", root=root).stdout)
    # Before: no key; the text alone said "the lock's code is commit WROTE's (2026-12-03: …)".
    assert out["pricing_model"]["recorded"] == LISTED_MODEL
    assert out["pricing_model"]["changed"] is True
    assert out["pricing_model"]["commit"] == {"hash": wrote, "date": "2026-12-03"}
    assert len(wrote) == 12
    assert f"the lock's code is commit {wrote}'s (2026-12-03: " in invoke("reproduce", str(handed), root=root).stdout
    # a digest no lock of the history records, and a lock of today's code: null
    _redigested(lock, handed, "sha256:3526de8adff3d5abb540d90eb88141bf23bc6513deae4aa9e1885c7f9751b120")  # listed
    assert json.loads(invoke("reproduce", str(handed), "--json", root=root).stdout)["pricing_model"]["commit"] is None
    # the lock re-locked since names that commit; a lock of today's code names none (its model unchanged)
    relocked = git("rev-parse", "HEAD")[:12]
    _redigested(lock, handed, "sha256:2516003eb31b4a1ce53a7ec3a98c5bcfa8d819e7ee158f9105bd12160d72271c")  # listed
    model = json.loads(invoke("reproduce", str(handed), "--json", root=root).stdout)["pricing_model"]
    assert model["commit"] == {"hash": relocked, "date": "2026-12-03"} and relocked != wrote
    _redigested(lock, handed, model["now"])
    model = json.loads(invoke("reproduce", str(handed), "--json", root=root).stdout)["pricing_model"]
    assert model["changed"] is False and model["commit"] is None


# 2. audit LOCK: the sources' records at the lock's commit from one git process.


def _old_sources_since_lock(root: Any, lock_file: Any, ids: Iterable[str]) -> tuple[Any, ...]:
    """The code before (session 25): one ``git show`` a record and one a document."""
    from passprice.errors import InputError
    from passprice.gitread import run_git
    from passprice.schema import read_bytes
    from passprice.sourcechange import DOCUMENT_FIELDS, SourceSinceLock, _shown, _table, document_digest

    ids = sorted(set(ids))
    if not ids or root.embedded:
        return ()
    lock = Path(lock_file)
    try:
        top = Path(run_git(root.path, ["rev-parse", "--show-toplevel"]).decode("utf-8", "surrogateescape").strip())
        rel_lock = lock.resolve().relative_to(top.resolve()).as_posix()
        if run_git(top, ["status", "--porcelain", "--", rel_lock]).strip():
            return ()
        said = run_git(top, ["log", "-1", "--format=%H%x00%cI", "--", rel_lock]).decode("ascii", "replace").strip()
        if not said:
            return ()
        commit, when = said.split("\0", 1)
        sources = root.path.resolve().relative_to(top.resolve()) / "sources"
        out = []
        for source_id in ids:
            now = _table(root, source_id)
            if now is None:
                continue
            try:
                text = run_git(top, ["show", f"{commit}:{(sources / f'{source_id}.toml').as_posix()}"])
                then = tomllib.loads(text.decode("utf-8")).get("source", {})
            except (subprocess.CalledProcessError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            changed = [f"{k}: {_shown(then.get(k))} → {_shown(now[k])}" for k in DOCUMENT_FIELDS
                       if _shown(then.get(k)) != _shown(now[k])]
            path = now.get("path")
            if path is not None and path == then.get("path"):
                try:
                    old = run_git(top, ["show", f"{commit}:{(sources.parent / path).as_posix()}"])
                    if document_digest(old) != document_digest(read_bytes(root.path / path)):
                        changed.append(f"{path} rewritten")
                except (subprocess.CalledProcessError, InputError, OSError):
                    pass
            if changed:
                out.append(SourceSinceLock(source_id, commit, when, tuple(changed)))
        return tuple(out)
    except (InputError, OSError, ValueError, subprocess.CalledProcessError):
        return ()


def test_2_an_old_locks_audit_reads_its_sources_with_one_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import passprice.sourcechange
    from test_diff import commit_all, git

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    # since the locks: a source's address, and a document a source names (the MTP drafting record, a comment)
    source = path / "sources" / "nvidia-h200-datasheet.toml"
    old = 'url = "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446"'
    assert source.read_text().count(old) == 1
    source.write_text(source.read_text().replace(old, 'url = "https://example.com/h200-2026.pdf"'))
    with (path / "facts" / "drafts" / "qwen35-mtp.toml").open("a") as f:
        f.write("\n# a comment added since the lock\n")
    commit_all(path, "since the locks")
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "git.log"
    real = shutil.which("git")
    assert real is not None
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)

    def audits(lock: str) -> tuple[list[tuple[str, str]], list[int]]:
        outs, counts = [], []
        for fmt in ("text", "json", "markdown"):
            log.write_text("")
            monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
            result = invoke("audit", str(path / "locks" / f"{lock}.lock.toml"), "--format", fmt, root=path)
            monkeypatch.undo()
            assert result.exit_code == 0, result.output
            outs.append((result.stdout, result.stderr))
            counts.append(len(log.read_text().splitlines()))
        return outs, counts

    real = passprice.sourcechange.read_at_lock
    # (each H200 lock cites one record more since cite102, the H200 product page: 4 and 6, 3 and 5 before)
    for lock, sources, since in (("r1-qwen7b-h200", 4, "source nvidia-h200-datasheet: "),
                                 ("qwen35-27b-h200-mtp", 6, "source qwen35-mtp-review: ")):
        now, now_count = audits(lock)
        with monkeypatch.context() as m:
            # the audit asks read_at_lock (walkthrough 31: its sources and whether they were compared, and the
            # excerpts at the lock's commit, from the same git calls); the old reading answers the sources, the lock
            # being committed here, and the excerpts are read apart, as before tests/test_left131.py
            m.setattr(passprice.sourcechange, "read_at_lock",
                      lambda root, lock_file, ids, sources, excerpt_ids, *notes: (
                          _old_sources_since_lock(root, lock_file, ids), True,
                          real(root, lock_file, (), sources, excerpt_ids)[2]))
            before, before_count = audits(lock)
        assert now == before  # text, JSON and markdown, stdout and stderr, byte for byte
        assert since in now[0][0]
        # rev-parse, status, log, then one `git show` a record (and one a document a source names): 3 + 3, 3 + 6
        # (6 records, 1 document); now rev-parse, status, log, one `cat-file --batch-check` sizing them all (left54:
        # a blob past gitread.NAMED_BYTES is refused unread) and one `cat-file --batch`
        # and since tests/test_walk128.py, the stored excerpts at the lock's commit: rev-parse, status, log again and
        # the same two `cat-file` (5 more, 10 in all); since tests/test_left131.py the excerpts are read in the same
        # lookup and the same two `cat-file` as the records: 5
        assert before_count == [3 + sources + (lock == "qwen35-27b-h200-mtp") + 5] * 3
        assert now_count == [5] * 3
    assert "qwen35-mtp.toml rewritten" in audits("qwen35-27b-h200-mtp")[0][0][0]


def test_2_read_named_leaves_out_what_git_does_not_find(tmp_path: Path) -> None:
    from passprice.gitread import read_named
    from test_diff import commit_all, git

    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a b.txt").write_bytes(b"one\ntwo")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "e").write_bytes(b"")
    commit = commit_all(tmp_path, "one").strip()
    got = read_named(tmp_path, [f"{commit}:a b.txt", f"{commit}:gone", f"{commit}:d", f"{commit}:d/e", "x\ny"])
    assert got == {f"{commit}:a b.txt": b"one\ntwo", f"{commit}:d/e": b""}


# 3. The summary's grammar.


def test_3_to_verify_in_its_source_or_in_their_sources(tmp_path: Path) -> None:
    from passprice.review.records import in_source

    assert (in_source(1), in_source(2), in_source(0)) == ("in its source", "in their sources", "in their sources")
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("value = 4.8\n") == 1
    card.write_text(text.replace("value = 4.8\n", "value = 4.9\n"), encoding="utf-8")
    one = invoke("diff", str(base), str(head), root=head).stdout.splitlines()[1]
    assert one.startswith("1 fact changed in 1 file, 1 to verify in its source; ")
    assert text.count("value = 141\n") == 1
    card.write_text(text.replace("value = 4.8\n", "value = 4.9\n").replace("value = 141\n", "value = 142\n"),
                    encoding="utf-8")
    # Before: "2 facts changed in 1 file, 2 to verify in its source; …"
    two = invoke("diff", str(base), str(head), root=head).stdout.splitlines()[1]
    assert two.startswith("2 facts changed in 1 file, 2 to verify in their sources; ")


# 4. A listing names a file that does not read as check does: relative to the registry.


@pytest.mark.parametrize(("command", "folder"), [("cards", "facts/cards"), ("servings", "registry/servings"),
                                                  ("checkpoints", "registry/checkpoints"), ("sources", "sources")])
def test_4_a_listing_names_a_bad_file_relative_to_the_registry(tmp_path: Path, command: str, folder: str) -> None:
    root = copy_root(tmp_path)
    (root / folder / "broken.toml").write_text("nope [\n", encoding="utf-8")
    line = (f"passprice: error: {folder}/broken.toml: not valid TOML: Expected '=' after a key in a key/value pair "
            "(at line 1, column 6)")
    # Before: "passprice: error: /tmp/…/root/facts/cards/broken.toml: not valid TOML: …"
    result = invoke(command, root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [line]
    assert line in invoke("check", root=root).stderr.splitlines()
    if command == "cards":  # compare's every card, a listing too
        compared = invoke("compare", "r1-qwen7b-h200", root=root)
        assert compared.exit_code == 2 and compared.stderr.splitlines() == [line]
