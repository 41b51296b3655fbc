"""Issue 13's small left-overs (the review, reproduce and audit uses), each kept as its reproducer, built in the test.

- (1) ``roofline OTHER_CARD SERVING`` (and ``price``, ``best``, ``max-batch``, ``audit``, ``simulate``,
  ``speculate``, ``new-serving`` with ``--card OTHER``) of a serving file whose ``contexts.1.limit`` is past its
  checkpoint's context was refused ``ContextBeyondModel: … lower --limit`` (exit 1), while on the serving's own card
  (and ``sweep --cards``, ``compare``) it was bad input naming the file and key (exit 2). Now exit 2 everywhere: a
  card named on the command line clears the spec's ``source`` but keeps the file of its context classes.
- (2) Refusals a file can reach that gave option advice. From a serving file: ``attention = "array"`` over
  ``kv_bytes = 2`` (``WideCacheOnArray``: "use --kv-bytes 1 or --attention vector"), ``host_memory = true`` on a card
  with no host link (``NoHostLink``: "price it without --host-memory"), ``draft.tokens`` past its method's figures
  (``BadDraft``: "--draft-tokens 3"), a ``draft.method`` whose drafter the checkpoint does not carry (``NoDrafter``:
  "price without drafts"): now bad input naming the file and key, what to change in it. ``BadPrefix`` was already
  (``shared_prefix``, ``contexts.N.position``). From a measurement run only ``NotResident`` and the refusals
  ``measurements.run_refusal`` words are reachable (a run is priced vector attention, a contiguous 16-bit cache, no
  host memory, prefix or draft): a run whose weights alone pass its card was told to correct its "batch, positions
  or card"; now its card or checkpoint (``run.0.card``). The same refusals of options keep the options' advice.
- (3) A trace's ``prefix_id`` given two lengths was printed whole with ``repr`` (1,000,000 characters in the
  ``--json`` error document; the text line cut only by the command line's backstop), as was a key given twice: now
  as the trace writes a value, one longer than 40 characters by its length (``a 1,000,002-character string``).
- (4) ``check`` of ``locks/old/`` holding a symbolic link to a lock of ``locks/`` and one to the README said only
  "its 2 .toml files are neither checked nor priced (… move them to locks/)": moving the first makes a second name of
  a lock. Now each link is named as ``check`` names one in ``locks/`` (``locks/old/x.lock.toml -> …``), with what it
  reaches and what to do.
- (5) The review's "N warnings of check on HEAD" left out the duplicate locks of a pair the change touches (listed
  under "locks duplicating another"), and with no other warning it dropped check's line of undated sources too: a
  copied lock read "1 duplicating another" and no warning where ``check`` printed 2. Now the count is check's, says how
  many are under that heading, and the warnings' list ends "and 1 more warning under locks duplicating another".
- (6) Under ``core.autocrlf true``, a ``*.txt text`` rule in ``.git/info/attributes`` (over every ``.gitattributes``)
  was said as "the .gitattributes rule `text`", the advice to add ``-text`` lines to ``.gitattributes``, which the
  rule overrides. Now the rule is named with its file, and the advice is to remove it there; one in the file
  ``core.attributesFile`` names (under ``.gitattributes``) is named with that file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke, refused

GEMMA = "registry/servings/gemma3-270m-h100.toml"
RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
OTHER = "h200_sxm_141gb"


def _gemma_past(tmp_path: Path) -> Path:
    """A registry whose Gemma 3 270M serving has a class of limit 65,536, past the model's 32,768 positions."""
    root = copy_root(tmp_path)
    path = root / GEMMA
    text = path.read_text(encoding="utf-8")
    assert text.count("limit = 32768") == 1
    path.write_text(text.replace("limit = 32768", "limit = 65536"), encoding="utf-8")
    return root


PAST = (
    f"passprice: error: {GEMMA}: contexts.1.limit: 65,536 positions is past the context length of checkpoint "
    "gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past its context; give each class a limit of "
    "at most 32,768"
)


@pytest.mark.parametrize(
    "args",
    [
        ("roofline", OTHER, "gemma3-270m"),
        ("roofline", "h100_sxm5_80gb", "gemma3-270m"),
        ("price", "gemma3-270m"),
        ("price", "gemma3-270m", "--card", OTHER),
        ("best", "gemma3-270m", "--card", OTHER),
        ("max-batch", "gemma3-270m", "--card", OTHER),
        ("audit", "gemma3-270m", "--card", OTHER),
        ("simulate", "gemma3-270m", "--card", OTHER, "--synthetic", "3"),
        ("speculate", "gemma3-270m", "--card", OTHER, "--draft", "qwen35-mtp"),
        ("sweep", "gemma3-270m", "--cards", OTHER),
        ("compare", "gemma3-270m"),
        ("new-serving", "copied", "gemma3-270m", "--card", OTHER),
    ],
)
def test_a_files_limit_past_the_model_is_the_files_on_every_card(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = _gemma_past(tmp_path)
    args = tuple(a.replace("gemma3-270m", "gemma3-270m-h100") if a == "gemma3-270m" else a for a in args)
    # Before, with another card: "passprice: refused: ContextBeyondModel: context limit 65536 is past the
    # checkpoint's context length 32768: lower --limit" (exit 1).
    assert bad(*args, root=root) == [PAST]
    assert not (root / "registry/servings/copied.toml").exists()


def test_a_limit_the_command_line_gives_is_still_the_options(tmp_path: Path) -> None:
    root = _gemma_past(tmp_path)
    for extra in (("--limit", "40000"), ("--checkpoint", "llama2-7b-q4_0")):
        result = invoke("price", "gemma3-270m-h100", "--card", OTHER, *extra, root=root)
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith("passprice: refused: ContextBeyondModel: context limit "), result.stderr
        assert result.stderr.rstrip().endswith(": lower --limit"), result.stderr
    result = invoke("price", "gemma3-270m-h100", "--card", OTHER, "--limit", "30000", root=root)
    assert result.exit_code == 0, result.output


SERVINGS = "registry/servings"


def _serving(root: Path, name: str, old: str, new: str, base: str = "gemma3-270m-h100") -> str:
    """``registry/servings/NAME.toml``: ``base``'s file with ``old`` replaced by ``new`` (once); its path as named."""
    text = (root / SERVINGS / f"{base}.toml").read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    (root / SERVINGS / f"{name}.toml").write_text(text.replace(old, new), encoding="utf-8")
    return f"{SERVINGS}/{name}.toml"


def _draft_method(root: Path, name: str, kind: str) -> None:
    """facts/drafts/NAME.toml: qwen35-mtp's file of ``kind``, its scope Gemma 3 270M (whose header has no MTP)."""
    text = (root / "facts/drafts/qwen35-mtp.toml").read_text(encoding="utf-8")
    text = text.replace('kind = "mtp"', f'kind = "{kind}"').replace(
        'checkpoints = ["qwen35-27b-like"]', 'checkpoints = ["gemma3-270m-q4_k_m"]')
    (root / f"facts/drafts/{name}.toml").write_text(text, encoding="utf-8")


def test_a_serving_files_choices_the_pricer_refuses_are_named_by_key(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    wide = _serving(root, "wide", "kv_bytes = 2\n", 'kv_bytes = 2\nattention = "array"\n')
    nohost = _serving(root, "nohost", 'card = "h100_sxm5_80gb"\n', 'card = "l40s"\nhost_memory = true\n')
    long = _serving(root, "long", "tokens = 1\n", "tokens = 5\n", base="qwen35-27b-h100-every8")
    _draft_method(root, "g-mtp", "mtp")
    _draft_method(root, "g-model", "draft-model")
    mtp = _serving(root, "mtp", "kv_bytes = 2\n", 'kv_bytes = 2\n\n[draft]\nmethod = "g-mtp"\ntokens = 1\n')
    model = _serving(root, "model", "kv_bytes = 2\n", 'kv_bytes = 2\n\n[draft]\nmethod = "g-model"\ntokens = 1\n')
    said = {
        # Before: "passprice: refused: WideCacheOnArray: attention on the array needs an 8-bit cache (kv_bytes <=
        # 1.25), not 2 bytes an element: use --kv-bytes 1 or --attention vector" (exit 1).
        # (Read where every serving file's keys are checked, it is named as the file was found: --root's path.)
        "wide": f'{root / wide}: kv_bytes: attention = "array" reads an 8-bit cache (kv_bytes at most 1.25: 8-bit '
                'codes and a scale share), not 2 bytes an element: set kv_bytes = 1, or attention = "vector"',
        # Before: "passprice: refused: NoHostLink: card 'l40s' has no host link (host.* facts): price it without
        # --host-memory".
        "nohost": f"{nohost}: host_memory: card l40s has no host link (no host.* facts), so no sequence can be held "
                  "in host memory: remove host_memory (or set it false), or name a card with a host link",
        # Before: "passprice: refused: BadDraft: … draft at most 3 tokens (--draft-tokens 3), or add acceptance.4 …".
        "long": f"{long}: draft.tokens: 5 drafted tokens, but drafting method qwen35-mtp gives acceptance figures for "
                "3 drafts (facts/drafts/qwen35-mtp.toml), so a longer draft would be priced on a guess: set "
                "draft.tokens to at most 3, or add acceptance.4 to that file, cited as every fact is",
        # Before: "passprice: refused: NoDrafter: drafting method 'g-mtp': its header carries no drafting blocks
        # (nextn_predict_layers 0), … price without drafts, or a checkpoint that carries its drafter …".
        "mtp": f"{mtp}: draft.method: drafting method g-mtp drafts with the checkpoint's MTP blocks, and checkpoint "
               "gemma3-270m-q4_k_m carries none (nextn_predict_layers 0), so its drafted tokens would be priced as if "
               "drafting cost nothing but the head's rows: remove [draft], or name a checkpoint that carries its "
               "drafter",
        "model": f"{model}: draft.method: it drafts with a separate draft model, whose weights and passes are not in "
                 "this checkpoint's header, so its drafted tokens would be priced as if drafting cost nothing: remove "
                 "[draft], or name a method that drafts with the checkpoint's MTP blocks",
    }
    for name, line in said.items():
        for command in ("price", "best"):
            assert bad(command, name, root=root) == [f"passprice: error: {line}"], (command, name)
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    errors = [line for line in checked.stderr.splitlines() if line.startswith("passprice: error: ")]
    for line in said.values():  # check names every file from the registry's top
        assert f"passprice: error: {line.replace(f'{root}/', '')}" in errors


@pytest.mark.parametrize(
    ("args", "name", "advice"),
    [
        (("gemma3-270m-h100", "--attention", "array"), "WideCacheOnArray", ": use --kv-bytes 1 or --attention vector"),
        (("gemma3-270m-h100", "--card", "l40s", "--host-memory"), "NoHostLink",
         ": price it without --host-memory"),
        (("qwen35-27b-h100-every8", "--draft-tokens", "5"), "BadDraft",
         "draft at most 3 tokens (--draft-tokens 3), or add acceptance.4 to that file, cited as every fact is"),
    ],
)
def test_the_same_choices_given_as_options_keep_the_options_advice(
    tmp_path: Path, args: tuple[str, ...], name: str, advice: str
) -> None:
    root = copy_root(tmp_path)
    out = refused("price", *args, root=root, name=name)
    assert out["message"].endswith(advice), out


def test_a_run_whose_weights_alone_pass_its_card_is_told_to_correct_card_or_checkpoint(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    runs = root / RUNS
    text = runs.read_text(encoding="utf-8")
    first = 'card = "h100_pcie_80gb"\ncheckpoint = "llama3-8b-q4_k_m"\nbatch = 1\npositions = [0, 512]'
    assert text.count(first) == 1
    runs.write_text(text.replace(first, first.replace("h100_pcie_80gb", "rtx_4090").replace("8b", "70b")),
                    encoding="utf-8")
    # Llama 3 70B Q4_K_M holds 42,512,531,456 bytes once; the RTX 4090 holds 25,757,220,864: 42,512,531,456 /
    # 25,757,220,864 = 1.6505 times; with its 512 positions' cache, 42,680,303,616 bytes.
    shortfall = (
        "the card memory must hold 42,680,303,616 bytes but holds 25,757,220,864: the weights and embedding table "
        "alone take 42,512,531,456 bytes, 1.65 times what it holds, so no batch or positions fit"
    )
    result = invoke("validate", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith("xd3.h100_pcie_80gb.8b-q4km.tg512 "))
    assert row.endswith("  refused (NotResident)"), row  # the refusal's name in the row, its message below
    # Before: "… refused (NotResident): the card memory must hold … holds 25,757,220,864: correct the run's batch,
    # positions or card".
    assert (f"  xd3.h100_pcie_80gb.8b-q4km.tg512: refused (NotResident): {shortfall}: correct the run's card or "
            "checkpoint") in lines
    said = (
        f"passprice: error: {RUNS}: run.0.card: refused (NotResident): checkpoint llama3-70b-q4_k_m on card rtx_4090: "
        f"{shortfall}; a fit rests only on runs the model prices: correct the run's card or checkpoint, or name "
        "another stack for it (`stack`)"
    )
    assert bad("calibrate", "--stack", "llamacpp-cuda-2405", root=root) == [said]


def test_a_long_prefix_id_or_key_is_described_not_printed(tmp_path: Path) -> None:
    import json

    big = "p" * 1_000_000
    trace = tmp_path / "t.jsonl"
    lines = [{"arrival_s": 0, "prompt_tokens": 100, "output_tokens": 10, "prefix_id": big, "prefix_tokens": 50},
             {"arrival_s": 0.5, "prompt_tokens": 100, "output_tokens": 10, "prefix_id": big, "prefix_tokens": 60},
             {"arrival_s": 1, "prompt_tokens": 100, "output_tokens": 10, "prefix_id": "a\nb", "prefix_tokens": 60},
             {"arrival_s": 2, "prompt_tokens": 100, "output_tokens": 10, "prefix_id": "a\nb", "prefix_tokens": 70}]
    twice = '{"arrival_s": 3, "' + "k" * 100_000 + '": 1, "' + "k" * 100_000 + '": 2}'
    trace.write_text("\n".join([*map(json.dumps, lines), twice]) + "\n", encoding="utf-8")
    said = [
        # Before: "…:2: prefix_id 'ppp…' has 60 tokens here …", every character (repr), cut at 3,500 by the CLI.
        f"passprice: error: {trace}:2: prefix_id a 1,000,002-character string has 60 tokens here but 50 on line 1: "
        "one id names one prefix",
        f'passprice: error: {trace}:4: prefix_id "a\\nb" has 70 tokens here but 60 on line 3: one id names one prefix',
        f"passprice: error: {trace}:5: not JSON: key a 100,002-character string given twice",
    ]
    assert bad("simulate", "gemma3-270m-h100", "--trace", str(trace)) == said
    result = invoke("simulate", "gemma3-270m-h100", "--trace", str(trace), "--json")
    assert result.exit_code == 2 and len(result.stdout) < 1_000, len(result.stdout)


def test_check_names_the_links_in_a_folder_inside_locks(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    old = root / "locks" / "old"
    old.mkdir()
    (old / "x.lock.toml").symlink_to("../r1-qwen7b-h200.lock.toml")
    (old / "y.lock.toml").symlink_to("../../README.md")
    (root / "README.md").write_text("# mine\n", encoding="utf-8")
    (old / "z.lock.toml").symlink_to("gone.lock.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    said = [line for line in result.stderr.splitlines() if "locks/old" in line]
    # Before: "…/locks/old: not a folder passprice reads: its 3 .toml files are neither checked nor priced
    # (passprice reads locks/ itself, not the folders in it: move them to locks/)".
    assert said == [
        "passprice: error: locks/old: not a folder passprice reads: its 3 .toml files are neither checked nor priced "
        "(passprice reads locks/ itself, not the folders in it); locks/old/x.lock.toml -> "
        "../r1-qwen7b-h200.lock.toml, a symbolic link to locks/r1-qwen7b-h200.lock.toml, read already from locks/: "
        "remove the link (moved to locks/, it would be a second name of that file); locks/old/y.lock.toml -> "
        "../../README.md, a symbolic link to README.md: move the file it names to locks/ if passprice should read it, "
        "and remove the link; locks/old/z.lock.toml -> gone.lock.toml, a symbolic link to nothing: remove it"
    ], said
    (old / "w.lock.toml").write_text("", encoding="utf-8")  # a file and a fourth link: the files moved, one counted
    (old / "v.lock.toml").symlink_to("gone.lock.toml")
    result = invoke("check", root=root)
    said = [line for line in result.stderr.splitlines() if "locks/old" in line]
    assert len(said) == 1 and said[0].startswith(
        "passprice: error: locks/old: not a folder passprice reads: its 5 .toml files are neither checked nor priced "
        "(passprice reads locks/ itself, not the folders in it: move the files to locks/); locks/old/v.lock.toml -> "
        "gone.lock.toml, a symbolic link to nothing: remove it; "), said
    assert said[0].endswith("; and 1 more symbolic link"), said


def test_the_reviews_count_of_checks_warnings_holds_the_duplicates(tmp_path: Path) -> None:
    import shutil

    base = copy_root(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    shutil.copyfile(head / "locks/r1-qwen7b-h200.lock.toml", head / "locks/r1-copy.lock.toml")
    checked = invoke("check", root=head)
    warned = [line for line in checked.stdout.splitlines() if line.startswith("  warning: ")]
    assert len(warned) == 2 and "locks/r1-copy.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml" in warned[0]
    assert "source records say retrieved = \"unknown\"" in warned[1], warned
    result = invoke("diff", str(base), str(head), root=head)
    text = result.stdout.splitlines()
    # Before: "…; 1 lock affected, 1 added, 1 duplicating another; 9 locks unaffected": no warning of check's 2.
    assert "; 2 warnings of check on HEAD (1 under locks duplicating another); " in text[1], text[1]
    at = text.index("HEAD's passprice check warns (not a failure)")
    assert text[at + 1].startswith("  warning: ") and "retrieved = \"unknown\"" in text[at + 1]
    assert text[at + 2] == "  and 1 more warning under locks duplicating another"
    assert text[text.index("locks duplicating another") + 1].startswith(
        "  locks/r1-copy.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: ")
    markdown = invoke("diff", str(base), str(head), "--format", "markdown", root=head).stdout.splitlines()
    at = markdown.index("#### Warnings of passprice check on HEAD (not a failure)")
    assert markdown[at + 3] == "- and 1 more warning under locks duplicating another", markdown[at:at + 4]


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_a_text_rule_outside_gitattributes_is_named_with_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = copy_root(tmp_path)
    (root / ".gitattributes").write_text("facts/*/README.md -text\nsources/excerpts/*.txt -text\n", encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    _git(root, "config", "core.autocrlf", "true")
    assert invoke("check", root=root).exit_code == 0  # the committed -text lines keep every file's bytes
    (root / ".git/info").mkdir(exist_ok=True)
    (root / ".git/info/attributes").write_text("*.txt text\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    # Before: "… applied by the .gitattributes rule `text` on them), … or set -text on passprice's files in
    # .gitattributes (…, committed, after the `text` rule: …)": the lines above, which the rule overrides.
    assert result.stderr.splitlines() == [
        "passprice: error: sources/excerpts/cite102-excerpt.txt and 12 more files: git writes their line ends as CRLF "
        "in a checkout (core.autocrlf=true, a setting of .git/config, applied by the rule `*.txt text` of "
        ".git/info/attributes on them), so a checkout's bytes are not the committed bytes a review reads (and `git "
        "checkout` writes them so again); set `git config core.autocrlf false` in this repository, or remove the rule "
        "`*.txt text` from .git/info/attributes, which is over every .gitattributes (a -text line of .gitattributes "
        "does not undo it), and set -text on passprice's files in .gitattributes (`facts/cards/README.md -text`, "
        "`facts/stacks/README.md -text`, `schema/*.json -text`, `sources/excerpts/*.txt -text`, committed: every "
        "machine's checkout then keeps their bytes)"
    ], result.stderr
    (root / ".git/info/attributes").write_text("", encoding="utf-8")
    assert invoke("check", root=root).exit_code == 0
    # The user's file is under .gitattributes: named, with the .gitattributes advice (a -text line there wins).
    user = tmp_path / "user-attributes"
    user.write_text("*.txt text\n", encoding="utf-8")
    _git(root, "config", "core.attributesFile", str(user))
    (root / ".gitattributes").write_text("facts/*/README.md -text\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (f"(core.autocrlf=true, a setting of .git/config, applied by the rule `*.txt text` of {user}, the "
            "core.attributesFile of .git/config on them)") in result.stderr, result.stderr
    assert "or set -text on passprice's files in .gitattributes (" in result.stderr, result.stderr
