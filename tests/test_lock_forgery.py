"""A lock edited by hand with its digest recomputed (the newcomer's walkthrough, session 7): its floor on
streams.read and its recorded ``rests_on`` loosened to ``assumed`` to match a weakened card fact. The digest holds and
priced with HEAD's facts the lock even agrees with them, but its own pinned facts do not give what it records:
``check`` fails it, and so must the review (``diff`` exited 0 with "re-locked, floors loosened")."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

from click.testing import CliRunner

from passprice.cli import cli
from passprice.locks import _canonical, _sorted
from passprice.registry import Root
from passprice.review import diff
from test_diff import LOCK, LOCK_FILE, REPO, commit_all, edit_fact, git, make_lock_file, read_fact


def _forge(lock: Path) -> None:
    """Loosen the lock's floor and recorded provenance of streams.read to ``assumed`` and recompute its digest, as
    someone copying the hash out of an error message would."""
    text = lock.read_text(encoding="utf-8")
    assert text.count('"streams.read" = "measured"') == 2  # [policy.paths] and [price.rests_on]
    text = text.replace('"streams.read" = "measured"', '"streams.read" = "assumed"')
    body = _sorted(tomllib.loads(text))
    stated = body["lock"].pop("digest")
    actual = "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
    lock.write_text(text.replace(stated, actual), encoding="utf-8")


def test_a_hand_edited_lock_with_its_digest_recomputed_fails_the_review(tmp_path: Path) -> None:
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    (path / "locks").mkdir()
    make_lock_file(path, LOCK, LOCK)
    commit_all(path, "lock")
    git(path, "checkout", "-q", "-b", "pr")
    read = read_fact(path, "streams.read")
    edit_fact(path, "streams.read", value=read.value, unit="1", provenance="assumed", source=read.source,
              locator=read.locator, derivation=None)
    _forge(path / LOCK_FILE)
    commit_all(path, "weaken streams.read; loosen the lock by hand")

    d = diff(Root(path), "main")
    reasons = d.refusal_reasons()
    assert any(
        f"{LOCK_FILE}: does NOT reproduce, although the pricing model's code is the lock's (first: rests_on): its "
        "pinned inputs do not give what it records: the lock was edited by hand" in r for r in reasons
    ), reasons
    from passprice.review import diff_markdown, diff_text

    row = next(line for line in diff_markdown(d).splitlines() if line.startswith(f"| `{LOCK}` |"))
    assert row.endswith("| ❌ does NOT reproduce from its own pinned inputs (edited by hand?): see HEAD fails "
                        "passprice check |"), row  # not "re-locked, floors loosened"
    assert f"{LOCK} ({LOCK_FILE}, card h200_sxm_141gb, price): does NOT reproduce" in diff_text(d)
    result = CliRunner().invoke(cli, ["--root", str(path), "diff", "main", "--json"])
    assert result.exit_code == 1, result.output
    assert any("does NOT reproduce" in p for p in json.loads(result.stdout)["head_check"])
    # check fails it the same way.
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 1 and f"lock {LOCK} ({LOCK_FILE}, locks serving {LOCK}): FAILS" in checked.stdout
    assert read_fact(path, "streams.read").provenance.value == "assumed"
