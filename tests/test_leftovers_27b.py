"""Leftovers round 27b (issue 13): a cache folder inside a registry, ``diff :/TEXT``, a re-digested lock missing a
figure its serving reads, lock files of the built-in registry named as such, and a drafting method's ``[method]``
note in ``fact show --draft``. Each test asserts the exact line and exit status (before the round: see each)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
QWEN3 = "locks/qwen3-30b-a3b-h200.lock.toml"  # routes with qwen3-30b-a3b-measured
QWEN35 = "locks/qwen35-27b-h200-mtp.lock.toml"  # drafts 2 tokens with qwen35-mtp
WHY = ("passprice lock pins every figure the price reads (edited by hand?): restore the lock from the last commit that "
       "holds it as written, or re-lock it")


# --- 1. PASSPRICE_CACHE_DIR inside a registry -------------------------------------------------------------------------


def _cache_line(variable: str, value: str, chosen: str, registry: Path) -> str:
    return (
        f"passprice: error: {variable}={value}: the cache folder {chosen} lies inside the passprice registry at "
        f"{registry}, and passprice would write its cache (code/, documents/, memo/, objects/) among the registry's "
        f"files: set {variable} to a folder outside any registry (or bypass the cache: PASSPRICE_NO_CACHE=1)"
    )


def test_a_cache_folder_inside_the_registry_is_refused_and_never_written(tmp_path: Path) -> None:
    # Before: PASSPRICE_CACHE_DIR=ROOT/facts/cc, `price` exit 0 wrote facts/cc/{code,documents,memo,objects} and
    # `check` still said "all holds", exit 0. Now every command stops on one line, exit 2, before a byte is written
    # (the console script, memo and all).
    root = copy_root(tmp_path)
    cache = root / "facts" / "cc"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(cache)
    for args in (("price", R1), ("check",)):
        done = subprocess.run([sys.executable, "-m", "passprice", *args], cwd=root, env=env, capture_output=True,
                              timeout=300)  # fmt: skip
        assert (done.returncode, done.stdout) == (2, b""), done.stderr.decode()
        assert done.stderr.decode().splitlines() == [_cache_line("PASSPRICE_CACHE_DIR", str(cache), str(cache), root)]
    assert not cache.exists()


def test_the_cache_folder_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import cachefolder

    root = copy_root(tmp_path)
    assert cachefolder.registry_holding(str(root / "facts" / "cc" / "x")) == str(root)
    assert cachefolder.registry_holding(str(root)) == str(root)
    assert cachefolder.registry_holding(str(tmp_path)) is None  # above a registry: not in one
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(root / "locks"))
    with pytest.raises(RuntimeError):
        cachefolder.folder()
    assert cachefolder.refusal() == _cache_line(
        "PASSPRICE_CACHE_DIR", str(root / "locks"), str(root / "locks"), root).removeprefix("passprice: error: ")
    # XDG_CACHE_HOME inside a registry, PASSPRICE_CACHE_DIR relative (ignored): named by XDG_CACHE_HOME.
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", "relative")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "sources"))
    if sys.platform not in ("win32", "darwin"):
        chosen = str(root / "sources" / "passprice")
        assert cachefolder.refusal() == _cache_line("XDG_CACHE_HOME", str(root / "sources"), chosen, root).removeprefix(
            "passprice: error: ")
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cachefolder.refusal() is None
    assert cachefolder.folder() == str(tmp_path / "elsewhere")


def test_a_bypassed_cache_inside_the_registry_is_no_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(root / "facts"))
    lines = bad("cards", root=root)
    assert lines == [_cache_line("PASSPRICE_CACHE_DIR", str(root / "facts"), str(root / "facts"), root)]
    assert invoke("--no-cache", "cards", root=root).exit_code == 0  # nothing is read from or written to it
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    assert invoke("cards", root=root).exit_code == 0
    assert sorted(p.name for p in (root / "facts").iterdir()) == ["cards", "drafts", "routing", "stacks"]


# --- 2. diff :/TEXT ---------------------------------------------------------------------------------------------------


def _git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                          cwd=path, check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip


def test_a_revision_searched_by_its_message_is_the_commit_git_finds(tmp_path: Path) -> None:
    # Before: `diff :/base` said ":/base: neither a folder nor a revision of the git checkout at …", exit 2 (git
    # was asked for ":/base^{commit}": a commit whose message holds "base^{commit}").
    from passprice.errors import InputError
    from passprice.review import Checkout

    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the base facts")
    base = _git(root, "rev-parse", "HEAD")
    (root / "NOTES").write_text("x\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "a second commit")
    head = _git(root, "rev-parse", "HEAD")
    checkout = Checkout.of(root)
    assert checkout.commit(":/base") == base
    assert checkout.commit(":/second") == head
    assert checkout.commit(":/!-second") == base  # git's negated search, peeled the same way
    with pytest.raises(InputError) as e:
        checkout.commit(":/no such message")
    assert str(e.value) == f":/no such message: neither a folder nor a revision of the git checkout at {root}"
    done = invoke("diff", ":/base", ":/second", root=root)
    assert done.exit_code == 0, done.output
    assert "no changes to facts, registry, locks or the pricing model; 10 locks unaffected" in done.stdout


# --- 3. a re-digested lock missing a figure its serving reads ---------------------------------------------------------


def _without(root: Path, rel: str, path: str) -> None:
    """The lock ``rel`` less its pinned fact ``path``, every digest recomputed (passprice's own writer)."""
    from passprice.locks import lock_text, read_lock

    file = root / rel
    lock = read_lock(file)
    file.write_text(lock_text(attrs.evolve(lock, facts={p: f for p, f in lock.facts.items() if p != path})),
                    encoding="utf-8")  # fmt: skip


@pytest.mark.parametrize(("rel", "path", "why"), [
    (QWEN35, "draft.acceptance.2", "the lock's serving drafts 2 tokens a pass (serving.draft.tokens)"),
    (QWEN35, "draft.acceptance.1", "the lock's serving drafts 2 tokens a pass (serving.draft.tokens)"),
    (QWEN3, "routing.hot_share", "the lock's serving routes with qwen3-30b-a3b-measured (serving.routing) and its "
     "price rests on routing"),
    (QWEN3, "routing.hot_experts", "the lock's serving routes with qwen3-30b-a3b-measured (serving.routing) and its "
     "price rests on routing"),
])  # fmt: skip
def test_a_lock_missing_a_figure_its_serving_reads_is_bad_input(tmp_path: Path, rel: str, path: str, why: str) -> None:
    # Before: `reproduce` exit 1, "does not reproduce" (BadDraft: 2 drafted tokens with acceptance [0.85]; Routed for
    # routing.hot_share), `price --lock` exit 0 under the lock, `check` exit 1 "FAILS". A malformed lock: exit 2.
    root = copy_root(tmp_path)
    _without(root, rel, path)
    line = f'passprice: error: {root / rel}: facts."{path}": missing, and {why}: {WHY}'
    assert bad("reproduce", str(root / rel), root=root) == [line]
    assert bad("price", "--lock", str(root / rel), root=root) == [line]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert f'passprice: error: {rel}: facts."{path}": missing, and {why}: {WHY}' in checked.stderr.splitlines()


def test_every_registered_lock_pins_what_its_serving_reads() -> None:
    from passprice.locks import read_lock
    from passprice.routing import ROUTING_PATHS

    for file in sorted((REPO / "locks").glob("*.lock.toml")):
        lock = read_lock(file)  # no refusal: every figure read is pinned
        tokens = lock.spec.draft.tokens if lock.spec.draft is not None else 0
        assert all(f"draft.acceptance.{i}" in lock.facts for i in range(1, tokens + 1)), file
    assert ROUTING_PATHS == ("routing.hot_experts", "routing.hot_share")  # spelled out in locks._require_read_pins


# --- 4. the built-in registry's lock files named as such --------------------------------------------------------------


def test_lock_files_of_the_built_in_registry_are_named_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before, run outside any registry: "under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), …", a path
    # not there relative to the user's folder.
    from passprice.registry import embedded_root, in_root

    built_in = embedded_root()
    assert in_root(built_in, built_in.locks / f"{R1}.lock.toml") == f"the built-in registry's locks/{R1}.lock.toml"
    root = copy_root(tmp_path)
    assert in_root(type(built_in)(root), root / "locks" / f"{R1}.lock.toml") == f"locks/{R1}.lock.toml"
    assert in_root(type(built_in)(root), tmp_path / "x.lock.toml") == str(tmp_path / "x.lock.toml")
    away = tmp_path / "away"
    away.mkdir()
    monkeypatch.chdir(away)
    from passprice.cli import cli

    out = CliRunner().invoke(cli, ["price", R1])
    assert out.exit_code == 0, out.output
    lock_line = next(line for line in out.stdout.splitlines() if line.startswith("  lock "))
    assert lock_line == (
        f"  lock          under locks {R1} (the built-in registry's locks/{R1}.lock.toml), {R1}-best (the built-in "
        f"registry's locks/{R1}-best.lock.toml), {R1}-llamacpp (the built-in registry's "
        f"locks/{R1}-llamacpp.lock.toml): floors hold, and the price is the one {R1} and {R1}-llamacpp record"
    )
    first = CliRunner().invoke(cli, ["reproduce", R1]).stdout.splitlines()[0]
    assert first == f"{R1} (the built-in registry's locks/{R1}.lock.toml): price lock of serving {R1}, lock format 2"
    # audit's checkpoint entry, text and --json alike (before: "registry/checkpoints/X.toml").
    entry = "the built-in registry's registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    audited = CliRunner().invoke(cli, ["audit", R1])
    assert f"  deepseek-r1-distill-qwen-7b-q4_k_m — {entry}" in audited.stdout.splitlines(), audited.output
    # --json: the path relative to the registry, and which registry (leftovers 28)
    cited = json.loads(CliRunner().invoke(cli, ["audit", R1, "--json"]).stdout)["checkpoint"]
    assert (cited["entry"], cited["registry"]) == (entry.removeprefix("the built-in registry's "), "built-in")
    here = json.loads(invoke("audit", R1, "--json", root=root).stdout)["checkpoint"]["entry"]
    assert here == "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    inside = invoke("price", R1, root=root).stdout
    assert (f"under locks {R1} (locks/{R1}.lock.toml), {R1}-best (locks/{R1}-best.lock.toml), {R1}-llamacpp "
            f"(locks/{R1}-llamacpp.lock.toml): ") in inside


# --- 5. a drafting method's [method] note ----------------------------------------------------------------------------


def test_fact_show_draft_prints_the_method_note() -> None:
    # Before: `fact show qwen35-mtp --draft` ended at acceptance.3's note; acceptance.2's citation reads "[method]
    # note and this figure's note", a note shown nowhere but `audit`.
    note = tomllib.loads((REPO / "facts" / "drafts" / "qwen35-mtp.toml").read_text(encoding="utf-8"))["method"]["note"]
    assert note.startswith("As far as we know Qwen publishes no per-draft acceptance rate")
    every = invoke("fact", "show", "qwen35-mtp", "--draft")
    assert every.exit_code == 0 and every.stdout.endswith(f"\n\ndrafting method note: {note}\n"), every.output
    one = invoke("fact", "show", "qwen35-mtp", "acceptance.2", "--draft")
    assert "[method] note and this figure's note" in one.stdout
    assert one.stdout.endswith(f"\n\ndrafting method note: {note}\n")
    shown = json.loads(invoke("fact", "show", "qwen35-mtp", "acceptance.2", "--draft", "--json").stdout)
    assert shown["note"] == note and list(shown["facts"]) == ["acceptance.2"]
    card = json.loads(invoke("fact", "show", "h200_sxm_141gb", "scale", "--json").stdout)
    assert "note" not in card  # a card's facts as before
