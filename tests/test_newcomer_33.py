"""Findings of the thirty-third README-only walkthrough (a platform engineer keeping a fork of the registry for their
company: ``init`` in the fork's fresh git repository, a hand-written card for a new accelerator with its source record
and one derived figure, a checkpoint imported from a GGUF header built with ``gguf.GGUFWriter``, a serving priced and
locked, a pull request changing one fact read with ``diff main HEAD --markdown``, the lock reproduced a month and an
upgrade later, and a mixture of experts on a routing record of their own), each kept as a reproducer: a source record
written from the README's list of its keys, without ``[source]``, refused in words that did not say where they go;
``--markdown`` read "No such option" (``audit``: "Did you mean '--card'?"); ``init .`` at the top of the fork's own
repository advised ``git init`` again; a derivation dividing TOPS by 2 refused for giving ``op/s`` without saying how
a multiply-add is written; ``reproduce`` in a registry of one's own, after an upgrade, advised a ``git worktree`` of a
commit that holds no code, where the README says it names the requirements.txt line; and words the outputs print
(what-if, re-lock, relabelled, price lock, hypothetical, origin) that ``explain`` did not know."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import gguf
import numpy as np

from cli_helpers import LISTED_MODEL, bad, copy_root, invoke
from passprice import glossary
from passprice.derivations import operations_hint
from test_newcomer_29 import _redigested

#: The persona's source record: the README's keys, and (before) no ``[source]`` line.
SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "Acme X1 accelerator datasheet"
kind = "datasheet"
publisher = "Acme Corp"
date = "2026-09-01"
url = "https://acme.example/x1/datasheet.pdf"
retrieved = "2026-11-30"
read = "PDF, Specifications table"
"""


def _fact(path: str, value: float, unit: str, provenance: str, locator: str, extra: str = "") -> str:
    return (f'[{path}]\nvalue = {value}\nunit = "{unit}"\nprovenance = "{provenance}"\nsource = "acme-x1-datasheet"\n'
            f'locator = "{locator}"\n{extra}\n')


#: The persona's card, written by hand from the README (one derived figure: array, from the datasheet's dense TOPS).
CARD = '#:schema ../../schema/card.schema.json\n[card]\nname = "Acme X1"\nvendor = "Acme"\n\n' + "".join([
    _fact("memory.capacity", 96, "GB", "published", "Specifications table: Memory 96 GB"),
    _fact("memory.bandwidth", 4.0, "TB/s", "published", "Specifications table: Memory bandwidth 4.0 TB/s"),
    _fact("on_chip.capacity", 64, "MiB", "published", "Specifications table: On-chip SRAM 64 MiB"),
    _fact("on_chip.bandwidth", 20, "TB/s", "estimated", "not stated; an engineering estimate"),
    _fact("streams.read", 0.9, "1", "estimated", "no benchmark; estimated"),
    _fact("streams.rewrite", 0.8, "1", "estimated", "no benchmark; estimated"),
    _fact("streams.append", 0.85, "1", "estimated", "no benchmark; estimated"),
    _fact("array", 1000, "TMAC/s", "derived", "Specifications table: INT8 2,000 TOPS dense",
          'derivation.formula = "tops / ops_per_mac"\n'
          'derivation.inputs.tops = { value = 2000, unit = "TOPS", locator = "Specifications: INT8 2,000 TOPS" }\n'
          'derivation.inputs.ops_per_mac = { value = 2, unit = "op/MAC", constant = "a multiply-add: 2 operations" }'),
    _fact("vector", 40, "TMAC/s", "published", "Specifications table: FP32 80 TFLOPS"),
    _fact("scale", 10, "Tcycle/s", "assumed", "not stated"),
])


def _registry(tmp_path: Path) -> Path:
    """A copy of the checkout's registry with the persona's card and source record."""
    root = copy_root(tmp_path)
    (root / "sources" / "acme-x1-datasheet.toml").write_text(SOURCE, encoding="utf-8")
    (root / "facts" / "cards" / "acme_x1.toml").write_text(CARD, encoding="utf-8")
    return root


def _tiny_llama(path: Path) -> Path:
    """The persona's checkpoint header, written with gguf.GGUFWriter: a llama of 4 blocks, width 1,024, 16 heads
    over 4 KV heads (KV width 256), feed-forward 2,816, 32,000 tokens; Q4_K matrices but Q6_K ``attn_v``,
    ``ffn_down`` and ``output``, F32 norms."""
    w = gguf.GGUFWriter(str(path), "llama")
    for add, value in ((w.add_name, "tiny-llama"), (w.add_context_length, 8192), (w.add_embedding_length, 1024),
                       (w.add_block_count, 4), (w.add_feed_forward_length, 2816), (w.add_head_count, 16),
                       (w.add_head_count_kv, 4), (w.add_layer_norm_rms_eps, 1e-5), (w.add_rope_dimension_count, 64),
                       (w.add_file_type, 15)):
        add(value)  # type: ignore[operator]
    q = gguf.GGMLQuantizationType

    def tensor(name: str, shape: tuple[int, ...], kind: gguf.GGMLQuantizationType) -> None:
        block, size = gguf.GGML_QUANT_SIZES[kind]
        nbytes = int(np.prod(shape)) // block * size
        if kind == q.F32:
            w.add_tensor_info(name, shape, np.dtype(np.float32), nbytes)
        else:
            w.add_tensor_info(name, gguf.quant_shape_to_byte_shape(shape, kind), np.dtype(np.uint8), nbytes,
                              raw_dtype=kind)

    tensor("token_embd.weight", (32000, 1024), q.Q4_K)
    for i in range(4):
        for name, shape, kind in (("attn_norm", (1024,), q.F32), ("attn_q", (1024, 1024), q.Q4_K),
                                  ("attn_k", (256, 1024), q.Q4_K), ("attn_v", (256, 1024), q.Q6_K),
                                  ("attn_output", (1024, 1024), q.Q4_K), ("ffn_norm", (1024,), q.F32),
                                  ("ffn_gate", (2816, 1024), q.Q4_K), ("ffn_up", (2816, 1024), q.Q4_K),
                                  ("ffn_down", (1024, 2816), q.Q6_K)):
            tensor(f"blk.{i}.{name}.weight", shape, kind)
    tensor("output_norm.weight", (1024,), q.F32)
    tensor("output.weight", (32000, 1024), q.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


def test_the_hand_written_card_prices_the_imported_checkpoint_as_by_hand(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    header = _tiny_llama(tmp_path / "tiny-llama.gguf")
    assert invoke("import", str(header), "--name", "tiny-llama", root=root).exit_code == 0
    result = invoke("price", "--checkpoint", "tiny-llama", "--card", "acme_x1", "--batch", "8", "--json", root=root)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # Weights: every tensor but the embedding table, whose rows the batch's 8 tokens read (a Q4_K row of 1,024
    # elements is 1024 / 256 × 144 = 576 B): Q4_K is 144 B a 256 block, Q6_K 210 B, F32 4 B an element.
    q4k, q6k = 144 / 256, 210 / 256
    blocks = 4 * (1024 * 1024 * q4k * 2 + 256 * 1024 * q4k + 256 * 1024 * q6k + 2816 * 1024 * q4k * 2
                  + 1024 * 2816 * q6k + 2 * 1024 * 4)
    weights = blocks + 1024 * 4 + 32000 * 1024 * q6k + 8 * 1024 * q4k
    assert weights == 55_527_936 == data["weight_bytes"]
    # A sequence's KV at mean position 2,048 plus the row it appends: 4 blocks × (K + V) × 256 × 2 B × 2,049.
    assert 4 * 2 * 256 * 2 * 2049 == 8_392_704 == data["sequence_bytes"]
    # memory = 55,527,936 B / (4 TB/s × 0.9) + 8 × 8,392,704 B / (4 TB/s × 0.85)
    #        = 15.4244 µs + 19.7475 µs = 35.1720 µs; tokens/s = 8 / 35.1720 µs = 227,453.9.
    memory = 55_527_936 / (4e12 * 0.9) + 8 * 8_392_704 / (4e12 * 0.85)
    assert math.isclose(data["memory_s"], memory, rel_tol=1e-15) and f"{memory * 1e6:.4f}" == "35.1720"
    assert data["binds"] == "memory" and data["pass_s"] == data["memory_s"]
    assert math.isclose(data["tokens_per_s"], 8 / memory, rel_tol=1e-15)
    assert f"{data['tokens_per_s']:,.1f}" == "227,453.9"
    # The derived figure: 2,000 TOPS / (2 op/MAC) = 1,000 TMAC/s; array = 985,661,440 MAC / 1e15 MAC/s.
    assert data["array_s"] == data["array_macs"] / 1e15 and data["array_macs"] == 985_661_440
    assert data["provenance"] == "assumed" and data["weakest"] == ["scale"]


def test_the_moe_on_a_routing_record_of_ones_own_reads_the_experts_by_hand(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    config = Path(__file__).resolve().parent.parent / "examples" / "configs" / "mixtral-8x7b.json"
    made = invoke("synth", str(config), "--mix", "Q4_K_M", "-o", str(tmp_path / "mixtral-8x7b.header.gguf"),
                  "--import", "my-mixtral", root=root)
    assert made.exit_code == 0, made.output
    (root / "notes").mkdir()
    (root / "notes" / "mixtral-routing.md").write_text("# Mixtral routing\n", encoding="utf-8")
    (root / "sources" / "my-notes.toml").write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "Routing counts of Mixtral 8x7B"\n'
        'kind = "registry"\npublisher = "platform team"\npath = "notes/mixtral-routing.md"\n'
        'read = "table 1, counted from router logs"\n',
        encoding="utf-8")
    record = ('#:schema ../../schema/routing.schema.json\n[routing]\nname = "Mixtral 8x7B on our chat traffic"\n'
              'experts = 8\nused = 2\ncheckpoints = ["my-mixtral"]\n\n')
    for key, value in (("hot_experts", 0.25), ("hot_share", 0.4)):
        record += (f'[{key}]\nvalue = {value}\nunit = "1"\nprovenance = "measured"\nsource = "my-notes"\n'
                   f'locator = "table 1"\n\n')
    (root / "facts" / "routing" / "my-mixtral.toml").write_text(record, encoding="utf-8")
    result = invoke("price", "--checkpoint", "my-mixtral", "--card", "acme_x1", "--batch", "16", "--routing",
                    "my-mixtral", "--json", root=root)
    assert result.exit_code == 0, result.output
    routing = json.loads(result.stdout)["routing"]
    # p_hot = k × hot_share / (hot_experts × E) = 2 × 0.4 / 2 = 0.4 for each of the 2 hot experts;
    # p_cold = 2 × 0.6 / 6 = 0.2 for each of the other 6. D(16) = 2 (1 − 0.6^16) + 6 (1 − 0.8^16)
    # = 1.99944 + 5.83112 = 7.83055 experts a layer, of 8.
    assert routing["tokens"] == 16 and routing["experts"] == 8 and routing["used"] == 2
    assert math.isclose(routing["distinct"], 2 * (1 - 0.6**16) + 6 * (1 - 0.8**16), rel_tol=1e-12)
    assert f"{routing['distinct']:.5f}" == "7.83055"


def test_a_source_record_without_its_table_says_to_write_the_table_line(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    path = root / "sources" / "acme-x1-datasheet.toml"
    path.write_text(SOURCE.replace("[source]\n", ""), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    # Before: "(top level): Additional properties are not allowed ('title', 'kind', 'publisher', 'date', 'url' and
    # 2 more were unexpected)", and no word of where they go.
    assert result.stderr.splitlines()[:2] == [
        "passprice: error: sources/acme-x1-datasheet.toml: source: missing (required)",
        "passprice: error: sources/acme-x1-datasheet.toml: (top level): unknown keys 'title', 'kind', "
        "'publisher', 'date', 'url' and 2 more; they are keys of the [source] table: write [source] on a line above "
        "them",
    ]
    # A routing record's keys written without [routing] alike; a key of no table is said as before.
    routing = root / "facts" / "routing" / "uniform.toml"
    routing.write_text(routing.read_text(encoding="utf-8").replace("[routing]\n", ""), encoding="utf-8")
    lines = invoke("check", root=root).stderr.splitlines()
    assert [x for x in lines if "uniform.toml: (top level)" in x] == [
        "passprice: error: facts/routing/uniform.toml: (top level): unknown keys 'name', 'note'; they are keys "
        "of the [routing] table: write [routing] on a line above them"]
    path.write_text(SOURCE + "bogus = 1\n", encoding="utf-8")
    # leftovers 28c: with the keys the table may hold (no near miss of 'bogus' among them)
    assert ("passprice: error: sources/acme-x1-datasheet.toml: source: unknown key 'bogus'; "
            "the keys here are arxiv, authors, commit, copies, date, excerpt, "
            "excerpt_sha256, kind, note, path and 7 more") in invoke("check", root=root).stderr.splitlines()


def test_an_option_named_after_a_choice_says_the_option_to_write() -> None:
    # Before: "No such option '--markdown'." and, for audit, "Did you mean '--card'?".
    bad("diff", "HEAD", "HEAD", "--markdown",
        says="passprice: error: no such option --markdown: write --format markdown")
    bad("audit", "r1-qwen7b-h200", "--markdown",
        says="passprice: error: no such option --markdown: write --format markdown")
    bad("sweep", "r1-qwen7b-h200", "--csv",
        says="passprice: error: no such option --csv: write --format csv")
    bad("price", "r1-qwen7b-h200", "--sub32",
        says="passprice: error: no such option --sub32: write --scaling sub32")
    # An option that is no choice is click's line, as before.
    bad("price", "r1-qwen7b-h200", "--bogus", says="passprice: error: No such option '--bogus'.")


def _git(folder: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_COMMITTER_DATE": "2026-11-05T12:00:00+00:00", "GIT_AUTHOR_DATE": "2026-11-05T12:00:00+00:00",
           "PATH": "/usr/bin:/bin", "HOME": str(folder.parent)}
    return subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_init_at_the_top_of_a_repository_does_not_advise_git_init(tmp_path: Path) -> None:
    fork = tmp_path / "fork"
    fork.mkdir()
    _git(fork, "init", "-q", "-b", "main")
    result = invoke("init", str(fork))
    assert result.exit_code == 0, result.output
    # Before: "next: cd … && git init && pre-commit install; …" in a folder git init had made a repository's top.
    assert result.stdout.splitlines()[-2] == (
        f"next: cd {fork} && pre-commit install; passprice import MODEL.gguf --name NAME")
    plain = tmp_path / "plain"
    result = invoke("init", str(plain))
    assert result.stdout.splitlines()[-2] == (
        f"next: cd {plain} && git init && pre-commit install; passprice import MODEL.gguf --name NAME")


def test_a_derivation_giving_operations_says_how_a_multiply_add_is_written(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    # Before: "...its formula gives op/s, but the fact is in TMAC/s (MAC/s)" and no more.
    bad("fact", "set", "acme_x1", "array", "--value", "1000", "--unit", "TMAC/s", "--provenance", "derived",
        "--source", "acme-x1-datasheet", "--locator", "INT8 2,000 TOPS dense", "--derivation",
        '{formula = "tops / 2", inputs = {tops = {value = 2000, unit = "TOPS", locator = "INT8 2,000 TOPS"}}}',
        root=root,
        says=f"passprice: error: {root / 'facts' / 'cards' / 'acme_x1.toml'}: array.derivation: its formula gives "
             "op/s, but the fact is in TMAC/s (MAC/s): a multiply-add is two operations; divide by an input "
             'ops_per_mac = { value = 2, unit = "op/MAC", constant = "two operations, a multiply and an add, a '
             'multiply-add" }')
    assert operations_hint((("MAC", -1), ("s", -1)), (("MAC", 1), ("s", -1))) == ""  # any other mismatch: nothing
    assert operations_hint((("FLOP", 1), ("s", -1)), (("MAC", 1), ("s", -1))).startswith(
        ': a multiply-add is two operations; divide by an input ops_per_mac = { value = 2, unit = "FLOP/MAC"')
    assert operations_hint((("MAC", 1), ("op", -1)), ()).startswith(": a multiply-add is two operations; multiply")


def test_reproduce_in_a_registry_of_ones_own_names_the_requirements_line(tmp_path: Path) -> None:
    # Was: "pricing model  changed (…); the lock's code is commit C's (…): run it in a work tree of its own, `git
    # worktree add --detach ../at-lock C`": C, a commit of the registry, holds no passprice to run.
    root = copy_root(tmp_path)
    line = "passprice @ git+https://example.invalid/acme/passprice@0123456789abcdef"
    (root / "requirements.txt").write_text(f"# how CI installs passprice\n{line}\n", encoding="utf-8")
    lock = root / "locks" / "qwen3-30b-a3b-h200.lock.toml"
    _redigested(lock, lock, LISTED_MODEL)  # written by another passprice
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the registry and its lock")
    wrote = _git(root, "rev-parse", "HEAD")[:12]
    result = invoke("reproduce", str(lock), root=root)
    assert result.exit_code == 0, result.output
    [said] = [x for x in result.stdout.splitlines() if x.startswith("    pricing model  ")]
    assert said.startswith("    pricing model  changed (d82efb38ac44 → ")
    assert said.endswith(
        f"); the lock's code is the passprice this registry's requirements.txt named at commit {wrote} (2026-11-05: "
        f"the oldest commit whose locks record d82efb38ac44), `{line}`: install it in a virtual environment of its "
        f"own (`git show {wrote}:requirements.txt > at-lock.txt`, `pip install -r at-lock.txt`) and run its "
        "`passprice reproduce` here (README: The price a lock recorded, from the code that wrote it)")
    out = json.loads(invoke("reproduce", str(lock), "--json", root=root).stdout)
    assert out["pricing_model"]["commit"] == {"hash": wrote, "date": "2026-11-05", "requirement": line}


def test_explain_knows_the_words_the_fork_s_outputs_printed() -> None:
    # Before: each "is not a term passprice defines" (compare's "a what-if", diff's "re-lock it" and "re-locked",
    # reproduce's "price lock of serving S" and "relabelled", cards' "marked hypothetical", a lock's origin).
    for word, name in (("what-if", "what-if"), ("re-lock", "re-lock"), ("relock", "re-lock"),
                       ("lock --update", "re-lock"), ("relabelled", "relabelled"), ("price lock", "lock kind"),
                       ("best lock", "lock kind"), ("hypothetical", "hypothetical"), ("origin", "origin")):
        assert glossary.lookup(word).name == name, word
    result = invoke("explain", "lock --update")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == (
        "re-lock: write a lock again from today's inputs, keeping its floors: passprice lock --update -o LOCK  "
        "(also: relock, re-locks, lock --update)")


def test_init_in_a_fork_holding_its_own_readme_says_how_to_set_it_aside(tmp_path: Path) -> None:
    fork = tmp_path / "fork"
    (fork / ".github").mkdir(parents=True)
    (fork / "README.md").write_text("# our fork\n", encoding="utf-8")
    # Before: "…already holds .github, README.md; init writes a registry into an empty folder (or one without these),
    # and replaces nothing", and no way on.
    bad("init", str(fork), says=(
        f"passprice: error: {fork}: already holds .github, README.md; init writes a registry into an empty folder (or "
        "one without these), and replaces nothing: to add a registry beside them, move them aside (mv "
        f"{fork}/.github {fork}/.github.mine; mv {fork}/README.md {fork}/README.md.mine), run init again, then merge "
        "each back into what init wrote"))
    assert (fork / "README.md").read_text(encoding="utf-8") == "# our fork\n" and not (fork / "facts").exists()
