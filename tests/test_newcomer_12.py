"""Findings of session 10's README-only walkthrough, each kept as a test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_helpers import bad, copy_root, invoke

H200 = "h200_sxm_141gb"


def test_a_unit_slipped_by_a_thousand_is_refused_when_a_derived_share_cannot_follow(tmp_path: Path) -> None:
    """`fact set h200_sxm_141gb memory.bandwidth --value 4.8 --unit GB/s` (4.8 TB/s meant) was written with a
    stale warning, and `price r1-qwen7b-h200` then printed 1 tokens/s with "floors hold": `streams.read`, a share
    of that bandwidth (schema maximum 1), recomputes to 4.48 TB/s / 4.8 GB/s = 933.3. The edit is refused, naming
    the derived fact, its recomputed value and the schema's rule; the card file is untouched."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{H200}.toml"
    before = card.read_bytes()
    lines = bad("fact", "set", H200, "memory.bandwidth", "--value", "4.8", "--unit", "GB/s", "--provenance",
                "published", "--source", "nvidia-h200-datasheet", "--locator", "'GPU Memory Bandwidth 4.8TB/s'",
                root=root)
    assert lines == [
        f"passprice: error: {card}: memory.bandwidth: 4.8 GB/s would make streams.read, derived from it, 933.3 "
        "when recomputed, which its schema refuses (streams.read.value: 933.3 is greater than the maximum of 1); "
        "nothing written: 0.001 × the figure it replaces — check the value and its unit"
    ]
    assert card.read_bytes() == before
    # a plausible figure still goes through, with the stale warnings the README shows
    ok = invoke("fact", "set", H200, "memory.bandwidth", "--value", "5.2", "--unit", "TB/s", "--provenance",
                "published", "--source", "nvidia-h200-datasheet", "--locator", "'GPU Memory Bandwidth 5.2TB/s'",
                root=root)
    assert ok.exit_code == 0, ok.output
    assert "streams.read is stale" in ok.stderr and "it is 0.8615, not 0.9333" in ok.stderr  # 4.48 / 5.2
    # a what-if below what the card was measured reading is written, with a firmer warning (3 TB/s: 4.48 / 3 > 1)
    low = invoke("fact", "set", H200, "memory.bandwidth", "--value", "3", "--unit", "TB/s", "--provenance",
                 "estimated", "--source", "nvidia-h200-datasheet", "--locator", "what-if: a slower HBM stack",
                 root=root)
    assert low.exit_code == 0, low.output
    assert (f"passprice: warning: facts/cards/{H200}.toml: memory.bandwidth: 3 TB/s would make streams.read, derived "
            "from it, 1.493 when recomputed, which its schema refuses (streams.read.value: 1.493 is greater than the "
            "maximum of 1): the card's figures disagree") in low.stderr.splitlines()


def test_a_folder_passprice_does_not_read_fails_check_and_is_named_when_its_serving_is_asked_for(
    tmp_path: Path,
) -> None:
    """A serving moved to `registry/serving/` (singular): `check` said "0 problems … all holds" and `price
    my-serving` "not found … (registered: …)" without a word on the stray folder."""
    root = copy_root(tmp_path)
    stray = root / "registry" / "serving"
    stray.mkdir()
    (stray / "my-serving.toml").write_text(f'checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"\ncard = "{H200}"\n')
    out = invoke("check", root=root)
    assert out.exit_code == 2, out.output
    assert ("passprice: error: registry/serving: not a folder passprice reads: its 1 .toml file is neither checked "
            "nor priced (did you mean registry/servings?)") in out.stderr.splitlines()
    lines = bad("price", "my-serving", root=root)
    assert lines[0].startswith("passprice: error: serving 'my-serving': not found in ")
    assert ("; registry/serving/my-serving.toml lies in a folder passprice does not read: move it to "
            "registry/servings/ (registered: ") in lines[0]
    # a folder of other files (no .toml) is the user's own business
    stray.joinpath("my-serving.toml").rename(stray / "notes.txt")
    assert invoke("check", root=root).exit_code == 0


def test_a_count_option_given_with_a_k_suffix_is_told_the_number(tmp_path: Path) -> None:
    """`--limit 4k` was refused as "not a whole number" while `kv --contexts 4k` takes it: the error now says
    what to write."""
    lines = bad("price", "r1-qwen7b-h200", "--limit", "4k")
    assert lines == [
        "passprice: error: Invalid value for '--limit': '4k' is not a whole number (a whole number from 1 to "
        "4,294,967,295); write 4096 for 4k (k = 1,024 is for kv --contexts alone) (see 'cli price --help')"
    ]
    assert "write 1048576 for 1M" in bad("price", "r1-qwen7b-h200", "--limit", "1M")[0]


def test_a_lock_made_outside_any_registry_says_it_pins_the_facts_passprice_ships(tmp_path: Path) -> None:
    """The README says `lock` says so outside a registry (as `import` and `fact set` do); it wrote the lock
    without a word."""
    out = subprocess.run(
        [sys.executable, "-m", "passprice", "lock", "r1-qwen7b-h200", "-o", str(tmp_path / "x.lock.toml")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("locked x (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")
    notes = [line for line in out.stderr.splitlines() if line.startswith("passprice: note: not in a registry: ")]
    assert len(notes) == 1 and "lock x pins the facts passprice ships" in notes[0], out.stderr
    assert (tmp_path / "x.lock.toml").is_file()


def test_a_stack_locks_moved_price_is_shown_as_its_expected_price(tmp_path: Path) -> None:
    """A lock made under a serving stack records the expected price under it. After the card's `scale` went 33.5 →
    30 Tcycle/s, `price --stack` showed that lock's line as "recorded 996.1 … today 996.1 (+0.00 %, first moved:
    scale_s)": the limit's tokens/s, which did not move, while the expected price it locks went 237.4 → 236.1."""
    root = copy_root(tmp_path)
    stack = "llamacpp-cuda-2405"
    made = invoke("lock", "r1-qwen7b-h200", "--stack", stack, "-o", str(root / "locks" / "r1-stack.lock.toml"),
                  root=root)
    assert made.exit_code == 0, made.output
    edit = invoke("fact", "set", H200, "scale", "--value", "30", "--unit", "Tcycle/s", "--provenance", "estimated",
                  "--source", "nvidia-h200-datasheet", "--locator", "a what-if scale", root=root)
    assert edit.exit_code == 0, edit.output
    out = invoke("price", "r1-qwen7b-h200", "--stack", stack, root=root)
    assert out.exit_code == 0, out.output
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert ("recorded 996.1 tokens/s at batch 1 by lock r1-qwen7b-h200; today 996.1 tokens/s at batch 1 (tokens/s did "
            "not move, first moved: scale_s) — not the locked price") in lines
    assert (f"recorded 237.4 tokens/s expected under stack {stack} at batch 1 by lock r1-stack; today 236.1 tokens/s "
            "at batch 1 (-0.55 %, first moved: scale_s) — not the locked price") in lines


def test_fact_set_warns_of_a_figure_moved_a_thousandfold_and_of_a_note_or_derivation_dropped(tmp_path: Path) -> None:
    """Walkthrough 13: `memory.bandwidth --value 3350 --unit TB/s` (3350 GB/s meant) left the derived shares tiny
    (0.0009493) but valid, and was written with the stale warnings alone; a note dropped by `fact set` (it writes the
    entry given) went unsaid until `diff`. Both are said on stderr; the edit is written (exit 0)."""
    root = copy_root(tmp_path)
    card = "h100_sxm5_80gb"
    up = invoke("fact", "set", card, "memory.bandwidth", "--value", "3350", "--unit", "TB/s", "--provenance",
                "published", "--source", "nvidia-h100-datasheet", "--locator", "'GPU Memory Bandwidth 3.35TB/s'",
                root=root)
    assert up.exit_code == 0, up.output
    assert (f"passprice: warning: facts/cards/{card}.toml: memory.bandwidth: 3350 TB/s is 1000 × the figure it "
            "replaces (3.35 TB/s): check the value and its unit") in up.stderr.splitlines()
    rewrite = invoke("fact", "set", H200, "streams.rewrite", "--value", "0.8", "--unit", "1", "--provenance",
                     "estimated", "--source", "azure-ai-benchmarking-guide", "--locator", "an engineering estimate",
                     root=root)
    assert rewrite.exit_code == 0, rewrite.output
    warned = rewrite.stderr.splitlines()
    assert (f"passprice: warning: facts/cards/{H200}.toml: streams.rewrite: its derivation was removed (fact set "
            "writes the entry as given: --derivation keeps one)") in warned
    assert (f"passprice: warning: facts/cards/{H200}.toml: streams.rewrite: its note was removed (fact set writes "
            "the entry as given: --note keeps one)") in warned


def test_root_given_after_the_command_says_where_it_goes() -> None:
    """Walkthrough 13: `price my-serving --root DIR` said "No such option '--root'. (Did you mean one of: '--draft',
    '--routing'?)"."""
    assert bad("price", "r1-qwen7b-h200", "--root", "x") == [
        "passprice: error: --root is an option of passprice itself: give it before the command (passprice --root DIR "
        "price …) (see 'cli price --help')"
    ]


def test_a_gguf_file_among_the_checkpoint_entries_is_warned_of(tmp_path: Path) -> None:
    """Walkthrough 13: a `.gguf.xz` copied into `registry/checkpoints/` was ignored by `check` without a word."""
    import shutil

    root = copy_root(tmp_path)
    shutil.copy(Path(__file__).parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz", root / "registry" / "checkpoints")
    out = invoke("check", root=root)
    assert out.exit_code == 0, out.output
    assert ("  warning: registry/checkpoints/gemma3-270m-q4_k_m.header.gguf.xz: a GGUF file, not a checkpoint entry: "
            "passprice reads the .toml entries here alone (`passprice import FILE --name NAME` writes one)"
            ) in out.stdout.splitlines()
