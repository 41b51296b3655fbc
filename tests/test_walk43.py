"""Walkthrough 43 (issue 13, a new user from the README alone): every key a price's ``--json`` and a sweep's rows
print is a word ``passprice explain`` defines (``first moved: rows_per_sequence`` was printed in a price's lock line
with no entry), and so is every key of every command's ``--json`` in each of its shapes (keys58); a name of the
wrong kind says what to give instead (the serving's checkpoint or card, the servings of a checkpoint or card, the
card first for ``roofline``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, bad, invoke
from passprice import glossary, sidecode, sweep
from passprice.cli import cli
from passprice.registry import find_root
from passprice.roofline import require_card_first
from passprice.trace import Synthetic, synthetic


def test_every_price_json_key_and_sweep_column_is_explained() -> None:
    """Nested keys too (keys57: `audit --json`'s `card_facts.unread`, a review's `sources_changed` and 143 more
    nested keys of other commands said "not a term")."""
    result = invoke("price", "qwen3-30b-a3b-h200", "--json")
    assert result.exit_code == 0, result.output
    printed = _walked(json.loads(result.stdout))
    keys = printed | sidecode.PRICE_NUMBERS | sidecode.PRICE_TEXTS | set(sweep.COLUMNS) | set(sweep.STACK_COLUMNS)
    for key in sorted(keys - {"description", "used", "tokens"}):  # the routing object's plain words
        glossary.lookup(key)  # raises InputError naming the key when it is not defined


@pytest.mark.parametrize(
    ("word", "term", "says"),
    [
        ("rows_per_sequence", "token-row", "`rows_per_sequence` is the rows each sequence carries a pass"),
        ("host_sequences", "host", "`host_sequences` the sequences of the batch held in host memory"),
        ("rewrite_bytes", "bytes/pass", "`rewrite_bytes` (of those, rewritten in place)"),
        ("capacity_bytes", "held", "`capacity_bytes` the card's memory (`memory.capacity`)"),
        ("held once", "held", "*held once* (the weights and embedding table)"),
        ("card_room", "held", "the seed's `card_room`: ⌊(memory − held once) / held per sequence⌋"),
        ("on_chip_capacity", "on chip", "`on_chip_capacity` the card's"),
        ("scale_cycles", "scale", "`scale_cycles` is the pass's lane cycles"),
        ("experts_held_bytes", "routing", "`experts_held_bytes` (all routed experts' bytes)"),
        ("expected_tokens_per_s", "stack", "`expected_tokens_per_s`"),
        # keys57: nested --json keys of sources, diff, check, reproduce, validate and audit --source
        ("strongest", "provenance", "`sources --json`'s `strongest` is the strongest provenance"),
        ("head_check_left_out", "review", "`head_check`, `head_unreadable` and `head_warnings` (what `check` fails on"),
        ("relative_change", "changed", "`relative_change` (new / old − 1 of its value"),
        ("verdict_before", "floors hold", "(`verdict_before` on BASE)"),
        ("facts_rewritten", "reproduces exactly", "`facts_rewritten` (the same quantity written otherwise: no drift)"),
        ("limit_ratio", "limit/meas", "`validate --json` gives each run's `limit_ratio`"),
        ("offences_withdrawn", "withdrawn", "`offences_withdrawn` (each fact then below its floor"),
        ("in_sample_max", "fitted", "`in_sample_mean` and `in_sample_max` of |error|"),
        ("resting_on_unsound", "derivation", "the locks resting on them (`resting_on_unsound`)"),
        # keys58: the keys of header, explain, init, synth, calibrate, fact show --history, fact recompute, lock,
        # new-serving, audit LOCK and a review's unlocked and added servings that said "not a term"
        ("dims", "GGUF", "each tensor's `dims`, its shape as the file stores it, the row's width first"),
        ("long_array", "GGUF", "its element type and count, `{long_array, length}`, not its elements"),
        ("definition", "explain", "`--json` gives `term`, `short` (the one line), `definition` and `aliases`"),
        ("requirement_origin", "registry", "(`requirement_origin`: `given`, `vcs`, `archive`, `local` or `unknown`)"),
        ("then", "registry", "and `then`, what to do first: commit it to the default branch"),
        ("types", "origin", "`types` (the tensors of each GGML type)"),
        ("cautions", "fitted", "`cautions`: what not to read into the fit, a line each"),
        ("card_out_max", "fitted", "`card_out_mean` and `card_out_max` are the same on cards held out"),
        ("range", "BeyondStack", "`calibrate --json`'s `range` gives each range fact's value by its path"),
        ("inside", "stack", "`inside`, whether the ratio lies in the span"),
        ("written", "stack", "the stack file the fit was written to (`null` with `--dry-run`"),
        ("older_not_read_why", "fact", "(`older_not_read_why`: past 2,000 commits, or a shallow clone)"),
        ("provenance_kept", "derivation", "kept their provenance (a recompute moves the value, not what it rests on)"),
        ("absolute_path", "lock", "`lock --json` gives the lock file's `path` as given and its `absolute_path`"),
        ("document", "serving", "the `path` written and its `document`, the file's fields as written"),
        ("sources_compared", "source", "`sources_compared` is false when no commit holds the lock file as it is"),
        ("recorded_batch", "price moved", "`recorded_tokens_per_s` and `recorded_batch` (what the lock records"),
        ("locked", "price moved", "in a review's `unlocked` list `locked` is false: no lock pins the serving"),
        ("serves", "not locked", "gives `serves` (its card, checkpoint, batch and contexts, in words)"),
        ("needed", "NotResident", "`needed` the bytes the memory must hold, `capacity` the bytes it holds"),
        ("within_max_tpot", "TPOT", "adds each row's `tpot_s` and `within_max_tpot`"),
    ],
)
def test_a_json_key_explains_to_the_entry_that_defines_it(word: str, term: str, says: str) -> None:
    result = invoke("explain", word)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{term}: ")
    assert says in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # kv CHECKPOINT given the serving: its checkpoint named.
        (("kv", "r1-qwen7b-h200"), "r1-qwen7b-h200 is a registered serving, not a checkpoint (its checkpoint is "
                                   "deepseek-r1-distill-qwen-7b-q4_k_m: give that)"),
        (("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "gemma3-270m-h100"),
         "gemma3-270m-h100 is a registered serving, not a card (its card is h100_sxm5_80gb: give that)"),
        # A checkpoint or a card where a serving belongs: the servings of it, and the options without one.
        (("audit", "gemma3-270m-q4_k_m"), "gemma3-270m-q4_k_m is a registered checkpoint, not a serving (give a "
                                          "serving of it, gemma3-270m-h100, or price it with --checkpoint "
                                          "gemma3-270m-q4_k_m --card CARD)"),
        (("best", "llama2-7b-f16"), "llama2-7b-f16 is a registered checkpoint, not a serving (price it with "
                                    "--checkpoint llama2-7b-f16 --card CARD)"),
        (("best", "mi300x"), "mi300x is a registered card, not a serving (give a serving of it, deepseek-v3-mi300x, "
                             "gpt-oss-20b-mi300x, qwen3-30b-a3b-mi300x, qwen3next-80b-a3b-mi300x, "
                             "r1-qwen7b-mi300x-int8kv, or price it with --card mi300x --checkpoint CHECKPOINT)"),
        # roofline CARD [SERVING] given the serving first, or alone: the command with the card first.
        (("roofline", "r1-qwen7b-h200", "h200_sxm_141gb"),
         "roofline takes CARD [SERVING], the card first: r1-qwen7b-h200 is a registered serving, not a card; run "
         "`passprice roofline h200_sxm_141gb r1-qwen7b-h200`"),
        (("roofline", "gemma3-270m-h100"), "run `passprice roofline h100_sxm5_80gb gemma3-270m-h100`"),
        # speculate without a serving: the options given name no drafting method, not the checkpoint as a serving.
        (("speculate", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--tokens", "1..2"),
         "passprice: error: --checkpoint gemma3-270m-q4_k_m --card h100_sxm5_80gb names no drafting method: give "
         "--draft METHOD"),
    ],
)
def test_a_name_of_another_kind_says_what_to_give(args: tuple[str, ...], says: str) -> None:
    lines = bad(*args, says=says)
    assert len(lines) == 1, lines


def test_roofline_with_the_card_first_is_not_refused() -> None:
    root = find_root(REPO)
    require_card_first(root, "h200_sxm_141gb", "r1-qwen7b-h200")  # the order the README shows
    require_card_first(root, "h200_sxm_141gb", None)  # a card alone: its ridges
    require_card_first(root, "no-such-card", None)  # not a serving: the loader says it is not found


@pytest.mark.parametrize(
    ("prefix", "says"),
    [
        (0, "20 prompts (to at most 8 tokens, half the limit, leaving the rest for the output)"),
        (6, "20 prompts (to at most 5 tokens, half the 10 the shared prefix leaves, leaving the rest for the output)"),
    ],
)
def test_a_synthetic_trace_says_why_its_prompts_were_cut_where_they_were(prefix: int, says: str) -> None:
    """A prompt keeps at most half its room (the limit less a shared prefix), its output the rest: the summary said
    "to at most 2,048 tokens" under a 4,096 limit without saying why 2,048."""
    trace = synthetic(Synthetic(requests=20, seed=7, prompt_median=1000.0, prefix=prefix), 16)
    assert says in trace.source
    assert all(r.prompt - r.prefix <= (16 - prefix) // 2 for r in trace.requests)


def test_every_word_the_readme_sends_to_explain_is_defined() -> None:
    """The README's opening promises `passprice explain WORD` for "token-row, KV cache, floor, binds, drift, the seed
    …": "the seed" was not found (only "seed" was); each `passprice explain X` it shows must answer too."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"`passprice explain WORD` prints its entry \(([^)]*)\)", readme)
    assert listed is not None
    words = [w.strip() for w in listed[1].replace("…", "").split(",") if w.strip()]
    assert "the seed" in words
    shown = set(re.findall(r"`passprice explain ([^`\s]+)`", readme)) - {"WORD", "TERM"}
    for word in [*words, *sorted(shown)]:
        glossary.lookup(word)


#: A price under a serving stack: the one whose fit is quick to check (lmdeploy's 17 runs on one card against
#: llama.cpp's 111 on 11 cards, each held out in turn: 0.05 s of CPU against about 1 s), a checkpoint and the card it
#: was fitted on (its runs are all of one card: no card-held-out errors, `card_out_*`, are printed).
STACKED = ("--checkpoint", "llama2-7b-f16", "--card", "a100_sxm4_80gb", "--stack", "lmdeploy-turbomind-2312", "--batch",
           "1")

#: The locks and servings :func:`documents`' copy keeps (a review and a check price every one, on both sides): a plain
#: lock and a routing record's, both resting on the H200 facts the copy changes; llama.cpp's stack (whose fit a check
#: re-runs) and the runs it is fitted to are left out.
COPIED_LOCKS = ("r1-qwen7b-h200", "qwen3-30b-a3b-h200")
LEFT_OUT = ("facts/stacks/llamacpp-cuda-2405.toml", "registry/measurements/xiongjiedai-llama3-llamabench.toml")

#: Every command with ``--json`` (passprice's commands: :func:`test_every_json_command_is_walked`) in each shape whose
#: document holds keys the others do not, one invocation each, in this order: on the shipped registry, on
#: :func:`documents`' copy of it (``^``, ``{BASE}``), or on a copy of that copy (``@``, ``{HEAD}``), edited by hand and
#: written to by the commands marked so. The review (``diff BASE HEAD``) sees what those wrote before it and the hand
#: edits: a serving and a checkpoint added, a fact re-set (the derived facts resting on it stale), another moving a
#: stack lock's price, a fact removed, a routing record's figure and a source record changed; and, for it alone
#: (:data:`UNREAD`, put back after it), a HEAD that does not read: a card file that is not TOML and a lock file whose
#: price was edited by hand (its document gains the keys of what does not read and loses none, so the one review
#: walks both shapes: a second review cost ~0.25 s of CPU; suite49). ``sweep -o FILE.json`` writes its document to
#: the file, which is read in place of the standard output.
SHAPES: dict[str, tuple[str, ...]] = {
    "cards": ("cards", "--json"),
    "checkpoints": ("checkpoints", "--json"),
    "servings": ("servings", "--json"),
    "facts": ("facts", "h200_sxm_141gb", "--json"),
    "explain": ("explain", "--json"),
    "explain WORD": ("explain", "binds", "--json"),
    "sources": ("sources", "--json"),
    "header": ("header", "{REPO}/tests/data/gemma3-270m-q4_k_m.header.gguf.xz", "--json"),
    "price under a lock it moves": ("price", "qwen3-30b-a3b-h200", "--shared-prefix", "512", "--json"),
    "price refused": ("price", "deepseek-v3-h200", "--json"),
    "price --stack": ("price", *STACKED, "--json"),
    "best": ("best", "r1-qwen7b-h200", "--json"),
    "compare": ("compare", "qwen3-30b-a3b-h200", "--json"),
    "max-batch": ("max-batch", "r1-qwen7b-h200", "--json", "--no-lock"),
    "audit --stack": ("audit", *STACKED, "--json"),
    "audit --source": ("audit", "--source", "nvidia-h200-datasheet", "--json"),
    "kv": ("kv", "qwen3next-80b-a3b-like", "--json"),
    "roofline": ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--json", "--no-lock"),
    "roofline CARD": ("roofline", "h200_sxm_141gb", "--json"),
    "speculate": ("speculate", "qwen35-27b-h200-mtp", "--json", "--no-lock"),
    "simulate": ("simulate", "r1-qwen7b-h200", "--synthetic", "4", "--json", "--no-lock"),
    "sweep --stack": ("sweep", "--checkpoint", "llama2-7b-f16", "--cards", "a100_sxm4_80gb", "--batches", "1,2",
                      "--stack", "lmdeploy-turbomind-2312", "--json"),
    "sweep --max-tpot": ("sweep", "r1-qwen7b-h200", "--batches", "1,2", "--max-tpot", "0.01", "--json"),
    "calibrate": ("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run", "--json"),
    "fact show": ("fact", "show", "h200_sxm_141gb", "streams.rewrite", "--json"),
    "fact show --history": ("fact", "show", "h200_sxm_141gb", "memory.bandwidth", "--history", "--json"),
    "validate": ("^", "validate", "--json"),
    "lock --stack": ("^", "lock", *STACKED, "-o", "{BASE}/locks/llama2-7b-f16-a100-lmdeploy.lock.toml", "--json"),
    "reproduce a stack lock": ("^", "reproduce", "llama2-7b-f16-a100-lmdeploy", "--json"),
    "audit a stack lock": ("^", "audit", "{BASE}/locks/llama2-7b-f16-a100-lmdeploy.lock.toml", "--json"),
    "init": ("@", "init", "{HEAD}/../scratch", "--json"),
    "synth": ("@", "synth", "{REPO}/examples/configs/llama-2-7b.json", "-o", "{HEAD}/../l.gguf", "--json"),
    "import": ("@", "import", "{HEAD}/../l.gguf", "--name", "llama2-7b-synth", "--json"),
    "new-serving": ("@", "new-serving", "r1-qwen7b-h200-b2", "r1-qwen7b-h200", "--batch", "2", "--json"),
    "lock": ("@", "lock", "r1-qwen7b-h200", "--batch", "2", "-o", "{HEAD}/locks/r1-qwen7b-h200-b2.lock.toml",
             "--json"),
    "fact set": ("@", "fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.9", "--unit", "TB/s",
                 "--provenance", "assumed", "--source", "nvidia-h200-datasheet", "--locator", "a what-if", "--json"),
    "check, derived facts stale": ("@", "check", "--json"),
    "review": ("@", "diff", "{BASE}", "{HEAD}", "--json"),
    "sweep -o FILE.json": ("sweep", "qwen3-30b-a3b-h200", "--batches", "1,2", "-o", "{HEAD}/../sweep.json"),
    "fact recompute": ("@", "fact", "recompute", "h200_sxm_141gb", "--json"),
}

#: The keys whose object is keyed by names, not by words of passprice's: a source's id (``sources``, a review's
#: ``cited_sources``), a derivation input's name (``inputs``), a serving's (``servings --json``), a GGUF metadata
#: key as the file names it (``header --json``'s ``metadata``), a record's path (a review's ``added_records``) and a
#: measured run's id (the ``errors`` of a fit's ``in_sample`` and each ``leave_one_*_out`` in ``calibrate --json``).
#: Their values are walked all the same.
#: The edits that make HEAD not read, made just before the review (``"review"``) and undone after it: a card file
#: that is not TOML (``head_unreadable``) and a lock's price edited by hand (its digest no longer matches: the lock's
#: ``head_unread``, ``hand_edits`` and ``recorded_edited``). The review then exits 2.
UNREAD = {
    "facts/cards/broken.toml": (None, "[card\nname = \n"),
    "locks/r1-qwen7b-h200.lock.toml": ("tokens_per_s = 996.0966124437687\n", "tokens_per_s = 1100.0\n"),
}

NAMED = {"sources", "cited_sources", "inputs", "servings", "metadata", "added_records"}
RUN_ERRORS = {"in_sample", "leave_one_card_out", "leave_one_checkpoint_out"}


def _walked(o: object, named: bool = False, parent: str = "") -> set[str]:
    """Every key of the JSON document ``o`` at any depth, but the keys of an object :data:`NAMED` or
    :data:`RUN_ERRORS` says are names."""
    if isinstance(o, dict):
        own: set[str] = set() if named else set(o)
        return own.union(*(_walked(v, k in NAMED or (k == "errors" and parent in RUN_ERRORS), k)
                           for k, v in o.items()))
    if isinstance(o, list):
        return set().union(*(_walked(v, parent=parent) for v in o))
    return set()


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each of :data:`SHAPES`' JSON documents by its name, the commands run in order, in process, on the shipped
    registry or on the copies (:data:`COPIED_LOCKS`, :data:`LEFT_OUT`)."""
    base = tmp_path_factory.mktemp("walk58") / "base"
    for folder in ("facts", "registry", "sources", "schema"):  # init copies the schemas of the registry it runs in
        shutil.copytree(REPO / folder, base / folder)
    (base / "locks").mkdir()
    for serving in (base / "registry" / "servings").glob("*.toml"):
        if serving.stem not in COPIED_LOCKS:
            serving.unlink()  # a review and a check price every serving
    for lock in COPIED_LOCKS:
        shutil.copy2(REPO / "locks" / f"{lock}.lock.toml", base / "locks")
    for left_out in LEFT_OUT:
        (base / left_out).unlink()
    out: dict[str, Any] = {}
    head = base.parent / "head"
    for name, args in SHAPES.items():
        if args[0] == "@" and not head.exists():
            _edited(base, head)
        words = [a.replace("{HEAD}", str(head)).replace("{BASE}", str(base)).replace("{REPO}", str(REPO))
                 for a in args if a not in ("@", "^")]
        kept = _unread(head) if name == "review" else {}
        result = invoke(*words, root={"@": head, "^": base}.get(args[0], REPO))
        for rel, text in kept.items():  # HEAD reads again for the commands after the review
            if text is None:
                (head / rel).unlink()
            else:
                (head / rel).write_text(text, encoding="utf-8")
        assert result.exit_code in ((2,) if kept else (0, 1)), (name, result.output)
        written = words[words.index("-o") + 1] if "-o" in words else ""  # a file the document went to
        text = Path(written).read_text(encoding="utf-8") if written.endswith(".json") else result.stdout
        out[name] = json.loads(text)
    return out


def _unread(head: Path) -> dict[str, str | None]:
    """Make :data:`UNREAD`'s edits in ``head``; each file's text before them (``None``: it was not there)."""
    kept: dict[str, str | None] = {}
    for rel, (old, new) in UNREAD.items():
        path = head / rel
        kept[rel] = path.read_text(encoding="utf-8") if path.exists() else None
        if old is None:
            assert kept[rel] is None, rel
            path.write_text(new, encoding="utf-8")
        else:
            assert kept[rel] is not None and kept[rel].count(old) == 1, rel
            path.write_text(kept[rel].replace(old, new), encoding="utf-8")
    return kept


def _edited(base: Path, head: Path) -> None:
    """Copy ``base`` to ``head`` and edit the copy by hand: a fact removed, a routing record's figure, a source
    record's retrieval date and the A100's memory bandwidth (which :data:`STACKED`'s lock rests on) changed."""
    shutil.copytree(base, head)
    card = head / "facts" / "cards" / "mi300x.toml"
    text = card.read_text(encoding="utf-8")
    removed = re.sub(r"\n\[tensor\.f8\]\n(?:[^\[][^\n]*\n|\n)*", "\n", text, count=1)
    assert removed != text
    card.write_text(removed, encoding="utf-8")
    for path, old, new in [
        ("facts/routing/qwen3-30b-a3b-measured.toml", "[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.85\n"),
        ("sources/nvidia-h200-datasheet.toml", 'retrieved = "unknown"', 'retrieved = "2024-11-18"'),
        ("facts/cards/a100_sxm4_80gb.toml", "[memory.bandwidth]\nvalue = 2039\n", "[memory.bandwidth]\nvalue = 2000\n"),
    ]:
        text = (head / path).read_text(encoding="utf-8")
        assert text.count(old) == 1, path
        (head / path).write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_json_key_of_every_command_is_explained(documents: dict[str, Any], name: str) -> None:
    """Issue 13 (left36, keys57, keys58): every key any command's ``--json`` prints, at any depth, is a word
    ``passprice explain`` defines (keys58: `header`'s `version`, `init`'s 8 keys, `calibrate`'s `cautions`, a
    price's `stack_span.inside`, `fact show --history`'s `versions` and 38 more said "not a term")."""
    document = documents[name]
    assert "error" not in document, document
    for key in sorted(_walked(document)):
        glossary.entries(key)  # raises InputError naming the key when it is not defined (one entry a command)


def _whole_floats(o: object, where: str = "") -> list[str]:
    """Each key path of the JSON document ``o`` whose key counts bytes or tokens (``*_bytes``, ``tokens``,
    ``*_tokens``, ``*_tokens_*`` but a rate, ``*_per_s``) or is one of :data:`passprice.tables._COUNT_KEYS`, and whose
    value (or a value of its object, ``per_token`` by layer kind) is a float with no fraction: ``61153984512.0``."""
    from passprice.tables import _COUNT_KEYS

    found: list[str] = []
    if isinstance(o, dict):
        for k, v in o.items():
            path = f"{where}.{k}"
            counts = k != "metadata" and (k.endswith("_bytes") or k in _COUNT_KEYS or (
                "tokens" in k and not k.endswith(("_per_s", "_per_second"))))
            values = v.values() if counts and isinstance(v, dict) else [v]
            if counts and any(isinstance(x, float) and x.is_integer() for x in values):
                found.append(f"{path}: {v}")
            if k != "metadata":
                found += _whole_floats(v, path)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            found += _whole_floats(v, f"{where}[{i}]")
    return found


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_json_count_of_every_command_is_an_integer(documents: dict[str, Any], name: str) -> None:
    """Walk95 (issue 13): the README promises "a whole count of bytes or tokens is a JSON integer, in every command's
    ``--json``"; ``diff --json`` wrote each lock's ``before``/``after``/``recomputed`` and each unlocked serving's
    ``before`` as ``"held_bytes": 61153984512.0``, ``"capacity_bytes": 141000000000.0`` (its own writer skipped
    :func:`passprice.tables.whole_counts`). No count key of any command's document holds a whole float."""
    assert _whole_floats(documents[name]) == []


def test_the_review_walked_holds_the_counts_of_its_locks(documents: dict[str, Any]) -> None:
    """The review :func:`test_every_json_count_of_every_command_is_an_integer` walks holds what walk95 saw as floats:
    a lock's prices on both sides with their held bytes, as integers (the H200's 141 GB)."""
    priced = [lock for lock in documents["review"]["locks"] if isinstance(lock.get("before"), dict)]
    assert priced, [lock["name"] for lock in documents["review"]["locks"]]
    held = [lock["before"]["capacity_bytes"] for lock in priced if "capacity_bytes" in lock["before"]]
    assert 141_000_000_000 in held and all(type(v) is int for v in held), held


def test_the_review_walked_has_a_head_that_does_not_read(documents: dict[str, Any]) -> None:
    """keys58's leftover: the review walked is of a HEAD that does not read (:data:`UNREAD`), as its exit status 2
    says: the card file that is not TOML named among what HEAD cannot read, the lock edited by hand judged on BASE's
    copy with the edit named and HEAD's figure recorded; the sweep written to a file is its rows."""
    review = documents["review"]
    assert review["exit_status"] == 2
    assert [line.split(":")[0] for line in review["head_unreadable"]] == ["facts/cards/broken.toml"]
    (unread,) = [lock for lock in review["locks"] if lock["head_unread"]]
    assert unread["hand_edits"] == ["price.tokens_per_s: 996.0966124437687 → 1100.0"]
    assert unread["recorded_edited"] == 1100.0
    assert [(row["serving"], row["batch"]) for row in documents["sweep -o FILE.json"]] == [
        ("qwen3-30b-a3b-h200", 1), ("qwen3-30b-a3b-h200", 2)]


def test_every_json_command_is_walked() -> None:
    """A command given ``--json`` later is walked too: each command with the option is in :data:`SHAPES`."""
    commands: list[str] = []
    for name, command in cli.commands.items():
        for sub, leaf in (getattr(command, "commands", None) or {None: command}).items():
            if any(p.name == "as_json" for p in leaf.params):
                commands.append(name if sub is None else f"{name} {sub}")
    walked = set()
    for args in SHAPES.values():
        words = [a for a in args if a not in ("@", "^")]
        walked.add(" ".join(words[:2]) if words[0] == "fact" else words[0])
    assert sorted(c for c in commands if c not in walked) == []


def test_no_alias_names_two_terms() -> None:
    # "tensor cores", "today's inputs" and "rewritten in place" each named two terms; lookup took the first.
    seen: dict[str, str] = {}
    for term in glossary._TERMS:
        for name in {glossary._key(n) for n in (term.name, *term.aliases)}:
            assert seen.setdefault(name, term.name) == term.name, (name, seen[name], term.name)


def _refusal_classes() -> list[type]:
    """Every refusal class: a price's, a header's, a lock's, or a subclass of one at any depth, in any of the modules
    that define one (``__subclasses__`` knows the imported ones only)."""
    from passprice import batching, scopes, stacks  # noqa: F401  # their refusals: FlatCurve, OutOfScope, BeyondStack
    from passprice.decode import DecodeRefusal
    from passprice.enforce import LockFloor, LockRefusal
    from passprice.serving import ServingRefusal

    found: list[type] = []
    todo: list[type] = [ServingRefusal, DecodeRefusal, LockRefusal, LockFloor]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_key_of_a_refusal_document_is_explained() -> None:
    """A refusal's ``--json`` (``{"refusal": NAME, …}``) holds the keys its class's ``fields`` or ``to_json`` writes:
    read off their source (provoking each of the refusals would price each), every one a word ``passprice explain``
    defines (keys58: Undecoded's `ty`, Routed's `expert_count`, BeyondStack's `needs`, `what`, `known` and 6 more
    said "not a term")."""
    import ast
    import inspect
    import textwrap

    keys: set[str] = set()
    classes = _refusal_classes()
    for cls in classes:
        for method in ("fields", "to_json"):
            if method in vars(cls):
                tree = ast.parse(textwrap.dedent(inspect.getsource(vars(cls)[method])))
                keys |= {k.value for node in ast.walk(tree) if isinstance(node, ast.Dict)
                         for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    assert len(classes) > 30 and {"ty", "expert_count", "needs", "applies_to", "known", "top"} <= keys
    for key in sorted(keys):
        glossary.lookup(key)
