"""Every word passprice prints that a newcomer may not know is defined once, here: ``passprice explain TERM``, the
README's glossary and the legend under a price table are all read from :data:`TERMS`, so they cannot disagree.

The README's glossary section is :func:`markdown` verbatim (``python docs/make.py`` rewrites it; a test compares).
"""

from __future__ import annotations

import contextlib
import difflib
import re

import attrs

from passprice.errors import InputError, escaped
from passprice.schema import shown_value


@attrs.frozen
class Term:
    """One term: its ``name`` as passprice prints it, the other spellings it is looked up by (``aliases``), a
    one-line ``short`` definition (``explain``'s listing), the ``long`` one (``explain``'s, the README's), and a
    ``tag`` of a few words for a table's legend (the ``short`` one when empty)."""

    name: str
    short: str
    long: str
    aliases: tuple[str, ...] = ()
    tag: str = ""
    #: An alias naming a notion of its own that the term explains (``alone`` under ``unaffected``), with its own one
    #: line: ``explain alone`` opened with the term's "a lock the change does not touch" (:func:`headline`).
    heads: tuple[tuple[str, str], ...] = ()


_TERMS = (
    Term(
        "binds",
        "the term that takes longest: the pass takes that long",
        "The five terms of a pass (memory, host, array, vector, scale) run overlapped, so a pass takes as long as the "
        "largest; the pass *binds* on that term. A price table marks it `← binds`; `rests on` marks the facts of the "
        "binding term with `*`. Raising a fact of a term that does not bind does not speed the pass up."
        " `simulate --json`'s `steps_by_bind` and `seconds_by_bind` count the steps, and their seconds, by the"
        " term they bind on.",
        ("bind", "bound", "binding", "limit binds", "expected binds", "steps_by_bind", "seconds_by_bind"),
        tag="the largest term: the pass takes that long",
    ),
    Term(
        "memory",
        "seconds to move the pass's bytes through card memory",
        "The memory term: the weights read once a pass (shared by the batch) plus each sequence's own bytes (KV "
        "cache, recurrent state, log, conv ring), each stream at `memory.bandwidth` times its share (`streams.*`).",
        ("memory.bandwidth", "memory_s"),
        tag="bytes through card memory",
    ),
    Term(
        "host",
        "seconds to move the sequences held in host memory over the host link",
        "The host term: with `--host-memory`, sequences that do not fit in card memory (or in its `--memory-use` "
        "share) live in pinned host memory, and so may a few that fit where the pass is faster so (the host link "
        "reads them beside card memory's stream, the two terms overlapped; a price's `host why` line says which), "
        "read and written over the host link each pass (`host.read`, `host.write`, at the DMA share "
        "`host.stream`). 0 s when every sequence is in card memory. In `--json` and a sweep's rows: `host_s` the "
        "term's seconds, `host_sequences` the sequences of the batch held in host memory, `host_held_bytes` their "
        "bytes there and `host_capacity_bytes` the host memory they may use (`host.capacity`).",
        ("host link", "host memory", "host held", "host why", "host memory allowed", "--host-memory", "host.read",
         "host.write",
         "host.stream", "host.capacity", "host_s", "host_sequences", "host_held_bytes", "host_capacity_bytes"),
        tag="bytes over the host link",
    ),
    Term(
        "array",
        "seconds of integer multiply-adds on the matrix array",
        "The card's integer matrix array (tensor cores, matrix cores), as a rate of multiply-adds a second (MAC/s): "
        "a 4-bit weight code times an 8-bit activation code. A wider weight code is split into 4-bit digits and a "
        "two-word activation into two words, one pass each. Quantized matrices (Q4_K, Q8_0 …) run here. `--json`'s "
        "`array_macs` is the pass's multiply-adds there, `array_s` their seconds.",
        ("integer array", "tensor cores", "array_s", "array_macs"),
        tag="integer multiply-adds",
    ),
    Term(
        "vector",
        "seconds of f32 multiply-adds on the vector units",
        "The card's f32 vector units (CUDA cores, SIMD lanes), as multiply-adds a second (MAC/s): norms, attention's "
        "products over the KV cache (`--attention vector`), recurrences, and float matrices (F32, F16, BF16). A "
        "price says when float matrices are priced here: F16 and BF16 matrices ride the card's tensor cores where "
        "it has a rate for their type (`tensor.f16`, `tensor.bf16`: their seconds join the array term), and F32 "
        "matrices, or a type the card has no rate for, run on the vector units at its f32 rate. `--json`'s "
        "`vector_macs` is the pass's multiply-adds there, `vector_s` their seconds.",
        ("vector units", "f32", "float", "float matrices", "F16", "BF16", "vector_s", "vector_macs"),
        tag="f32 multiply-adds",
    ),
    Term(
        "scale",
        "seconds of block-scale work: each weight block's integer sum rescaled",
        "The block-scale lanes: every quantized weight block's integer sums leave the array to be multiplied by the "
        "block's scales (and minimums). The card fact `scale` is the cycles a second of all lanes together, in "
        "Tcycle/s (10^12 cycles a second); a K-quant block costs more lane cycles than a Q8_0 block. `--json`'s "
        "`scale_cycles` is the pass's lane cycles, `scale_s` their seconds.",
        ("scale lanes", "block scale", "Tcycle/s", "Tcycle", "cycle", "scale_s", "scale_cycles"),
        tag="block-scale lane cycles",
    ),
    Term(
        "pass",
        "one decode step of every sequence in the batch",
        "One decode pass: every sequence of the batch advances by one verified token (plus its drafted ones), every "
        "weight crossing the card once for all of them. passprice prices one pass; tokens/s is the batch's tokens "
        "emitted a pass over the pass's seconds.",
        ("decode pass", "pass_s"),
    ),
    Term(
        "token-row",
        "one token's activations through a layer; a sequence carries 1 + drafts a pass",
        "A token-row is one token's activation vector crossing a layer. Each sequence carries its verified token "
        "and each drafted token as rows, so a pass multiplies every weight by batch × (1 + drafts) rows. Token-rows "
        "live in on-chip memory while they cross a layer. `--json`'s `rows_per_sequence` is the rows each sequence "
        "carries a pass (1 + drafts).",
        ("token-rows", "rows", "rows_per_sequence"),
    ),
    Term(
        "GGUF",
        "llama.cpp's checkpoint file format; passprice reads its header, never its weights",
        "GGUF is the file format llama.cpp stores a checkpoint in: a header (the model's metadata: architecture, "
        "layers, heads, context length, experts; and the tensor table: each tensor's name, shape and type) and then "
        "the weights. passprice reads the header only (`passprice header FILE`, `import`, `synth` writes one from a "
        "published configuration): a tensor's type and shape give its bytes. A type such as Q4_K or MXFP4 is a "
        "block-quantized one (a block of weights shares its scales); a mix such as Q4_K_M, named after llama.cpp's "
        "`llama-quantize`, gives each tensor its type (mostly Q4_K, some Q6_K, norms F32), so a checkpoint named "
        "`…-q4_k_m` holds that mix."
        " `architecture` is the header's `general.architecture` (`qwen2`, `llama`, …)."
        " `audit --json`'s `checkpoint` gives `header_sha256` (sha256 of the header's bytes) and `header_file`"
        " (the header file read, `null` for a registry entry's)."
        " `passprice header`'s `header` line gives the header's length in bytes (`header_bytes` in `--json`; a split"
        " checkpoint's is its files' sum, each file holding a header of its own, the first's named) and where the"
        " tensor data starts (`data_offset`: the header padded to the `alignment`, `general.alignment` or 32 bytes);"
        " `shards` counts the files (split shards, `NAME-00001-of-0000N.gguf`), `byte_order` and `version` are the"
        " file's, and `tensor_count` and `tensor_bytes` (the `tensors` line) count the tensors and their bytes;"
        " its `shape` table lists the metadata keys that shape the pass (blocks, widths, heads, window) with their"
        " values, and its `type` table the tensors of each GGML type (`tensors`, `bytes`). `checkpoints`' `tensors`"
        " column counts an entry's tensors."
        " `header --json` gives the file's `version` (the GGUF format version it declares), its `metadata` by key as "
        "the file names it (`general.architecture`, `gemma3.block_count` …: the file's names, not passprice's words) "
        "and each tensor's `dims`, its shape as the file stores it, the row's width first (`token_embd.weight`: "
        "`[640, 262144]`)."
        " A long array's value (the tokenizer's 262,144 `tokenizer.ggml.tokens`) is given as its element type and "
        "count, `{long_array, length}`, not its elements.",
        ("gguf header", "header", "q4_k_m", "q4_k", "q6_k", "quantization", "mix", "--mix", "architecture",
         "header_file", "header_sha256", "header_bytes", "data_offset", "tensor data", "alignment", "shards",
         "byte_order", "tensor_count", "tensor_bytes", "tensors", "type", "shape",
         "version", "metadata", "dims",
         "long_array", "length"),
    ),
    Term(
        "TPOT",
        "time per output token of one sequence: pass time over tokens emitted a pass",
        "Time per output token: how long one sequence waits for each of its tokens, the pass's seconds over the "
        "tokens a sequence emits a pass (1 without drafts). Throughput (tokens/s) is the whole batch's. A serving's "
        "TPOT cap (`max_tpot` in its file, `--max-tpot SECONDS`) bounds the best-batch search: `best` (and a best "
        "lock) then seeks the most tokens/s only among batches whose TPOT is at most the cap (refused `OverTPOT` "
        "when none is); it is part of the serving a lock pins. `compare` finds that capped best batch on each "
        "card; `sweep --max-tpot` adds each row's `tpot_s` and `within_max_tpot` and marks the best within it. "
        "`simulate` does not enforce a serving's cap (admission takes sequences up to `--max-batch` while memory "
        "holds them): its `TPOT cap` line says so and counts, for each policy, the requests whose TPOT is above it "
        "(`--json`: `setup`'s `max_tpot_s` and `max_tpot_enforced`, false; each policy's `requests_over_max_tpot`)."
        " `tpot_s` (in `price`, `best`, `compare` and `sweep --max-tpot` JSON) is TPOT in seconds: `pass_s` / "
        "`emitted_per_sequence`, a pass's seconds over the tokens it emits per sequence (a drafting serving emits "
        "more than 1 token a pass, so its TPOT is shorter than its pass).",
        ("time per output token", "max_tpot", "max-tpot", "TPOT cap", "tpot_s",
         "within_max_tpot", "requests_over_max_tpot", "max_tpot_enforced"),
    ),
    Term(
        "memory use",
        "memory headroom: the fraction of card memory the best and largest batch may fill",
        "A serving's memory headroom (`memory_use` in its file, `--memory-use FRACTION`, above 0 and at most 1): "
        "`best`, `max-batch`, `compare`, a best lock and `roofline`'s best and largest batch seek only batches "
        "holding at most that fraction of the card memory the serving may fill (under a stack, the card's less its "
        "`memory.reserved`). Without it they fill the card to its last byte (`r1-qwen7b-h200`: 580 sequences, "
        "99.9 % of an H200), where passprice counts no runtime workspace, activations or fragmentation; with 0.9, "
        "520 (89.9 %). The spec line says `memory use 90 % of card memory at most for the best and largest batch`; "
        "`best --json` and `max-batch --json` hold `memory_use`. `sweep` refuses each row holding more than that "
        "fraction (`NotResident`, its `capacity_bytes` the fraction's: 126,900,000,000 at 0.9). It is part of the "
        "serving a lock pins; a price at a batch given does not read it.",
        ("memory_use", "--memory-use", "memory headroom"),
    ),
    Term(
        "TTFT",
        "time to first token: a request's arrival to its first output token (simulate)",
        "Time to first token: how long a served request waits from its arrival until its first output token, in "
        "`passprice simulate`: the time it queued (for a place in the batch, or for memory: *waited for memory*) and "
        "the steps that prefilled its prompt, the last of which emits its first token. Reported as p50 / p90 / p99 "
        "over the trace's requests, beside TPOT (each later token's wait) and end-to-end (arrival to last token)."
        " `simulate --json` gives `ttft_s`, `tpot_s` and `e2e_s` (seconds) as percentiles `p50`, `p90`, `p99`"
        " over the requests, and each of `records` its own: `arrival_s` (from the trace's start), `admitted_s`,"
        " `first_token_s` and `finished_s` (seconds from the trace's start), `queue_s` (arrival to admission),"
        " `ttft_s` (arrival to first token), `tpot_s` and `e2e_s` (arrival to last token).",
        ("time to first token", "end-to-end", "e2e", "ttft_s", "e2e_s", "first_token_s", "queue_s",
         "admitted_s", "arrival_s", "finished_s", "p50", "p90", "p99"),
    ),
    Term(
        "makespan",
        "simulate: from the trace's first arrival to its last request's last token",
        "In `passprice simulate`, the time from the trace's first arrival until the last request's last token: the "
        "whole trace served. Throughput is the output tokens over it."
        " `makespan_s` in `simulate --json` (seconds); `throughput_tokens_per_s` the output tokens over it.",
        ("makespan_s", "throughput_tokens_per_s"),
    ),
    Term(
        "static batching",
        "admit a batch, then nobody until its last request ends (simulate --policy static)",
        "A scheduling policy of `passprice simulate`: admit the waiting requests that memory and `--max-batch` hold, "
        "then admit nobody until the batch's last request has ended. Short answers wait for the longest one in "
        "their batch. Compare continuous batching.",
        ("static", "static policy"),
    ),
    Term(
        "continuous batching",
        "retire and admit every step, first come first served (simulate --policy continuous)",
        "A scheduling policy of `passprice simulate` (as vLLM, TGI and TensorRT-LLM schedule): every step retires "
        "the sequences that finished and admits waiting requests, first come first served, while memory (each "
        "request's full length reserved at admission) and `--max-batch` allow; prompts are prefilled in chunks of "
        "at most `--chunk` token-rows beside the decoding sequences. Compare static batching."
        " `simulate --json`'s `policies` holds a run per `policy`, `static` and `continuous`.",
        ("continuous", "continuous policy", "in-flight batching", "policies", "policy"),
    ),
    Term(
        "waited for memory",
        "simulate: requests that stood at the queue's head with memory full",
        "In `passprice simulate`, how many requests stood at the head of the queue while the memory left could not "
        "hold their full length (admission reserves prompt + output): they waited for sequences to finish. Nothing "
        "is preempted, so a request never waits for memory once admitted.",
    ),
    Term(
        "prefix hits",
        "simulate: requests that found their shared prefix already held, prefilling only the rest",
        "In `passprice simulate`, the requests that found their shared prefix (`prefix_id` in the trace, `--prefix "
        "N`) already held in a paged KV cache, so they prefilled only the tokens after it; `prompt rows computed` "
        "counts the prompt rows actually prefilled. A contiguous cache holds no prefix once (`BadPrefix`).",
        ("prefix hit", "prompt rows computed"),
    ),
    Term(
        "drift",
        "a fact a lock pins that today's file holds otherwise (check --frozen fails it)",
        "A lock pins each fact its price rests on (and every other fact of the card); a pinned fact that today's file "
        "holds otherwise (value, unit, provenance or citation) has *drifted*. `check` reports drift and still passes "
        "while every floor holds and the recorded price reproduces from the lock's own pins, its last line naming "
        "the locks whose price the work tree moves with their `lock --update` commands (`all holds; 4 locked prices "
        "moved (…): … re-locks each: …`; `--json`'s `prices_moved`); `check --frozen` fails "
        "it (as `cargo --locked`), and `lock --update` re-pins it. A review (`passprice diff`) fails a change that "
        "moves a locked price without re-locking it. A drifted fact whose source changed too says `source A → B` "
        "(`reproduce --json`'s `source_changed`: the pinned and today's source ids, or null). "
        "`rewritten` (`check --json`, a review's lock) lists pinned facts written otherwise as the same quantity "
        "(`4.8 TB/s` → `4800 GB/s`): no drift, and `lock --update` re-pins them as written.",
        ("drifted", "pinned", "source_changed",
         "rewritten", "prices_moved"),
    ),
    Term(
        "speedup",
        "speculate: tokens/s with drafts over tokens/s without",
        "In `passprice speculate`, a draft length's tokens/s over the same serving's without drafts (draft 0, 1.000×): "
        "each pass carries 1 + drafts token-rows a sequence and emits `emitted/pass` tokens a sequence on average, "
        "so drafting speeds decode up only while the longer pass costs less than the extra tokens it emits. `× limit` "
        "beside it, under a serving stack, is the expected tokens/s over the card's limit (passprice explain stack).",
        ("speed-up",),
    ),
    Term(
        "emitted/pass",
        "tokens a sequence emits a pass: 1 + a1 + a1·a2 + … with drafts",
        "The tokens one sequence emits in a pass, on average: 1 without drafts; with d drafts whose acceptance rates "
        "are a1 … ad (each the chance the i-th draft is accepted, given the ones before it were), 1 + a1 + a1·a2 + … + "
        "a1·…·ad (the seed's `emitted_per_sequence`). `speculate` checks it against the accept/reject loop played "
        "100,000 passes a row (`simulated ± s.e.`)."
        " In `--json`, `simulated` gives `passes` (decode passes simulated), their `mean` emitted per sequence,"
        " its standard error `stderr`, and the `expected` figure it checks.",
        ("emitted per pass", "emitted_per_pass", "emitted_per_sequence", "simulated", "simulated (± s.e.)",
         "s.e.", "passes", "stderr"),
    ),
    Term(
        "limit/meas",
        "validate: the card's limit over the measured tokens/s of a run",
        "In `passprice validate`, each measured run's limit price (the card's facts alone, no stack) over the "
        "tokens/s the run measured: how far the runtime stayed below what the card allows (2.8 = the measured run "
        "delivered about 36 % of the limit). `expected` is the price under the serving stack, and `error` its "
        "relative error against the measurement: (expected − measured) / measured, positive where the stack expects "
        "more tokens/s than the run measured (164.8 against 145.55 tokens/s is +13.2 %); `calibrate`'s mean and max "
        "`|error|` are of the same figure, over the runs it fitted (`in sample`) or held out. "
        "`validate --json` gives each run's `limit_ratio`, `above_limit` (runs measured above their limit), "
        "`mean_error` and `max_error` (of |error|), the two apart as `in_fit` (the runs their stack was fitted on: "
        "in-sample) and `not_in_fit` (runs its fit never saw: out-of-sample), each with its `runs` count, and each "
        "run's own `in_fit`; and `unregistered` (`stacks` not registered, the `registered` "
        "ones, and each such run's `price_command`).",
        ("limit over measured", "error",
         "limit_ratio", "above_limit", "mean_error", "max_error", "in_fit", "not_in_fit", "unregistered",
         "registered", "price_command"),
    ),
    Term(
        "fixed",
        "a serving stack's fixed seconds a pass (and a layer), whatever the pass carries",
        "A serving stack's fixed cost: the seconds each pass pays whatever it carries (kernel launches, "
        "synchronisation, sampling), as the stack's `overhead.pass` and `overhead.layer` facts; `price --stack` shows "
        "it as `fixed` beside the terms at the stack's shares, and `holds on` the token-rows and cached positions "
        "its runs were measured at (range.*), outside which it is refused (BeyondStack); `--json`'s `fixed_s`.",
        ("fixed cost", "holds on", "overhead", "overhead.pass", "overhead.layer", "fixed_s"),
    ),
    Term(
        "seed",
        "serving.rs, the Rust pricing module passprice ports, item for item",
        "The project's seed is `serving.rs`, the Rust pricing module passprice's pricer ports (a byte-equal copy "
        "is in the passprice repository at `docs/seed/serving.rs.txt`, not in an installed package; "
        "`docs/seed/README.md` gives its sha256): its items keep their names (`PassShape`, `cost_split`, "
        "`best_serving`, the `ServingRefusal` variants), and the card's limit it defines stays bit-exact for every "
        "lock.",
        ("serving.rs", "the seed"),
    ),
    Term(
        "share.*",
        "a serving stack's share of a card rate its kernels reach (share.read, share.array …)",
        "A serving stack's `share.read`, `share.append`, `share.array`, `share.float`, `share.vector` and "
        "`share.scale`: the share of the card's stream share or rate (streams.read, streams.append, array, "
        "tensor.*, vector, scale) its kernels reach, each term of the stack's expected pass being the card's term over "
        "its share. "
        "`passprice calibrate` fits them to measured runs (non-negative least squares; a share at its bound of 1 "
        "is one the runs never bound on). A lock under a stack pins them as `stack.share.*`.",
        ("share", "shares", "share.read", "share.append", "share.array", "share.float", "share.vector",
         "share.scale"),
    ),
    Term(
        "terms.serial",
        "a serving stack's share of the non-binding terms that do not overlap the binding one",
        "A serving stack's `terms.serial`: 0 when its terms overlap (the pass takes the largest, as the card's "
        "limit), 1 when they add; between, the pass is the fixed cost plus the binding term plus that share of the "
        "others. `calibrate` fits it on a grid with the shares (`passprice audit --stack S` shows the fit).",
        ("serial", "overlap"),
    ),
    Term(
        "held out",
        "calibrate: the error on runs the fit did not see (leave one card out, leave one checkpoint out)",
        "`passprice calibrate` fits a stack's facts to its measured runs and reports its error `in sample` (on the "
        "runs it was fitted to) and `held out`: fitted again without one card's runs (`leave one card out`), or one "
        "checkpoint's, and judged on the runs left out, so the figure says how it does on a card or model it never "
        "saw. With runs on only one card or one checkpoint a held-out check is `not possible`, and the in-sample "
        "error says little: a fit of 8 facts to a few runs can reproduce them exactly.",
        ("in sample", "leave one card out", "leave one checkpoint out", "hold-out", "holdout"),
    ),
    Term(
        "chunk",
        "simulate: the prompt rows prefilled in one step (--chunk, 2,048 by default)",
        "In `passprice simulate`, a step carries every decoding sequence's row and then prompt rows in admission "
        "order, up to `--chunk` token-rows a step (2,048) and what on-chip memory holds: a long prompt is prefilled "
        "in chunks over several steps, beside the decoding sequences."
        " `simulate --json`'s `setup` gives the engine as run: `chunk_rows` (prompt rows a step computes at"
        " most), `rows_on_chip` (token-rows on-chip memory holds a step), `max_batch`, the cache layout and"
        " `admission` (`full length reserved`: a request is admitted when its whole length fits); `prompt_rows`"
        " the prompt rows computed (fewer on a prefix hit).",
        ("chunks", "prefill", "steps of at most", "steps", "steps (by bind)", "chunk_rows", "rows_on_chip",
         "prompt_rows", "setup", "admission"),
    ),
    Term(
        "peak held",
        "simulate: the most card memory sequences held (and reserved) at any step",
        "In `passprice simulate`, the largest card memory the weights and the admitted sequences held at any step "
        "(`peak held`), beside what admission had reserved for them (`reserved`: each request's full length, prompt "
        "+ output, whole pages), of the card's capacity. `sequences a step` is the mean batch of the steps, `peak "
        "sequences` the largest."
        " In `simulate --json`: `peak_held_bytes` (written) and `peak_reserved_bytes` (admitted) with the"
        " weights, `weights_bytes` those held once, `capacity_bytes` the card's, `peak_sequences` and"
        " `mean_sequences` (the mean a step carried).",
        ("reserved", "peak held / reserved", "sequences a step", "peak sequences", "peak_held_bytes",
         "peak_reserved_bytes", "weights_bytes", "mean_sequences"),
    ),
    Term(
        "review",
        "passprice diff: what a change does to every locked price, BASE → HEAD; CI fails on its exit status",
        "`passprice diff [BASE [HEAD]]` is the review of a change (the workflow `init` writes runs it on every pull "
        "request and posts it as a comment): it compares two git revisions or two folders — by default BASE is the "
        "merge base with `main` (else the first of `origin/main`, `master`, `origin/master` there is; its first "
        "line names which) and HEAD the work tree — lists each fact, checkpoint, serving and source the change "
        "touches, and re-prices every lock on both sides (`locks affected`; `priced with BASE` and `priced with "
        "HEAD` name the code each side was priced with). It exits 1 when the change breaks a lock's floors, moves "
        "a locked price without re-locking it (`price moved`), leaves a derived fact stale or HEAD failing "
        "`passprice check`, or changes a fact whose quotes its stored excerpt lacks (`NOT FOUND`); "
        "2 when a file does not read on HEAD; 0 otherwise, with ⚠️ beside what is `weakened`, "
        "`loosened` or `to verify`. "
        "Its `--format json` (the README tables each key): `base` and `head`, each side's `label`, `revision` and "
        "`folder`; the `summary` line and `exit_status`; `pricing_model`'s `priced_with` (the code each side was "
        "priced with) and a lock's `pricing_model_pins` (the code its file pinned, before and after); `code_changed` "
        "and `install_changed` (the files of `src/passprice`, and of the install and workflows, HEAD changes); "
        "`export_rules` (a line a file of the facts, locks or sources, stored excerpts too, on which a HEAD revision's "
        "`.gitattributes` sets `export-ignore` or `export-subst` where BASE's did not: `git archive` of HEAD leaves it "
        "out or rewrites it; named, never failed); "
        "`head_check`, `head_unreadable` and `head_warnings` (what `check` fails on, cannot read and warns of on "
        "HEAD, `head_check` with the error lines of each lock file the change leaves unreadable, as the text counts "
        "them; the first 20, each `…_left_out` counting the rest, as `unlocked_left_out` counts servings past the "
        "first 200; `head_check_review_rules` the lines of `head_check` that are the review's own rules, not "
        "`check`'s: the list of pricing models, the commands that write the shipped headers, a lock's pin no side "
        "of the change holds) and a lock's "
        "`head_unread` (its file does not read on HEAD, so it is judged on BASE's); a changed fact's `quote_check` "
        "(audit's quote check of HEAD's fact against HEAD's stored excerpts, made when its quotes changed or it "
        "cites a stored excerpt the change edited, or its figure moved under quotes stating another, "
        "`quote_excerpts_edited` naming those; `null` otherwise; "
        "`quote_no_longer_checked`, why quotes once looked up in a stored excerpt no longer can be; "
        "`copied_citation`, for an added card fact whose own citation is another card's fact's, that fact, "
        "`h100_sxm5_80gb's memory.capacity`, a copied citation to verify, `null` otherwise) and "
        "`quotes_unchecked` (the facts, and measured runs, whose quotes were not looked up, the review's look-ups "
        "past their bound); "
        "`added_records`, `added_servings` and `cited_sources` (the records and servings HEAD adds, by path, and the "
        "documents changed facts cite, by id); `runs_to_verify` (edited measurement files whose runs to check in "
        "their source), `stack_spans` (a changed stack's measured / limit span, BASE → HEAD), `scopes_widened` (a "
        "routing record or drafting method whose `checkpoints` HEAD widens), `entries_edited` (checkpoint entries "
        "whose content changed), `lookalike_records` (a new record whose name reads as another's), `held_by_header` "
        "(locks held by a look-alike header alone) and `duplicate_locks` (a lock duplicating another under another "
        "name, of a pair the change touches: `check` warns of it on HEAD too, counted with `head_warnings` in the "
        "text's summary, not listed in them); `on_changed_claims`, `on_changed_sources` and `on_recited_runs` (locks "
        "affected by nothing else than "
        "a checkpoint entry's changed claims, a changed document, a stack fitted from runs to verify); "
        "`header_pinned_by`, `origin_pinned_by` and `source_pinned_by` (the locks pinning a checkpoint entry's old "
        "header sha256, `origin` or `source`) and `digests_dropped` (entries whose header digest was dropped or "
        "rewritten).",
        ("diff", "passprice diff", "BASE", "HEAD", "work tree", "merge base", "locks affected", "priced with BASE",
         "priced with HEAD", "sticky comment", "pull-request comment",
         "summary", "exit_status", "label", "revision", "folder", "code_changed", "install_changed", "export_rules",
         "priced_with", "pricing_model_pins", "head_check", "head_check_left_out", "head_check_review_rules",
         "head_unreadable",
         "head_unreadable_left_out", "head_warnings", "head_warnings_left_out", "head_unread",
         "unlocked_left_out", "added_records", "added_servings", "cited_sources", "runs_to_verify",
         "stack_spans", "scopes_widened", "entries_edited", "lookalike_records", "held_by_header",
         "duplicate_locks", "on_changed_claims", "on_changed_sources", "on_recited_runs", "header_pinned_by",
         "origin_pinned_by", "source_pinned_by", "digests_dropped", "copied_citation", "copied citation"),
    ),
    Term(
        "out of date already on BASE",
        "review: a lock the change does not touch that was out of date before it",
        "In a review (`passprice diff`), a lock the change does not touch whose file already records a price BASE's "
        "inputs no longer give (re-lock it: the review fails, HEAD's lock not recording HEAD's price), or whose BASE "
        "copy pins facts as BASE's registry no longer holds them (re-pin it: `check --frozen` fails until then) is "
        "*out of date already on BASE*: counted and listed as such, neither affected by the change nor unaffected. "
        "In `--json`, `behind` names them, and each lock's `base_drift` lists what BASE's lock pins otherwise than "
        "BASE holds it (its own `behind` says whether it is one of them).",
        ("behind", "base_drift", "out of date on BASE"),
    ),
    Term(
        "unaffected",
        "review: a lock the change does not touch, re-priced the same on both sides",
        "In a review (`passprice diff`), the locks no changed file touches are `unaffected`, named on one line. A "
        "registered serving no lock pins whose price the change moves is listed as `not locked, informational`: "
        "nothing pins it, so it never fails the review. `alone` is what one changed fact alone does to a lock's "
        "price (its pinned inputs with only that fact as HEAD has it; of a lock the change re-locked, BASE's lock's "
        "pinned inputs, the ones the re-lock replaced), given when two or more changed facts moved the price; a "
        "fact re-fitted to its own value that alone moves nothing is left out. A changed fact derived from another "
        "changed one (its derivation names it: stream shares recomputed from a bandwidth) is no independent change: "
        "`alone` prices the input with the facts derived from it at once, one entry (`memory.bandwidth with the 2 "
        "facts derived from it (streams.read, streams.append)`; `alone_grouped` in `--json`, whose `alone` keeps "
        "each fact's own move). A serving re-pointed to another routing record, or two or more facts of its record "
        "changed in place, gives the record's facts one entry, priced at once (`routing record uniform → "
        "gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, hot_share 1 → 0.6): tokens/s +14.72 %`; `alone_routing` "
        "in `--json`: `base`, `head`, `facts` with each `path`, `before` and `after`, and `move`): a hot set and its "
        "share are one routing, and a share alone on another record's hot set may be refused (`BadRouting`). "
        "A lock's `changed` names a `routing.*` fact with its routing record, and `cites` gives "
        "the citation HEAD's price rests on for each changed fact whose citation the change rewrote (source and "
        "locator, cut at a word; whole under the fact's file), and for each derived fact the change recomputed (or "
        "whose value it moved under the derivation it kept) its formula with its inputs' values and citations, "
        "short (`streams.read = dot / bandwidth [dot 4.48 TB/s: "
        "SOURCE, LOCATOR…; bandwidth 4.89 TB/s: fact memory.bandwidth]`), a value edited by hand under it said so "
        "(`(its inputs give 0.9333: the value written does not follow from them)`, `inputs_give` in `--json`), "
        "and for each changed fact whose value "
        "moved under the citation it kept `value changed, citation unchanged: SOURCE, LOCATOR`, the figure to check "
        "against that source (`value_changed` in `--json`; a locator is cut at a word, never through the quote or "
        "figure it holds of the fact's old or new value, nor of a derivation input's); facts fitted to measured "
        "runs (a stack's) re-fitted "
        "under the citation they kept are named together, `re-fitted under the citation they kept (SOURCE, "
        "LOCATOR), which states no figure of a fit: check the fit, its runs and errors, under the stack's file` "
        "(`fitted` in `--json`). A lock made under a stack a corrected run re-fitted names that run on its `runs` "
        "line, `its stack re-fitted from 1 run changed (the figures to check in their sources): ID 145.55 → 154.55 "
        "tokens/s (+6.183 %): SOURCE, LOCATOR`, the quote in the locator holding the figure kept whole, a locator "
        "still quoting the old figure told so (`its locator still quotes 145.55, not 154.55`) "
        "(`runs_moved` in `--json`: `run`, `before`, `after`, `source`, "
        "`locator`). A lock whose HEAD inputs or lock "
        "file `does not read` is `not judged`: no verdict and no HEAD price; a lock file edited by hand does not "
        "read (its digest no longer matches) and `edited` names each key the hand edit changed, BASE → HEAD; its "
        "`recorded` column shows the tokens/s HEAD's file holds after BASE's, `(edited by hand)`. A lock `held by "
        "a look-alike header alone` is one whose serving now prices another checkpoint entry whose header reads "
        "the same (a fine-tune of the same shapes, or the same header under another name): to verify. A re-locked "
        "lock's `cites` names what its new price rests on for each changed fact; in `--json` each entry says "
        "`recited` (the change rewrote its citation), `value_changed` (its value moved, perhaps under an unchanged "
        "citation) and `derivation` (formula and inputs, when the change re-derived it). `alone_grouped` prices a "
        "changed input together with the facts derived from it; `rerouted` names the routing records (base, head) "
        "a serving moved between.",
        ("does not read", "informational", "not locked, informational", "alone", "edited",
         "look-alike header", "held by a look-alike header alone", "cites", "derived from it", "recited",
         "value_changed", "alone_grouped", "alone_routing", "rerouted", "runs_moved", "inputs_give", "its inputs give"),
        heads=(("alone", "review: what one changed fact alone does to a lock's price (the pins with only that fact "
                "as HEAD has it)"),),
    ),
    Term(
        "weakened",
        "review: a fact stepped down the provenance ladder (published > … > assumed)",
        "In a review (`passprice diff`), a fact whose new provenance is weaker than its old (measured → estimated): "
        "the locks resting on it are judged against their floors, and a floor it no longer meets fails the "
        "review. `loosened` marks a lock whose floors the change lowered, `to verify` a changed figure or "
        "citation the reviewer must check in its source (passprice reads no sources). A floor is loosened only by "
        "`passprice lock` (`--update --force --require PATH=PROVENANCE`), which lists the lock's digest among its "
        "pricing model's records in `pricing_models.json`: a lock in passprice's own `locks/` whose digest is in no "
        "record is `not written by passprice lock` (edited by hand, its digest recomputed) and fails the review. "
        "A fact whose provenance the change raises is `strengthened` in `--json`; `unrecorded` lists the locks `not "
        "written by passprice lock`; a removed lock's `dropped` are the floors its removal drops (`dropping` lists "
        "such locks), and `floors_kept` names, for each floor it set, the lock of the serving that still holds it.",
        ("weakened facts", "weaker", "loosened", "to verify", "floors loosened", "BROKEN",
         "not written by passprice lock",
         "strengthened", "unrecorded", "dropped", "dropping", "floors_kept"),
    ),
    Term(
        "stale description",
        "a record's description still naming a table row none of its facts cites any more: to verify",
        "A source's `read` or a routing record's title says which table row its figures come from. When a change "
        "re-cites the record's facts to other rows and leaves that text as it was, `diff` and `audit` flag it "
        "(`passprice.rowcite`): the words name a row (`rows_named`) that the facts no longer cite (`rows_cited`), "
        "so a reviewer should rewrite the description or check the figures. `audit --json`'s "
        "`stale_descriptions` lists each finding (`record`, `id`, `field`, `rows_named`, `rows_cited`, `note`), "
        "the same findings the text audit prints under `To verify`.",
        ("stale descriptions", "stale_descriptions", "rows_named", "rows_cited", "description names a row"),
    ),
    Term(
        "contradicted",
        "review: a changed fact the citation it kept states otherwise (the review fails)",
        "In a review (`passprice diff`), a changed fact whose source, locator and cite did not change while the "
        "change contradicts them: its value moved while the locator states the old figure and not the new one "
        "(`90%` under `hot_share` 0.9 → 0.95), or its provenance was raised to `measured` or `published` while the "
        "locator, note or source id calls the figure an assumption, an estimate, a guess or a placeholder. The "
        "fact's line reads `❌ contradicted: …`, the summary counts them (`1 fact contradicted by the citation it "
        "kept`), and the review fails: cite the place that states the new figure or provenance, or keep what the "
        "citation states. A fact re-cited, or raised under words that call it nothing, is asked instead (`to "
        "verify`). In `--json`, each fact change's `contradicted` says why (null otherwise), and the review's "
        "`contradicted` lists them as `RECORD:FACT`.",
        ("contradicted by the citation it kept", "facts contradicted by the citations they kept"),
    ),
    Term(
        "price moved",
        "review: a locked price the change moves without re-locking it (the review fails)",
        "In a review (`passprice diff`), a lock whose `recorded` price (the one its file holds) is not HEAD's price: "
        "the change moved it without re-locking (`lock --update`), and the review fails as `cargo --locked` fails "
        "on an out-of-date lock. `re-locked` is a lock the change re-wrote, its new price shown beside the old; "
        "`to re-pin` a lock whose pinned facts drifted (`check --frozen` fails it until `lock --update`); `asks "
        "another question` a lock file rewritten to another kind, serving, stack or name. The lock's line reads "
        "`price moved, lock not updated (FIGURE)`, FIGURE the recorded figure that no longer matches "
        "(`memory_s`; a count with what it holds, `weight_bytes, the weights' bytes a pass reads` …), and the "
        "summary line counts such locks (`1 price moved unreviewed`). "
        "In `--json`, a lock's `recorded_before` is BASE's recorded figures, `after` HEAD's price, `recorded_edited` "
        "true when HEAD's figure was edited by hand (`hand_edits`: each key the edit changed); `question` what a "
        "rewritten lock asks otherwise; `retired` why a removed lock drops no floor; `recomputed_relative_change` and"
        " `recomputed_expected_relative_change` the move with HEAD's stale derived facts recomputed; `refitted` what "
        "a stack's re-fit moves; `alone` each changed fact's `move` priced alone, from the pins of `alone_from` "
        "(`base` or `head`); `alone_absent` says why `alone` is empty where the change moved the price through "
        "two or more facts but HEAD's code is priced in its own process (a module outside the pricing digest "
        "differs: that process prices each lock whole), as the text review's `alone` line does. "
        "`unreproduced` and `forged_pins` list lock files HEAD adds or changes that do not "
        "reproduce from their own pins, or that pin what no side holds; each fails the review."
        " A lock's price moved (`lock.moved` in `--json`) gives `recorded_tokens_per_s` and `recorded_batch` (what the"
        " lock records; `audit LOCK --json`'s `recorded_tokens_per_s` too) beside today's, and `differences`: each "
        "pinned fact or serving field that differs, `{field, locked, now}`, `locked` the value the lock pinned (in a "
        "review's `unlocked` list `locked` is false: no lock pins the serving).",
        ("recorded", "re-locked", "relocked", "to re-pin", "re-pin", "asks another question", "requestioned",
         "moved", "unreviewed", "moved unreviewed", "price moved unreviewed", "lock not updated",
         "recorded_before", "recorded_edited", "hand_edits", "question", "retired", "after",
         "recomputed_relative_change", "recomputed_expected_relative_change", "refitted", "alone_from",
         "alone_absent", "move",
         "unreproduced", "forged_pins",
         "recorded_tokens_per_s", "recorded_batch", "differences", "locked"),
    ),
    Term(
        "content",
        "a checkpoint's content digest: what the pricer reads of it (metadata and tensor table)",
        "A checkpoint entry's `content` is the sha256 of what the pricer reads from the header (its metadata and "
        "tensor table, as JSON), not the header file's sha256: a lock pins it, so an entry renamed or re-imported "
        "from another copy still reproduces, and one edited by hand (a tensor type changed) does not "
        "(`CheckpointChanged`).",
        ("content digest", "checkpoint content"),
    ),
    Term(
        "reproduces exactly",
        "reproduce/check: the lock's own pins price to its recorded figures, bit for bit",
        "A lock reproduces exactly when its pinned facts, checkpoint content and serving, priced with today's code, "
        "give every recorded field bit for bit. The `pricing model` is the digest of the pricing code (the syntax "
        "trees of the modules a price flows through); when it changed since the lock, `reproduce` says whether every "
        "recorded field still reproduces or which moved first (`first moved`: the first figure of the price, in "
        "order, that differs); `first term that moved with today's inputs` names the first figure today's facts "
        "price otherwise than the pins, with the change of tokens/s. "
        "`reproduce --json`: `equals` (every recorded field reproduced bit for bit), `reproduction` (the verdict "
        "line, as `check --json` gives it a lock), `pricing_model`'s `recorded` and `now` digests, `checkpoint` "
        "(`ref`, the entry the lock names; where its pinned content was `found`, or the entry it `moved_to`; "
        "`packaged`, the `cp` command that copies passprice's own entry holding it into a registry that has none, "
        "else `null`; "
        "`checkpoint_changed` in `check`), `facts_drifted` (pinned facts today's files hold otherwise), "
        "`facts_rewritten` (the same quantity written otherwise: no drift), `facts_alone` (each drifted fact's price "
        "alone), `facts_grouped` (each drifted input with the drifted facts derived from it, priced at once: "
        "`inputs`, `derived`, `price`, `first_moved`; the text's line for them stands in place of their own, as "
        "`diff`'s `alone` line groups them), `facts_routing` (a routing record's drifted facts priced at once, as "
        "the text's `routing record "
        "uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, hot_share 1 → 0.6): tokens/s +14.72 %`, "
        "given for a serving re-pointed to another record or two or more of its record's facts drifted in place: "
        "`base`, `head`, `facts` with each `path`, `before` and `after`, and `move`; `null` otherwise), "
        "`unpinned` (facts today's card has that the lock did not pin), `stale_stack` (stale stack facts "
        "today's price rests on; `stale_stack_pinned_apart` those the pinned column rests on too), "
        "`serving_differences` (`{field, locked, now}` a change in the serving, `serving_changed` the same as lines) "
        "and `check`'s `serving_name`. `pricing_model.commit` is the commit whose code wrote the lock (`hash`, its "
        "first 12 hex digits, and `date`: the oldest commit whose `locks/` record the lock's pricing model; `null` "
        "when none is found), `pricing_model.commit.requirement` the `requirements.txt` line of a registry of your "
        "own at that commit, `pricing_model.commit_search_cut` what that search's caps left unread (`null` when it "
        "read all it needed).",
        ("reproduces", "reproduce", "pricing model", "first moved", "first term that moved", "pricing model digest",
         "pricing_model.commit", "pricing_model.commit.hash", "pricing_model.commit.date",
         "pricing_model.commit.requirement", "pricing_model.commit_search_cut", "commit_search_cut",
         "reproduced",
         "reproduced (pinned inputs)", "pinned inputs", "today's inputs", "field", "since the lock",
         "equals", "reproduction", "facts_drifted", "facts_rewritten", "facts_alone", "facts_grouped",
         "facts_routing", "unpinned",
         "stale_stack",
         "stale_stack_pinned_apart", "now", "ref", "found", "moved_to", "packaged", "checkpoint_changed",
         "serving_name", "serving_changed", "serving_differences"),
    ),
    Term(
        "activation word",
        "how many words an activation crosses the array in (1: 8-bit codes, 2: 16-bit)",
        "`--activation-words N`: each activation enters the integer array as N 8-bit words; 2 words (16-bit "
        "activations) cost the array and the scale lanes twice the passes of 1. 0 means the activations are not "
        "quantized, which the array cannot read (refused).",
        ("activation words", "activation-words"),
    ),
    Term(
        "flush",
        "how a recurrent state is carried from token to token: every-pass, every:N, trailing:N",
        "`--flush`: how a Gated-DeltaNet (recurrent) layer's dense state is carried. `every-pass` reads it and "
        "writes it back every pass; `every:N` writes it back once every N accepted tokens, a log of each token's "
        "key, value, decay and gate carrying it between flushes (read with the state every pass); `trailing:N` "
        "writes it back a window behind, each window of N logged tokens replayed over the next (the log holds at "
        "most 2N tokens). Only models with recurrent layers pay for it (`streams.rewrite`).",
        ("state flush",),
    ),
    Term(
        "head rows",
        "vocabulary rows a drafting head reads (a trimmed draft vocabulary)",
        "`--head-rows R`: the rows of the output (LM head) matrix a drafting head multiplies, when it drafts over a "
        "trimmed vocabulary (as EAGLE-style heads do); without it a draft reads the whole vocabulary.",
        ("head-rows",),
    ),
    Term(
        "drafts",
        "tokens proposed per pass by speculative decoding, verified in the same pass",
        "Speculative decoding: a drafting method (an MTP block, a draft head) proposes K tokens a pass; the next "
        "pass verifies them as extra token-rows. The tokens a pass emits are 1 + a1 + a1·a2 + …, from the "
        "method's acceptance facts (`facts/drafts/`)."
        " `speculate --json` gives the drafting `method`, the `batch`, `best_tokens` (the draft length that emits"
        " the most tokens per second) and a row per draft length, `tokens` (draft tokens a pass; 0 is plain"
        " decoding). "
        "`checkpoints --json`'s `draft_tensor_bytes` is the bytes of a checkpoint's own drafting tensors (`0` when "
        "none).",
        ("draft", "draft tokens", "speculative decoding", "MTP", "acceptance", "drafting method", "method",
         "best_tokens", "tokens",
         "draft_tensor_bytes"),
    ),
    Term(
        "streams.read",
        "share of memory.bandwidth sustained on one long read (the weights)",
        "`streams.read`: the share of `memory.bandwidth` a card sustains streaming one long read, as the weights and "
        "embedding rows are read each pass (e.g. a measured BabelStream Copy or Dot share).",
    ),
    Term(
        "streams.rewrite",
        "share of memory.bandwidth sustained on memory read and written back in place (recurrent state)",
        "`streams.rewrite`: the share of `memory.bandwidth` sustained when memory is read and written back in place, "
        "as a recurrent (Gated-DeltaNet) state is each pass. A model without recurrent state does not depend on it.",
    ),
    Term(
        "streams.append",
        "share of memory.bandwidth sustained on a long read with rows appended (KV cache, log, conv ring)",
        "`streams.append`: the share of `memory.bandwidth` sustained on a long read while new rows are appended, as "
        "a KV cache is read whole and grows by one row a token.",
    ),
    Term(
        "streams.*",
        "the shares of memory.bandwidth each kind of memory traffic sustains",
        "The `streams.*` facts (`streams.read`, `streams.rewrite`, `streams.append`) are shares in (0, 1] of "
        "`memory.bandwidth`: a card's peak is not reached by every access pattern, so each kind of traffic is "
        "priced at its own sustained share.",
        ("streams",),
    ),
    Term(
        "on chip",
        "on-chip memory holding the batch's token-rows through a layer",
        "`on_chip.capacity`: the on-chip memory (SRAM, shared memory, L2) that must hold the batch's token-rows "
        "while they cross a layer; a batch whose rows do not fit is refused. Prefill chunks are bounded by it. "
        "`--json`'s `on_chip_bytes` is what the batch's rows take of it, `on_chip_capacity` the card's."
        " `on_chip_room` (`kv --json`) is ⌊on-chip capacity / token-row bytes per sequence⌋, the batch on-chip"
        " memory holds.",
        ("on_chip", "on-chip", "on_chip.capacity", "on_chip.bandwidth", "on_chip_bytes", "on_chip_capacity",
         "on_chip_room"),
    ),
    Term(
        "held",
        "bytes resident in card memory: the weights once, plus each sequence's caches and states",
        "Held bytes: what card memory must hold for the pass — the weights and embedding table once, and each "
        "sequence's KV cache (at its limit, or its pages), recurrent state and conv ring. passprice counts no "
        "headroom for a runtime's workspace, activations or fragmentation: a batch filling 99.9 % of memory fits "
        "only on paper. `--json`'s `held_bytes` is that sum, `capacity_bytes` the card's memory (`memory.capacity`). "
        "`kv` prints the two parts apart: *held once* (the weights and embedding table) and *held per sequence* (the "
        "seed's `held_per_sequence`), and the sequences that fit, the seed's `card_room`: ⌊(memory − held once) / "
        "held per sequence⌋."
        " `kv --json` gives them by card: `held_once` splits the bytes held once into `weights` and"
        " `embedding_table` (`tied`: the checkpoint has no `output.weight`, its head reads the table;"
        " `draft_weights_not_held`: the draft (MTP) blocks' weight bytes, not among `weights`), and each"
        " context's `fits` (one a card) gives `capacity` (bytes of card memory), `held_shared` (bytes held once),"
        " `held_per_sequence`, `card_room`, `on_chip_room`, `max_batch` (the first batch refused for capacity,"
        " less one) and `limited_by` (`memory`, `on-chip`, or both joined by `and`: which room bounds the batch).",
        ("held bytes", "headroom", "memory.capacity", "card memory", "all in card memory", "capacity_bytes",
         "held once", "held per sequence", "held_per_sequence", "card_room", "held_shared", "weights",
         "embedding_table", "tied", "draft_weights_not_held", "capacity", "fits", "limited_by"),
    ),
    Term(
        "spread",
        "a paged batch fits only while its sequences' positions stay spread about their mean",
        "A paged KV cache holds each sequence's pages as it grows, and passprice counts every sequence of a batch "
        "at the mix's mean position (the seed's position + half a page). `best` and `max-batch` print that batch "
        "on a paged serving with a *spread* line (`roofline`, of its largest batch that fits), and `compare` a "
        "*spread* table of each card whose best batch is "
        "more than that (its batch and the batch at the last position): it fits only while positions stay spread "
        "about the mean (requests "
        "start and end at different times); were every sequence at its last position (its limit − 1, its limit's "
        "whole pages, as a contiguous cache holds its limit), memory would hold fewer, often about half "
        "(`best qwen3-30b-a3b-h200`: 605 at mean position 2,048 of a 4,096 limit, 202.1 MB a sequence; 304 at "
        "4,095, 402.7 MB). `--position L−1` prices that case; no price changes. Their `--json`'s `spread` (each "
        "row's, in `compare --json`'s `cards`) is "
        "`null` for a contiguous cache, "
        "else `mean_position` and `held_per_sequence` (bytes) the batch is counted at, `last_positions` (each "
        "class's limit − 1), `last_held_per_sequence` (bytes a sequence there) and `last_max_batch` (sequences "
        "memory holds were every one there, host memory's included). Under `best --stack S` and `max-batch "
        "--stack S` the line and key say this of the limit's batch, then of the room the stack's runtime leaves "
        "(the card less its memory.reserved): `stack_last_max_batch`, the sequences it holds were every one at its "
        "last position, and whether the stack's best (or max) batch fits however positions stand (`--stack "
        "llamacpp-cuda-2405`, 512 MiB reserved: 302).",
        ("spread evenly", "last_positions", "last_held_per_sequence", "last_max_batch", "last position",
         "stack_last_max_batch"),
    ),
    Term(
        "KV cache",
        "each attention layer's cached keys and values, one row a position",
        "The KV cache: each attention layer keeps the key and value of every position a sequence has reached, "
        "read whole each pass. Its bytes a position are layers × KV heads × (key + value width) × `--kv-bytes`; "
        "GQA shares a KV head among query heads, a sliding window caps a layer's positions."
        " In `kv --json`: `kv_bytes_per_element` the bytes of one cached element (2 for 16-bit, `--kv-bytes`),"
        " and per context `kv_bytes` a sequence's cache of the main blocks, `draft_kv_bytes` that of the draft"
        " blocks, and `total_bytes` the cache, recurrent state and conv ring together (bytes); `kv`'s `+ draft KV if"
        " drafting` column is that of the draft blocks, held only when drafting with them (MTP).",
        ("kv", "KV", "kv_bytes_per_element", "kv_bytes", "draft_kv_bytes", "total_bytes", "+ draft KV if drafting",
         "draft KV"),
    ),
    Term(
        "kv-rotated",
        "cached key and value heads are Walsh–Hadamard rotated before their int8 codes: the rotations are priced",
        "`--kv-rotated`: each cached key and value head row is rotated by a Walsh–Hadamard transform before it is "
        "coded to int8 (as QuaRot-style quantized caches are), the queries are rotated alike and every head's "
        "weighted sum rotated back; each transform of n elements is n·log2 n additions a token-row, priced on the "
        "vector units. It does not change the cache's bytes (that is `--kv-bytes`).",
        ("kv rotated", "rotated KV"),
    ),
    Term(
        "paged KV",
        "a KV cache in pages of N positions, holding what a sequence reached (contiguous: its whole limit)",
        "`--kv-page N`: the KV cache is paged (as vLLM's PagedAttention), so a sequence holds the pages it reached, "
        "half a page wasted on average; a contiguous cache (the default) holds each sequence's whole limit.",
        ("kv-page", "--kv-page", "paged", "contiguous KV", "contiguous", "--contiguous"),
    ),
    Term(
        "shared prefix",
        "positions every sequence shares (a system prompt), held once with a paged cache",
        "`--shared-prefix N`: the first N positions of every sequence are the same (a system prompt); with a paged "
        "cache their pages are held once for the batch, and with `--prefix-read-once` read once a pass. Those "
        "bytes are then counted with the weights, shared by the batch."
        " In a trace and `simulate --json`: `prefix_id` names a prompt prefix requests share and `prefix_tokens`"
        " its length; `shared_prefixes` counts the trace's distinct ones, `shared_positions` a request's"
        " positions held once, `prefix_caching` whether the run held them (paged KV only).",
        ("prefix", "--shared-prefix", "prefix-read-once", "prefix_id", "prefix_tokens", "shared_positions",
         "shared_prefixes", "prefix_caching"),
    ),
    Term(
        "provenance",
        "how a fact is known: published > measured > derived > estimated > assumed",
        "Every fact's provenance, strongest first: `published` (a datasheet or paper says so), `measured` (a public, "
        "reproducible measurement), `derived` (computed from other facts by a stated formula), `estimated` (an "
        "engineering estimate, basis stated), `assumed` (a placeholder). A price is as strong as its weakest fact. "
        "`sources --json`'s `strongest` is the strongest provenance a fact citing the source has; `cards --json`'s "
        "`weakest_with_host_link` a card's weakest provenance counting its host link too.",
        ("weakest", "weakest provenance", "published", "measured", "derived", "estimated", "assumed",
         "strongest", "weakest_with_host_link"),
    ),
    Term(
        "source",
        "the document a fact cites: a record in sources/, with a locator within it",
        "Every fact names its source by id (`sources/ID.toml`: title, publisher or authors, date, address, how it was "
        "read, when the copy read was retrieved, all stated or said to be unknown) and a locator within it (table, "
        "row, column, quoted figure). "
        "`passprice sources` lists them; `passprice audit --source ID` shows every fact citing one, the servings and "
        "locks resting on those, and which locks break their floors if it is withdrawn."
        " `audit --json`'s `sources` gives each source cited: its `title`, `by` (its publisher or authors),"
        " `date`, `where` (where it is, one line), `url`, `copies` (other places it is kept), `retrieved`,"
        " `sha256` (of the copy that was read), `read` (how it was read) and `excerpt`. `sources --json`'s `excerpt`"
        " (and `audit --source ID --json`'s `source.excerpt`, and `audit LOCK --json`'s `sources.ID.excerpt`) is"
        " the file, from the registry's top folder, that holds the lines quoted from the text that was read, stored"
        " for reading offline (`sources/excerpts/cite70-excerpt.txt`; `null` when none is stored), its bytes pinned"
        " by the record's `excerpt_sha256`; `audit LOCK --json`'s `sources.ID.registry` (`audit --source ID"
        " --json`'s `source.registry`) is the registry that path"
        " is relative to (`built-in` outside any registry, whose text names the file's absolute path too, else the"
        " registry's folder); `audit --source ID --json`'s"
        " `excerpt_problem` (and `audit LOCK --json`'s `sources.ID.excerpt_problem`; the text audits say it after"
        " the `stored excerpt` line's `, but`, as `check` does) says what is wrong with that file as one of this"
        " registry (not there, a folder, a FIFO, through a link, outside it, bytes not the pinned `excerpt_sha256`;"
        " `null` when it is one, or none is named). A review's `sources_changed` names"
        " each source whose id leads to another document on HEAD, and each source HEAD adds that a fact is re-cited"
        " to (`added`), with the facts citing it, the locks resting on them and the figures to check in it. "
        "A source's `id` is its file's name; `publisher` or `authors`, `repository` with the `commit` read, and "
        "`arxiv` say where it is. In `sources_changed`, `citing` lists the facts citing it and `places` each figure "
        "to find in it; `quotes_lost`, where its stored excerpt changed, the citing facts whose quotes of it "
        "HEAD's excerpt no longer holds and BASE's did (`audit --source ID`'s NOT FOUND on HEAD; `[]` when none, or "
        "the excerpt did not change; each fails the review, its spans counted in `N quotes NOT FOUND`), "
        "`quotes_unchecked` those whose quotes of it were not looked up, the review's look-ups past their bound "
        "(each fails the review); `quotes_gained`, the reverse of `quotes_lost`: the citing facts whose quotes HEAD's "
        "excerpt holds and BASE's did not, exactly the words an edited excerpt supplies; `excerpt_changes`, the lines "
        "of the source's own section of its stored excerpt that changed, BASE's then HEAD's (`BASE line N: TEXT`, "
        "`HEAD line N: TEXT`, N the line in the file; the first 10, each cut at 200 characters, control characters "
        "escaped, then `and N more changed lines`); `reading_unchanged`, where the excerpt changed, whether the "
        "record's `retrieved`, `read` and `copies` are as on BASE (`true`: no new reading of the document recorded; "
        "`null` when the excerpt did not change)."
        " `audit LOCK --json`'s `sources_since_lock` lists each source the lock's facts cite whose record differs from"
        " its record at the commit that last wrote the lock (`id`, `commit`, `when`, `changed`, `message`; the text"
        " audit's `since lock` lines); "
        "`sources_compared` is false when no commit holds the lock file as it is: the records shown are today's; "
        "`excerpts_at_lock` says which stored excerpts its quotes were checked against: `commit`, the commit that "
        "last wrote the lock (`null` when none holds it as it is: today's excerpts were read), and `replaced`, the "
        "sources whose excerpt at that commit differs from today's and was read instead (the text audit's "
        "`excerpts` line, given when one was, or when no commit holds the lock).",
        ("sources", "locator", "citation", "cite", "retrieved", "retrieved unknown", "kind", "date",
         "provenance it supports", "source: locator", "by", "where", "url", "copies", "sha256", "read", "excerpt",
         "excerpt_sha256",
         "stored excerpt", "excerpt_problem",
         "sources_changed",
         "arxiv", "authors", "publisher", "repository", "commit", "id", "citing", "places", "added",
         "quotes_lost", "quotes_gained", "excerpt_changes", "reading_unchanged",
         "sources_since_lock", "since lock", "sources_compared", "excerpts_at_lock"),
    ),
    Term(
        "withdrawn",
        "audit --source: the facts citing it demoted to assumed, and what the prices and locks on them say then",
        "`passprice audit --source ID` (or `--fact CARD:PATH`) asks what a price would rest on were the source "
        "withdrawn: every fact citing it (`cites it as`: `source`, its own source, or `figure NAME`, a figure of "
        "its derivation read from it; `record` is the card, drafting method, routing record or stack holding the "
        "fact) is demoted to `assumed`, and with it every fact derived from one (`--fact`'s `why`: `derived from "
        "PATH`). Values do not change, so no price "
        "moves: the servings and locks resting on those facts show their weakest provenance today and withdrawn "
        "(`provenance → withdrawn`; `provenance_withdrawn` in `--json`), and the locks line counts those whose "
        "floors would then break (`withdrawn (the facts above assumed), 8 break`). A lock made under a serving "
        "stack shows the expected price its stack facts carry, labelled, beside the limit (`237.4 expected (limit "
        "996.1)`; `expected_tokens_per_s` in `--json`, null for a limit's lock). "
        "Its `--json` names the `subject` (the source or fact) and gives each lock `holds_withdrawn`, `breaks` (the "
        "floors would break) and `offences_withdrawn` (each fact then below its floor: `path`, `provenance`, "
        "`floor`), `pinned_only` (facts it pins but its price does not rest on), `skipped_servings` (servings not "
        "priced, and why); each citing fact's `how` (`source`, `figure NAME`, `derived from PATH`) and `lock_path` "
        "(the path a lock names it by: `routing.hot_share`); `fitted` stack facts (`runs` of their `of` runs cite "
        "it); and `runs` by measurement file (`ids`, `stacks`, `cards`).",
        ("withdraw", "provenance → withdrawn", "provenance_withdrawn", "cites it as", "record", "why",
         "subject", "holds_withdrawn", "offences_withdrawn", "pinned_only", "skipped_servings", "how",
         "lock_path", "of", "ids", "stacks"),
    ),
    Term(
        "derivation",
        "how a computed fact follows from its inputs: a formula over facts, figures and constants",
        "A fact's derivation names its inputs (other facts of the same card with the value each had, figures read "
        "from a source, constants with units) and a formula passprice evaluates itself, exactly and with units. "
        "`check` recomputes it: a fact whose input has changed since is stale, named with that input, and one "
        "whose value is not what its formula gives from the inputs it records does not follow (`not following`: "
        "write the value the formula gives, or its new inputs); `fact set` "
        "warns which facts an edit leaves stale, and `diff` lists them and fails, marking each lock whose price "
        "rests on one."
        " In `--json` a derivation is its `formula`, `digits` (significant digits it is rounded to) and `inputs`,"
        " each a figure with its `value`, `unit` and `locator`, a `fact` it reads, or a `constant` (what the"
        " constant is); `derivation_text` is the line `audit` prints; `cancelled` lists each `input` whose figure"
        " cancels out of the formula, with its `powers` (+1 over the line, −1 under it): its value moves nothing."
        " In a review, `derivation changed` beside a fact's figure says its derivation's text differs BASE → HEAD"
        " (the `derivation:` line under it shows what, `[old → new]`). "
        "A review's `--json` lists the derived facts (`CARD:PATH`) that do not follow from their inputs on HEAD "
        "(`unsound`; a serving stack's fitted facts a lock rests on that no longer follow from its runs among them, "
        "`STACK:PATH`) and the locks resting on them (`resting_on_unsound`); a changed file's `dependants` are the "
        "facts derived from a fact it changed (`input`, `fact`), each with its `finding` (`kind`: `stale`, "
        "`mismatch` or `broken`; `null` when it still follows)."
        " `fact recompute --json`'s `provenance_kept` says which recomputed facts that are not `derived` kept their "
        "provenance (a recompute moves the value, not what it rests on), `null` when all are derived.",
        ("derivations", "stale", "derivation changed", "formula", "still follows", "does not follow", "not following",
         "mismatch",
         "recomputed", "derivation_text", "digits",
         "inputs", "input", "constant", "cancelled", "powers",
         "unsound", "resting_on_unsound", "dependants", "finding",
         "provenance_kept"),
    ),
    Term(
        "rests on",
        "the facts a price used; * marks the binding term's",
        "The facts a price rests on: the card facts (and drafting acceptances) its arithmetic read — no "
        "`streams.rewrite` without recurrent state, no `host.*` without sequences in host memory, never "
        "`on_chip.bandwidth`. A lock floors exactly these; `audit` gives each one's citation and elasticity.",
        ("rests_on",),
    ),
    Term(
        "lock",
        "a file pinning what a price is a function of, its floors and the price itself",
        "A lock (`locks/NAME.lock.toml`) pins what a price is a function of, each by digest: the facts it rests on, "
        "the checkpoint's content, the serving and the pricing model's code; the floors it allows (made without "
        "flags, each fact at its provenance when locked); and the price. Every pricing command of a locked serving "
        "prices under its locks (`--no-lock` opts out); `reproduce` re-prices it from what it pinned bit for bit; "
        "`check` and `diff` judge it against today's inputs. Its `[lock] digest` (the `digest` on `audit LOCK`'s "
        "`lock` line, `lock_digest` in `--json`) is the sha256 over all it holds: cite a price by the lock's name "
        "and that digest."
        " `lock --json` gives the lock file's `path` as given and its `absolute_path` (the links it names kept)."
        " A price's `--json` `lock` object's `not_applied` lists each lock made from the serving under other options "
        "that does not apply to this price (`{\"lock\", \"path\", \"serving\"}`: the fields that differ, pinned → "
        "priced): a lock applies only to the serving it pinned, options and all."
        " Every listing of locks (`check`, `diff`'s text, `--json` and Markdown, `audit`, `sources`, a price's `lock` "
        "line) is by name, a name before the names it begins: `r1-qwen7b-h200`, `r1-qwen7b-h200-best`, "
        "`r1-qwen7b-h200-llamacpp` (`registry.lock_order`).",
        ("locks", "floor", "floors",
         "absolute_path", "not_applied"),
    ),
    Term(
        "replaces",
        "lock --update: the price the re-lock replaced, old -> new, or unchanged",
        "`lock --update`'s `replaces` lines under the new price: the tokens/s the old lock recorded and the new one "
        "records, `OLD -> NEW tokens/s (±x %)`, or `OLD tokens/s, unchanged` when equal; under a stack the expected "
        "price the same way (`replaces  expected 122.7 -> 123.0 tokens/s (+0.2191 %)`). In `--json`, `replaced`: "
        "the old `tokens_per_s` and `expected_tokens_per_s` with each one's `relative_change` and "
        "`expected_relative_change` (new / old − 1); `null` for a lock written anew.",
        ("replaced", "replaces expected"),
    ),
    Term(
        "re-derived to the same value",
        "review: facts a re-fit wrote again with the same value, named in one line of their file, not as changes",
        "A review (`passprice diff`) lists a fact fitted to measured runs that a re-fit (`calibrate --stack S`) wrote "
        "again with the same value, unit, provenance and note — only its derivation's runs changed, and its citation "
        "at most in the count of runs it names (`the 111 runs` → `the 112 runs`) — in one line of its file (`7 more "
        "facts re-derived to the same value …: overhead.pass, share.array, …; derivation: …`, grouped by what changed "
        "in their derivations), not as a change: the summary counts the facts that changed and adds `(N more "
        "re-derived to the same value)`, a lock's `changed` names only the facts that changed, and its `change` "
        "column gives the move of the price it pins: the expected price under its stack (`+0.2191 % expected "
        "(limit +0 %)`) where it locks one, else the limit's. `--format json` keeps them in `files[].facts`, marked "
        "`refit_unmoved`; a lock's `expected_relative_change` is the expected price's move. A fit of the same runs "
        "whose errors moved is one too when the same change moved a card, checkpoint or routing record those runs "
        "are priced with (the RTX 4090's bandwidth corrected, the stack re-fitted): its derivation line says "
        "`re-fitted after this change moved what its runs are priced with, card rtx_4090 (memory.bandwidth, …)`, "
        "not a hand edit (`moved_with` in `--json`: those records, each with its moved facts).",
        ("more re-derived to the same value", "refit_unmoved", "expected_relative_change", "moved_with"),
    ),
    Term(
        "floors hold",
        "every fact the price rests on is at or above the floor its lock allows",
        "A lock's floors *hold* when every fact its price rests on has at least the provenance the lock allows for it "
        "(`check`'s `floors:` line: `lock L holds`; `audit`'s margin column: `at floor` or above). A review "
        "(`passprice diff`) says of each lock `still holds` when its floors hold on HEAD and HEAD prices the serving, "
        "`floors hold, but the price is refused` when they hold and HEAD refuses the price (say why beside it), and "
        "`BROKEN` when a fact is below a floor (`LockFloor`). "
        "`check --json`'s `verdict` is a lock's floors line; a review's `verdict` the floors judged on HEAD "
        "(`verdict_before` on BASE). "
        "A floors verdict's `offending` (`--json`) lists each fact below its floor: its `path`, `provenance` and "
        "`floor`. A review's `--json` gives each lock `holds` (true when HEAD's inputs price it and keep HEAD's "
        "floors), `held` (the same of BASE: BASE's inputs priced it within BASE's floors; not a count of bytes, as "
        "a price's `held_bytes` is) and `breaks` (true when HEAD leaves it unheld: a fact below a floor, a price HEAD "
        "refuses or cannot make, its serving deleted, or its checkpoint's content changed from what it pins; a "
        "lock removed or whose file does not read on HEAD never breaks); `check --json` and `audit --source --json` "
        "give each lock `holds` too (its floors hold today).",
        ("still holds", "holds", "floors hold, but the price is refused",
         "verdict", "verdict_before",
         "offending", "locks.held", "locks.holds"),
    ),
    Term(
        "also pinned",
        "facts a lock pins that its price does not read (a change to one is no drift)",
        "`reproduce`'s `also pinned, not read by this price (N): …` line: a lock pins every fact of the card (its "
        "float-matrix rates, `tensor.*`, only where the price reads them) and every drafting figure, so it rebuilds "
        "the card the price was made on; those the price does not rest on are listed here, apart from `rests on`. A "
        "change to one of them moves no figure of the price and is no drift.",
        ("also pinned, not read by this price",),
    ),
    Term(
        "today",
        "what today's files give, beside what a lock recorded",
        "`check`'s `today:` line under a lock: the price (tokens/s and the pass) with today's inputs (the card, "
        "checkpoint, serving and pricing model as they are now), shown when it differs from the price the lock "
        "recorded (`recorded; … with today's inputs`). The lock still reproduces from its own pins; the difference "
        "is what re-locking (`lock --update`) would record. `today's inputs` and `today's files` elsewhere mean the "
        "same: the registry as it is checked out now.",
        ("today's files",),
    ),
    Term(
        "not judged",
        "a lock's drift or a review's verdict could not be decided: today's (or HEAD's) inputs do not read",
        "`check`'s `drift: not judged (today's inputs do not read: …)` and a review's `not judged: …`: the lock's "
        "floors and drift are judged against today's (HEAD's) card, checkpoint and serving; when one of them does not "
        "read (a bad file, a missing entry) there is nothing to judge them against, so no verdict is given and the "
        "reason follows. A reason two or more locks share is said once, above the locks, with how many it leaves "
        "not judged (`locks not judged: 5 of 10 (…): today's files do not read: FILE: …`), each of those locks then "
        "reading `floors: not judged (FILE does not read, above)`; a lock's `drift: not judged (the same)` says the "
        "reason its floors line gave; each such lock's own line reads `not judged`, not `FAILS`, and `check`'s first "
        "line counts them so (`3 of 9 locks not judged`, a lock file that does not read counted apart: `(1 more lock "
        "file does not read, on stderr)`). It is no pass: the file that does not read is its own error. "
        "`reproduce` says "
        "it as "
        "`today's files do not read: … (bad input: not judged; the price above is rebuilt from the lock's pins "
        "alone)` of a file that is there but cannot be read, and exits 2 on its line, as `check` does. (A warning "
        "that the checkout's "
        "`src/passprice` was `not judged` means the same of the code: whether it differs from the pinned pricing "
        "model could not be decided.) "
        "`check --json` gives each lock `judged`: false when today's inputs did not read.",
        ("locks not judged",
         "judged"),
    ),
    Term(
        "lock format",
        "the version of a lock file's layout: 2 pins the pricing model and the checkpoint by digest",
        "A lock's `[lock] format`. Format 2 (what `lock` writes) pins the pricing model's code and the checkpoint's "
        "content by digest besides the facts and the serving; a format 1 lock (the first locks) pins neither, so it "
        "is reproduced on its figures only (`lock --update -o LOCK` re-locks it as format 2, keeping its policy). "
        "`reproduce` names it on its first line: `price lock of serving R1, lock format 2`. "
        "`older` (`check --json`) and `older_format` (`reproduce`, a review) say what to do with a lock of an older "
        "format, `null` for format 2.",
        ("format", "lock format 1", "lock format 2",
         "older", "older_format"),
    ),
    Term(
        "lock kind",
        "price lock: the serving's own batch; best lock (lock --best): the batch best finds",
        "A lock's kind (`[lock] kind`; `reproduce` names it first: `price lock of serving S`): a *price lock* "
        "(`passprice lock SERVING`) records the price at the serving's own batch, as `price` gives it; a *best lock* "
        "(`passprice lock SERVING --best`) records the batch `best` finds and its price, so a change that moves the "
        "best batch moves it. `lock --update` keeps the kind.",
        ("price lock", "best lock"),
    ),
    Term(
        "re-lock",
        "write a lock again from today's inputs, keeping its floors: passprice lock --update -o LOCK",
        "`passprice lock --update -o LOCK` writes the lock again from today's facts, checkpoint, serving and "
        "pricing-model code, keeping its name, kind, serving, stack and floors (refused when a fact no longer meets "
        "its floor: `--force --require PATH=PROVENANCE` loosens one on purpose, which the review shows). A review "
        "(`passprice diff`) fails a change that moves a locked price without it, naming the command, and marks a "
        "lock moved and re-locked in the same change `re-locked`, its recorded price old → new.",
        ("relock", "re-locks", "lock --update"),
    ),
    Term(
        "relabelled",
        "a text a lock pins changed since, moving no number (a card's title, a serving's description …)",
        "Besides facts and the serving priced, a lock pins texts that move no number: the card's title and "
        "`hypothetical` mark, the serving's description, a stack's title, the checkpoint entry's `origin`, a routing "
        "record's or drafting method's title and note. One that today's files hold otherwise is *relabelled*: "
        "`reproduce` says it on a `relabelled` line, `check` lists it under the lock's drift, `check --frozen` fails "
        "on it, and `lock --update` re-pins it. "
        "A review's `--json` lists each card retitled or newly marked hypothetical (`relabelled_cards`) and each "
        "routing record or drafting method retitled or re-noted under a locked price (`relabelled_records`), with the"
        " locks pinning it: to verify, and to re-pin; and each serving stack whose route (`integer_matrices`, "
        "`float_matrices`: where its matrix kernels run, no cited fact) moved under a lock made under it "
        "(`rerouted_stacks`), old → new, naming those locks: to verify.",
        ("relabel", "relabelled since the lock",
         "relabelled_cards", "relabelled_records", "rerouted_stacks"),
    ),
    Term(
        "what-if",
        "a price that is not the one a lock records: another option, card or batch than the locked serving's",
        "A price of a locked serving with an option changed (`--batch`, `--max-tpot`, `--limit`, `--routing` …) is "
        "a what-if: its lock line says the price is not the locked one and which serving field differs (`serving "
        "differs from the locked one: batch: 8 → 9`). It is still priced under the serving's locks, so a what-if "
        "resting on a fact below a floor is refused (`LockFloor`) unless priced `--no-lock`; on another `--card` or "
        "`--checkpoint`, and in `compare` across cards, it is judged under no lock (the locks lock another card or "
        "checkpoint). A what-if writes nothing: only `lock` records a price.",
        ("what if", "what-ifs"),
    ),
    Term(
        "hypothetical",
        "a card that does not exist, a design sketch: hypothetical = true in its [card] table",
        "A card marked `hypothetical = true` in its `[card]` table is a design sketch, not a product "
        "(`ws1_hypothetical`): its prices read `, hypothetical` after its title, and its facts are `estimated` or "
        "`assumed`, since no datasheet or benchmark is its own (the review asks of one citing `published` or "
        "`measured` figures). A title saying hypothetical on a card not so marked reads `, not marked hypothetical`. "
        "A review's `--json` names, by path, each card no longer marked hypothetical (`made_real`), each added "
        "hypothetical card citing a `published` or `measured` fact (`hypothetical_claims`) and each card whose title "
        "says hypothetical while it is not marked so (`title_contradicts_mark`): each to verify.",
        ("marked hypothetical", "not marked hypothetical",
         "made_real", "hypothetical_claims", "title_contradicts_mark"),
    ),
    Term(
        "origin",
        "a checkpoint entry's origin: where its GGUF header came from (import --origin)",
        "A checkpoint entry's `origin` (`[entry] origin`): where the header it was imported from came from — "
        "package or URL, version, licence — as `passprice import FILE --name NAME --origin TEXT` gives it; without "
        "`--origin` it names the file and says its `sha256` identifies it; `synth --import NAME` writes the "
        "published configuration it was built from, starting `Synthetic, header only`: a synthetic header, no "
        "published file of those bytes, which `audit` says. A header `synth -o` wrote and `import` then read "
        "carries no such mark (nothing in its bytes says it), so its entry says so only when `--origin` does. A lock "
        "pins the origin in `[checkpoint]`; `audit` and `diff` print it."
        " `pinned_origin` (`audit --json`) is the origin the audited lock pinned where it differs from today's"
        " entry, else `null`."
        " `synth --json` gives the `config` read and its `source`, the `architecture`, `mix`, `tensors`, "
        "`tensor_bytes` and `types` (the tensors of each GGML type), the header `output` written (`null` without "
        "`-o`), the `entry` imported (`null` without `--import`) and a `warning` (gpt-oss experts the mix requantizes "
        "from MXFP4; else `null`).",
        ("checkpoint origin", "--origin", "synthetic", "synthetic header", "pinned_origin",
         "config", "output", "types", "warning"),
    ),
    Term(
        "margin",
        "rungs of the provenance ladder between a fact and its lock's floor",
        "In `audit`, how far a fact's provenance stands above the floor its lock sets on it, in rungs of the ladder "
        "published > measured > derived > estimated > assumed: `at floor`, `+2` (published over a derived floor), "
        "or `-1 BELOW` (the lock breaks: price refuses LockFloor).",
        ("margins", "rung", "rungs", "at floor", "provenance ladder"),
    ),
    Term(
        "elasticity",
        "% change of tokens/s for a +1 % change of a fact",
        "A fact's elasticity: the % change of tokens/s when the fact is 1 % higher, by re-pricing. A memory-bound "
        "price has ≈ +1 in `memory.bandwidth`; 0 means a 1 % change does not move it, though the price may still "
        "rest on the fact: `memory.capacity` decides whether the batch fits (a smaller card refuses it) and moves no "
        "price that fits, and a term that does not bind moves nothing until it does. Where the fact 1 % higher is "
        "refused (an acceptance or a routing share of 1), `audit` measures it 1 % lower and marks it `(−1 %)`; where "
        "1 % lower is refused too (uniform routing's `routing.hot_share`: no share passes 1, and 0.99 of the "
        "token-slots cannot land on a hot set holding every expert) it shows `refused`, no elasticity, naming the "
        "refusals under its table: the price itself is made. The table moves each fact alone, the facts derived "
        "from it held as written; the line `inputs of other rows' derivations` under it gives such an input's "
        "elasticity `re-derived`, its derived facts recomputed by their formulas: a stream share measured as a rate "
        "over `memory.bandwidth` then cancels the bandwidth's move on the traffic it prices (r1-qwen7b-h200's "
        "`memory.bandwidth`, +1.000 alone, is +0.000 re-derived; `elasticity_rederived` and `derived_by` in `--json`).",
        ("elasticities", "re-derived", "inputs of other rows' derivations", "elasticity_rederived", "derived_by"),
    ),
    Term(
        "quote check",
        "audit: whether each fact's quoted spans were found in its document's stored text",
        "A locator quotes the words of its document that state the figure, between single quotes. Where a source "
        "record names a stored excerpt (`source.excerpt`, the lines quoted from the text that was read), `audit` "
        "looks for each quoted "
        "span of a fact the price rests on, and of each figure its derivation reads from another document, in "
        "that text, as the registry's citation tests do: `checked` when every span is found, `NOT FOUND` when one "
        "is not (the quote is not in the lines stored), `MISMATCH` when every span is found but they state, with a "
        "unit of the figure's dimension, another figure than the fact's and none of their numbers is its own (a "
        "quoted table row's numbers are in the unit its locator names right after the quote, `row '| Dot | 4.48 |' "
        "in TB/s`; a quoted name followed by `column` or `row` is a place, no figure, `'GeForce RTX 4080 16 GB' "
        "column`; a measured run's tokens/s is held to the figures its quote writes in tokens per second, else to "
        "the mean it prints with its spread, `145.55 ± 0.80`, else to every number it states, as the run rounds; a "
        "fact of any provenance without a derivation held to its locator's quotes, unless it is `estimated` or "
        "`assumed` with a note opening `Basis:` or `Estimate:` and stating a basis after it, or a locator working "
        "its figure out of the quoted one, `'4.8 TB/s' less 5 %` (a page or table number, `p. 18`, is no factor; "
        "its quotes are the estimate's inputs: the stack's `memory.reserved`, 512 MiB "
        "from quoted buffers of 70.50 to 148.19 MiB), each figure a derivation "
        "reads to its own locator's; `8 TB/s` is `8000 GB/s`; `check` fails it and the review fails it too), "
        "`not checked` when the document has no stored text (the H200 "
        "datasheet, whose PDF was never read), or a locator quotes nothing (the MI300X's `vgpr`, read from a "
        "ROCm table no text of which is stored). A quote after a page its locator names (`p. 19: '…'`) is looked "
        "for on that page of the stored text alone, where the excerpt says its numbers are pages (a header line "
        "`# Numbers are pages`, or `# Numbers are pages: ID …` for those sources' sections: the Ampere and Hopper "
        "whitepapers'); where they number the copy's lines the quote is looked for in the whole text. A quote spans "
        "two numbered lines of an excerpt only when their numbers are the same or next to each other. A quote whose "
        "locator names a file of its source that the excerpt heads a section for (`== ID PATH URL ==`'s PATH, or "
        "that path's file name where no other section's ends so) is looked for under that section alone, and a miss "
        "says where the quote is (`(under Azure_Results/ND_H200_v5_results.md; found only under "
        "Azure_Results/ND_H100_v5_results.md)`); a locator naming none is looked for in the source's whole text. "
        "A span a fact's "
        "locator and its derivation's input both quote is one span, counted once. The text audit's `quotes checked "
        "against a stored text:` section "
        "(the markdown's `Quotes checked`) gives the count and a line a fact, under it `at EXCERPT:LINE` of each "
        "quote found (its first line in the stored excerpt, for an auditor to open); a fact every quote of which is "
        "found but none states its figure (its value, nor a figure its derivation reads: the routing record's "
        "`hot_experts` quotes the table's title and the row's label, its `58/128` outside the quotes) reads `places "
        "found, the figure not quoted`, counted apart from the facts `checked`; a quote NOT FOUND that the excerpt "
        "holds with Markdown emphasis (`**`, `*`, `_`, backticks) among its characters stays NOT FOUND and says "
        "`found with the excerpt's markup removed: quote it as the file holds it, '58/128 (**45%**)'`. "
        "`audit --source ID` gives the same of "
        "each fact citing the source, of the spans its locators citing it quote, and of each measured run quoting "
        "it (`FILE: run.INDEX (ID)`, as `check` names it; `--json`'s `run_quote_checks`, a `run` and the same "
        "object each; `quotes_checked` counts them with the facts). `audit --json`'s facts' "
        "`quote_check` holds `state`, `spans` (quoted), `found`, `missing` (the spans not found), `unstored` (the "
        "documents with no usable stored text) and `why`, with `figure_quoted`, `false`, for `places found, the "
        "figure not quoted` (its state `checked`) and `quote_lines`, each quote's `EXCERPT:LINE`, where any is told; "
        "`quotes_checked` counts the facts `checked` (their figure quoted), `not_found` and all `facts`, and "
        "`figure_not_quoted` where any is. "
        "A review (`passprice diff`) makes the same check of each changed or added "
        "fact whose quotes changed, against HEAD's stored excerpts: `NOT FOUND` is added to its `to verify`, counted "
        "in the summary (`1 quote NOT FOUND in its stored text`) and fails the review (exit 1: the stored excerpt is "
        "the registry's own record of the words read, so the quote or the excerpt is wrong), and "
        "`--format json`'s facts' `quote_check` holds the same object (`null` where no check was made; its `past` "
        "counts the spans not looked up, past the 2,236 spans and 128 MiB of stored text one audit or review looks up "
        "in all). A review whose look-ups would run past that bound (its changed facts' first, then its rewritten "
        "excerpts' with what is left) looks up none of them (whichever file sorts first) and "
        "fails, naming the facts not checked (`quotes_unchecked`); the quotes of the measured runs it adds or "
        "changes are looked up last, with what is left of that one bound, across all its measurement files, and a "
        "run past it fails the review too (named `FILE: ID` in `quotes_unchecked`; review the change in smaller "
        "pieces); where the "
        "check read a stored excerpt the same change edited (the source's own section, or an excerpt first named), "
        "`quote_excerpts_edited` names those sources and `to verify` says the quotes were checked against text the "
        "change wrote (a changed fact citing such a source is checked even when its quotes did not change); a "
        "changed fact whose old quotes were looked up in a stored excerpt and whose new ones cite a document with "
        "none says on its line `its quote can no longer be checked: nvidia-h200-datasheet has no stored text`, to "
        "verify (`quote_no_longer_checked` lists why, a document a line), and is read against the excerpt BASE "
        "stored and the change removed: NOT FOUND or another figure there fails the review "
        "(`quote_against_removed_excerpt`, `quotes_against_removed`); a measured run the change adds or changes whose "
        "quote, found in HEAD's stored excerpt, states another figure than its tokens/s fails it too "
        "(`runs_mismatched`). An "
        "excerpt whose bytes are not the `excerpt_sha256` its record pins is unusable: `not checked`, and `check` "
        "fails.",
        ("quote_check", "quotes_checked", "quotes checked", "quotes checked against a stored text", "not checked",
         "NOT FOUND", "not_found", "unstored", "spans", "checked", "missing", "quote_excerpts_edited", "past",
         "quotes_unchecked", "quote_no_longer_checked", "no longer checked", "run_quote_checks",
         "quote_against_removed_excerpt", "quotes_against_removed", "runs_mismatched", "figure_quoted",
         "figure_not_quoted", "places found", "quote_lines"),
    ),
    Term(
        "warning code",
        "--json: each warning a command prints, with a stable code to act on",
        "`fact set --json` and `fact recompute --json` list each warning they print on stderr in `warnings`, and "
        "`check --json` each of its `warnings` lines again in `coded_warnings`: an object a warning, its `text` the "
        "line as printed after `passprice: warning:` and its `code` one that does not change with the wording: "
        "`measured_elsewhere` (a measured fact citing the place another card's measured fact cites: a card copied "
        "from another that kept that card's measurement as its own), `stale` (a derived fact the edit left stale), "
        "`recompute` (the `fact recompute` command that writes them), `caution` (what the edit removed or made "
        "inconsistent), `below_floor` (a lock whose floor the fact now falls below), `price_moved` (`fact set`: "
        "the locks whose recorded price the edit moves, with each one's `lock --update` command: a review fails the "
        "change unless it re-locks them), `quote` (`fact set`: `check`'s "
        "line for a quote of the fact its source's stored excerpt lacks, or one stating another figure than the "
        "fact's; the file is written all the same), `unpinned_excerpt` (`check`: a "
        "source record names a stored excerpt it does not pin, no `excerpt_sha256`; the line gives the sha256 to "
        "pin), `pages_declaration` (`check`: a stored excerpt's header line reads like `# Numbers are pages` but is "
        "not it as written, or names an id no section of the file is headed nor any record naming it is: its numbers "
        "are then not read as pages); `check`'s other warnings are `other` until they are given a code of their own.",
        ("coded_warnings", "code", "text", "measured_elsewhere", "below_floor", "quote", "recompute",
         "unpinned_excerpt", "pages_declaration", "other"),
    ),
    Term(
        "refusal",
        "a price the model will not make, by name, with what to change",
        "A refusal names what passprice cannot price and what to change: `NotResident` (the batch does not fit), "
        "`Undecoded` (a tensor type neither the array nor the vector units read), `Routed` (a mixture of experts "
        "without a routing record: which experts a pass reads depends on routing), `ContextBeyondModel`, "
        "`BadDraft`, `LockFloor` … (each defined here too). Exit status 1. (`refused` in an audit's elasticity "
        "column is no refusal of the price: the fact moved 1 % either way is refused, see elasticity.)"
        " In `--json` a refusal is its name (`refusal`) with `message` (the line printed) or `detail` (what was"
        " refused); `problems` lists the lines of files that did not read, the ones stderr named."
        " A refusal's `what` says in words what it is about (`Empty`: the batch or the activation words;"
        " `ServingChanged` and `LockMismatch`: the `card` or `checkpoint`; `BeyondStack`: what the price needs), and "
        "`known` what passprice knows instead (`UnknownArchitecture`: the architectures it prices; "
        "`TensorNotInArchitecture`: those with the tensor's feature; `LockModelForged`: how many pricing models it "
        "lists).",
        ("refused", "refusals", "detail", "message", "problems",
         "what", "known"),
    ),
    Term(
        "NotResident",
        "refusal: what the serving holds does not fit card memory (nor host memory, if allowed)",
        "A refusal: the weights once and every sequence's caches and states (held bytes) exceed `memory.capacity`, "
        "and the host's too with `--host-memory`. Lower the batch or the context limit, page the KV cache "
        "(`--kv-page`), allow host memory, or, when the weights alone do not fit (the line says how many times the "
        "capacity they take), a smaller type mix or a larger card: `--host-memory` holds sequences, never weights "
        "(passprice prices no weights held off the card; a measured run is told to correct its card or "
        "checkpoint). When the weights fit, the line says how many sequences "
        "do (`at most 605 sequences fit beside the 18,550,716,416 bytes held once, 202,113,024 bytes a sequence "
        "(passprice max-batch)`; `fits` in `--json`): "
        "⌊(capacity − held once) / held per sequence⌋, the card-memory bound `max-batch` gives, and a serving "
        "whose KV cache is paged is not told to page it. Under a memory use (`--memory-use`) the searches' share "
        "is the capacity, and the line names it: `holds 80 (memory use 1e-09 of its 80,000,000,000)`."
        " In `--json`: `needed` the bytes the memory must hold, `capacity` the bytes it holds, `memory` which (`card`,"
        " or `host` with `--host-memory`); `OnChipOverflow` gives `needed` and `capacity` of on-chip memory.",
        ("needed",),
    ),
    Term(
        "OnChipOverflow",
        "refusal: the batch's token-rows do not fit on-chip memory",
        "A refusal: the batch's token-rows (batch × (1 + drafts) rows of the widest layer) exceed "
        "`on_chip.capacity`, which must hold them while they cross a layer. Lower the batch or the drafted tokens.",
    ),
    Term(
        "Undecoded",
        "refusal: a matrix in a type neither the array nor the vector units read",
        "A refusal: a weight matrix's GGML type is one passprice's datapaths do not read (neither the integer "
        "array's codes nor the vector units' floats). Requantize it to a K-quant, Q4_0…Q8_0, IQ4_NL/IQ4_XS, "
        "MXFP4/NVFP4, or a float type."
        " `--json` gives the `tensor` and its GGML type, `ty`.",
        ("ty",),
    ),
    Term(
        "MissingTensor",
        "refusal: a stage names a tensor the header does not hold",
        "A refusal: the decode step needs a tensor (a head, an embedding table) that the checkpoint's tensor table "
        "does not have.",
    ),
    Term(
        "Step",
        "refusal: the checkpoint's decode step cannot be read off its header (MissingMetadata …)",
        "A refusal of the checkpoint itself: its decode step cannot be read off the header, for the reason it "
        "carries: `UnknownArchitecture`, `TensorNotInArchitecture`, `MissingMetadata`, `UnclassifiedTensor` or "
        "`UnknownType`, named on the line (`Step: decode step refused (UnknownArchitecture): why`; `--json`: "
        "`step.refusal`). A sweep row's refusal cell names it too: `Step: UnknownArchitecture: why`.",
    ),
    Term(
        "TensorNotInArchitecture",
        "refusal: the header holds a tensor of a feature its architecture has none of",
        "A refusal inside `Step`: the header holds a tensor of latent attention (`attn_kv_a_mqa`), routed experts "
        "(`ffn_*_exps`) or a recurrence (`ssm_*`) that its `general.architecture` has none of (a `llama` header "
        "with `attn_kv_a_mqa`); llama.cpp would not load it. Name the architecture the model is."
        " `--json` gives the `tensor`, the `feature` it is, the `architecture` named and the architectures `known` to "
        "have it.",
        ("feature",),
    ),
    Term(
        "UnknownArchitecture",
        "refusal: the header's general.architecture is none passprice prices",
        "A refusal: the checkpoint's `general.architecture` is not one of the architectures passprice implements and "
        "tests (the README's list, `passprice.architectures.KNOWN`). Which layers slide a window, and what a "
        "layer's tensors do, are the architecture's, so a price read off tensor names alone would be a guess. "
        "`import` records such a header and warns; every price of it refuses. Convert the model with llama.cpp's "
        "convert_hf_to_gguf.py if it is one of the known architectures, or add the architecture to the table with "
        "its rules and a test.",
    ),
    Term(
        "MissingMetadata",
        "refusal: a metadata key the decode step needs is absent",
        "A refusal: the header lacks a key the decode step needs (a mixture of experts' `expert_count` and "
        "`expert_used_count`, MLA's `attention.kv_lora_rank`, a recurrent layer's `ssm.*` shape, a windowed "
        "architecture's `attention.sliding_window`: gemma3, cohere2, gpt-oss, which llama.cpp reads as required; "
        "gemma2's is optional, see `defaulted`), named with why (and, for a key the architecture needs, the "
        "header's file)."
        " `--json` gives the missing metadata `keys` and `why` they are needed.",
        ("keys",),
    ),
    Term(
        "UnclassifiedTensor",
        "refusal: a tensor no rule places in a decode stage",
        "A refusal: a tensor whose name no rule of the decode step places (embedding, projection, norm, router, "
        "attention, recurrence, head), so the step would be a guess.",
    ),
    Term(
        "UnknownType",
        "refusal: a tensor's GGML type id is unknown, so its bytes cannot be counted",
        "A refusal: a tensor's GGML type id is one the gguf package does not know, so its bytes cannot be counted "
        "(`import` warns of such a header; requantize it, or install a gguf that knows the id)."
        " `--json`'s `type_id` is the tensor's GGML type id.",
        ("type_id",),
    ),
    Term(
        "BadDraft",
        "refusal: a draft without one acceptance figure in [0, 1] per drafted token",
        "A refusal: the drafting method gives no acceptance figure for a drafted token (a draft longer than its "
        "figures), or one outside [0, 1]; a longer draft would be priced on a guess. A serving file's own "
        "`draft.tokens` past its method's figures is bad input instead (exit 2), named by the file and key.",
    ),
    Term(
        "NoDrafter",
        "refusal: drafting without the drafter in the checkpoint's header",
        "A refusal: passprice prices each drafting step through the checkpoint's own drafting (MTP) blocks "
        "(`nextn_predict_layers`); a checkpoint without them, or a drafting method of kind `draft-model` (a separate "
        "draft model), would have its drafted tokens cost only the head's rows, a speedup bought with a drafter priced "
        "as free. Price without drafts, or a checkpoint that carries its drafter. A serving file's own `draft.method` "
        "is bad input instead (exit 2), named by the file and key.",
    ),
    Term(
        "Empty",
        "refusal: a serving of no sequences, or no activation words",
        "A refusal: a batch of 0 prices no sequences, and `--activation-words 0` leaves the array nothing to read; "
        "each must be at least 1 (on the command line, `--batch 0` and a sweep's `--batches 0` are out of range: "
        "exit 2).",
    ),
    Term(
        "Routed",
        "refusal: a mixture of experts priced without a routing record",
        "A refusal: which experts a pass of a mixture of experts reads depends on how its rows route, a fact the "
        "serving must name: `--routing NAME` or `routing = NAME` in the serving (`facts/routing/uniform.toml` "
        "states uniform routing as an assumption). The line names the records registered here that fit the "
        "checkpoint's router, its expert count and experts a token (`; registered here for 128 experts, 8 a token: "
        "uniform (assumed; any checkpoint)`; `--json`: `expert_count`, `records`). A refusal no record can lift is "
        "said before it: an architecture passprice does not price (`Step`) and a batch the card cannot hold whatever "
        "the routing (`NotResident`: every expert is held). A mixture whose every token reads every expert "
        "(`expert_used_count` = `expert_count`) is not refused: it is priced as dense experts. A sweep whose every "
        "row is refused so ends its one refusal line with this one, records included."
        " `--json`'s `expert_count` is the checkpoint's experts a layer; `records_out_of_scope` the records of that "
        "router whose `checkpoints` scope leaves this checkpoint out (naming one is refused `OutOfScope`).",
        ("expert_count", "records_out_of_scope"),
    ),
    Term(
        "BadRouting",
        "refusal: a routing record that does not describe the checkpoint's router",
        "A refusal: the routing record names another expert count or experts a token than the checkpoint's router, "
        "or shares no router of this size can take (each p_e at most 1: a hot set of hot_experts · E experts takes "
        "at most hot_experts · E / k of the slots), or the checkpoint is dense (no `expert_count`): price a dense "
        "checkpoint without `--routing`, or name the mixture of experts meant. Of a mixture of experts the line "
        "names the records registered for its router, as `Routed` does, the refused one left out "
        "(`; registered here for 32 experts, 4 a token: uniform (assumed; any checkpoint)`; `--json`: "
        "`expert_count`, `records`). A sweep whose every row is refused so ends its one refusal line with this one.",
    ),
    Term(
        "NoHostLink",
        "refusal: host memory asked for on a card without a host link",
        "A refusal: `--host-memory` on a card that has no `host.*` facts; price it without `--host-memory`. A serving "
        "file's own `host_memory = true` on its own card is bad input instead (exit 2), named by the file and key.",
    ),
    Term(
        "BadContexts",
        "refusal: context shares that do not sum to 1, or a position not below its limit",
        "A refusal: a serving's context classes' shares do not sum to 1, or a class's mean position is not below "
        "its limit (at or past it: a pass at a position writes that position's row, so a sequence allowed N "
        "positions holds rows 0 to N-1; raise `--limit` or lower `--position`).",
    ),
    Term(
        "ContextBeyondModel",
        "refusal: a context limit past the checkpoint's own context length",
        "A refusal: the context limit is past the positions the model was trained for (`context_length`); lower "
        "`--limit`. A serving file's own class past it is bad input instead (exit 2), named by the file and "
        "`contexts.N.limit` (`--position` alone keeps the file's limits, and so that line, as does another card: "
        "`--card`, `roofline CARD SERVING`; `new-serving NEW OLD` names OLD's file).",
    ),
    Term(
        "WideCacheOnArray",
        "refusal: attention on the array over a cache wider than 8-bit codes",
        "A refusal: `--attention array` reads 8-bit codes of the KV cache, and the cache's elements are wider "
        "(`--kv-bytes` above 1); give `--kv-bytes 1` or attention on the vector units. A serving file of "
        "`attention = \"array\"` over `kv_bytes` above 1.25 is bad input instead (exit 2), named by the file and "
        "`kv_bytes`.",
    ),
    Term(
        "BadPrefix",
        "refusal: a shared prefix the serving cannot share",
        "A refusal: `--shared-prefix` with a contiguous cache (each sequence holds its own, nothing to share: page "
        "the cache), or a prefix past a context class's position or limit.",
    ),
    Term(
        "FlatCurve",
        "refusal: tokens/s so flat over the batches that the best is a matter of rounding",
        "A refusal of `best`: tokens/s levels off within a relative 1e-12 over so many batches (more than the "
        "50,000 the search may price) that which is best is a matter of rounding, as for a serving whose sequences "
        "hold no memory. Price a batch (`--batch N`), or give the sequences memory that bounds the batch."
        " `--json` gives `top`, the largest batch the bounds reached, and the `tokens_per_s` it levels off toward.",
        ("top",),
    ),
    Term(
        "OverTPOT",
        "refusal: the serving's TPOT cap is below even the smallest batch's TPOT",
        "A refusal of `best` (and of a best lock, `roofline`, `speculate`'s best column) for a serving with a TPOT "
        "cap (`max_tpot` in its file, `--max-tpot SECONDS`): the best batch is sought only among batches whose "
        "time per output token is at most the cap, and even the smallest batch is slower. Raise the cap, or price "
        "a smaller model, a shorter context or a faster card."
        " `--json` gives the smallest `batch` searched, its `tpot_s` and the cap, `max_tpot_s` (and the `stack` under "
        "one).",
        ("max_tpot_s",),
    ),
    Term(
        "StackLacks",
        "refusal: the serving stack has no value for a fact this serving needs",
        "A refusal under `--stack S`: the stack has no figure for a fact the serving needs (a share of a card rate "
        "its kernels reach, a fixed cost); add it to `facts/stacks/S.toml` with its citation, or add measured runs "
        "under the stack that exercise it and run `passprice calibrate --stack S` (a fact no run exercises is not "
        "fitted), or price the limit. Not guessed.",
    ),
    Term(
        "BeyondStack",
        "refusal: the price needs a pass outside where the serving stack's facts hold",
        "A refusal under `--stack S`: the price needs a pass outside the stack's `range.*` facts (`range.rows`: "
        "token-rows a pass; `range.position`: cached positions), where its measured runs cover it; not "
        "extrapolated. Price the limit (without `--stack`), or calibrate the stack on runs there."
        " `calibrate --json`'s `range` gives each range fact's value by its path (`range.rows.min` …), read off the "
        "runs fitted."
        " Its `--json` gives the `stack`, the `path` (`range.rows` or `range.position`), `low` and `high` (where its "
        "facts hold), `needs` (what the price needs) and `what` (that in words); `lock SERVING --stack S` refused so "
        "adds `best_instead`, `true`, when the best price inside the stack's range locks (its line ends with that "
        "`lock … --best --stack S` command).",
        ("range.rows", "range.position",
         "range",
         "needs", "best_instead"),
    ),
    Term(
        "OutOfScope",
        "refusal: a drafting method or routing record used with a checkpoint it does not apply to",
        "A refusal: the record (a drafting method's `[method] checkpoints`, a routing record's `[routing] "
        "checkpoints`) lists the checkpoints it applies to, and this one is not among them (by name, by the same "
        "header, or by the same model: the same content but for the `general.*` keys that name a file); it says what "
        "differs."
        " `--json`'s `applies_to` lists the checkpoints the record applies to.",
        ("applies_to",),
    ),
    Term(
        "LockFloor",
        "refusal: a lock refuses the price: a fact it rests on is weaker than the lock's floor",
        "A refusal by a lock: a fact the price rests on has a provenance below the floor the lock allows for it "
        "(e.g. `estimated` where the lock requires `measured`), named with the fact. For a what-if, price without "
        "the lock (`--no-lock`); to price it under the lock, two ways out: strengthen the fact's provenance "
        "(`passprice fact set` with a stronger `--provenance` and its `--source`; a serving stack's fact, which "
        "`fact set` refuses, in its file under facts/stacks/ by hand or re-fitted by `passprice calibrate --stack S`; "
        "a routing record's in its file by hand), or loosen the lock's floor for it "
        "on purpose through review (`passprice lock --update -o LOCK --force --require PATH=PROVENANCE`: the same "
        "lock, its kind, serving and stack kept, only that floor loosened, which the review shows as a loosened floor; "
        "`lock --update` alone keeps the floors and refuses).",
    ),
    Term(
        "StaleFacts",
        "refusal: lock will not pin a price resting on derived facts that do not follow from their inputs",
        "A refusal by `lock` (and `lock --update`): the price rests on a derived fact whose inputs moved since it was "
        "derived (`fact set memory.bandwidth` without `fact recompute`), the price `diff` calls not a price to "
        "publish, `audit` marks STALE and `check` fails. The line names each such fact, the input that changed and "
        "what it recomputes to, then what writes them from today's inputs (`passprice fact recompute CARD`, "
        "`--draft` for a drafting method's; a routing record's by hand); no lock file is written. Under a serving "
        "stack whose fit no longer follows from today's registry (as `price --stack` warns and `check` fails), "
        "the line names the fit and `passprice calibrate --stack S` as the fix. In `--json`, `stale` lists the facts "
        "(as `audit --json`'s `stale`; a stack's fitted facts as `stack.PATH`) and `fix` the steps.",
        ("fix",),
    ),
    Term(
        "LockMismatch",
        "refusal: --lock names a lock of another serving, card or checkpoint",
        "A refusal: the lock given with `--lock` guards another serving, card or checkpoint than the one priced; a "
        "lock guards only what it was made for.",
    ),
    Term(
        "CheckpointChanged",
        "refusal: the checkpoint a lock pinned now holds other content, or is nowhere in the registry",
        "A refusal: the checkpoint entry a lock pinned now holds other content (an edited tensor table or metadata), "
        "so the lock's floors and price are not this checkpoint's; a pricing command under the lock refuses it, and "
        "`reproduce` does when the entry holds other content (`CheckpointChanged`) or does not read "
        "(`CheckpointMissing`) and no other entry holds the header the lock pinned. Import it again, or re-lock "
        "through review (`passprice lock --update`).",
        ("CheckpointMissing",),
    ),
    Term(
        "ServingChanged",
        "refusal: the serving a lock locks now names another card or checkpoint",
        "A refusal under a lock: the registered serving the lock locks now names another card or checkpoint than "
        "the lock priced, so the lock's floors and price are not this serving's. Review the change and re-lock "
        "(`passprice lock --update`), or price without the lock (`--no-lock`).",
    ),
    Term(
        "LockForged",
        "refusal: a lock whose own pinned inputs do not give the price it records",
        "A refusal under a lock: priced with the code that wrote it, the lock's own pinned inputs do not give the "
        "price it records (a pinned fact or the record edited by hand and the digests recomputed), so no price rests "
        "on it. Every pricing command refuses it (`price`, `best`, `max-batch`, `roofline`, `sweep`, `compare`, "
        "`speculate`, `simulate`, `audit`), as `check` and `reproduce` fail it. Restore the lock from the last "
        "commit that holds it as written, or re-lock it through review (`passprice lock --update`), or price "
        "without it (`--no-lock`). A lock written by other code is not judged so: `reproduce` says which code moved "
        "it.",
    ),
    Term(
        "LockModelForged",
        "refusal: a lock pinning a pricing model no passprice had",
        "A refusal under a lock: its `pricing_model` is the digest neither of the running code nor of any pricing "
        "model passprice lists as having written locks (the package's `pricing_models.json`), so it was typed by "
        "hand, most likely beside a record edited by hand to pass as an upgrade. Every pricing command and "
        "`reproduce` refuse it (exit 1), and `check` fails it. Restore the lock from the last commit that holds it "
        "as written, or re-lock it through review (`passprice lock --update`). A forger naming a real older digest "
        "is refused as `LockUnlisted` in passprice's own checkout; elsewhere the price says which passprice wrote "
        "that code, and `check` and the review judge the lock.",
    ),
    Term(
        "LockUnlisted",
        "refusal: an older-model lock in passprice's own locks/ whose record the list does not name",
        "A refusal under a lock in `locks/` of a checkout of passprice: it pins a listed pricing model other than the "
        "running code's, but its `[lock] digest` is none of the locks passprice wrote with that code there (the "
        "`records` of that model in the package's `pricing_models.json`), so it was edited by hand, its digests "
        "recomputed and its pricing model set to a real older one. Every pricing command and `reproduce` refuse it "
        "(exit 1), and `check` fails it. A lock of one's own registry, or kept outside `locks/`, is never judged "
        "so. Restore the lock from the last commit that holds it as written, or re-lock it through review "
        "(`passprice lock --update`).",
    ),
    Term(
        "LockRefusal",
        "a lock's refusal (LockMismatch, CheckpointChanged, ServingChanged, Lock[Model]Forged, LockUnlisted)",
        "A refusal because of what a lock locks rather than a floor (`LockFloor`): the lock guards another serving, "
        "card or checkpoint (`LockMismatch`), or the checkpoint (`CheckpointChanged`) or serving (`ServingChanged`) "
        "it locks changed since, or its own pins do not give its record (`LockForged`), or it pins a pricing model no "
        "passprice had (`LockModelForged`), or, in passprice's own `locks/`, an older one its record was not written "
        "with (`LockUnlisted`). Exit status 1.",
    ),
    Term(
        "routing",
        "how a mixture of experts' tokens route: a routing record's facts",
        "A mixture of experts (MoE) routes each token to k of its E experts, so which experts a pass reads depends "
        "on its rows: one sequence reads its k experts a layer, many read nearly all. A routing record "
        "(`facts/routing/NAME.toml`, `--routing NAME`) gives it as facts: a hot set of `hot_experts` of the experts "
        "takes `hot_share` of the routed token-slots (a token fills k slots a layer, one for each expert it uses; "
        "1 and 1: uniform, `uniform.toml`, an assumption; the hot set is the hotter one, `hot_share` at least "
        "`hot_experts`, else refused as the two figures swapped). A pass of T "
        "token-rows reads D(T) = Σ_e 1 − (1 − p_e)^T experts a layer (the `experts` line's `N of E experts a "
        "layer`), the mean over routing (the `experts` line's words: an average over how its tokens may route, not "
        "a serving stack's expected price; D(1) = k: one token-row reads exactly its k experts whatever the "
        "routing, so at batch 1 without drafts no routing fact moves a price), p_e the chance expert e "
        "is among a token's k: k · hot_share / (hot_experts · E) for each expert of the hot set, "
        "k · (1 − hot_share) / ((1 − hot_experts) · E) for each of the rest; a price rests on "
        "`routing.hot_experts` and `routing.hot_share`, which a lock can floor. How many sequences fit does not "
        "depend on it (`max-batch` and `kv` need no record); a dense checkpoint takes none (`BadRouting`). A price "
        "shows the record's note, its caveat, as `routing note`; `passprice audit` names the record, its file and "
        "its note. A price's `--json` `routing` object gives `distinct` (the mean experts a layer the pass reads), "
        "`bytes` (theirs) and `experts_held_bytes` (all routed experts' bytes). `sweep --routing NAME` prices every "
        "row on the record, as `price --routing NAME` does, and names it in the row's `routing` column. "
        "In `--json` a routing record's `used` is the experts each token routes to, `file` the record's file. A "
        "mixture whose every token reads every expert (k = E) needs no record, as no routing moves its price: "
        "`price` and `best` say `experts  E of E experts a layer: every token reads every expert` (and that a "
        "`--routing` given is not needed), and their `--json` `every_expert` object gives `experts` (E) and "
        "`routing_unused` (the record named, which no price rests on; null for none).",
        ("routing record", "mixture of experts", "moe", "experts", "expert", "hot_experts", "hot_share", "hot set",
         "routing note", "token-slots", "token-slot", "p_e", "mean over routing", "distinct", "experts_held_bytes",
         "D(T)", "D(1)", "experts a layer", "experts a token",
         "used", "file", "every_expert", "routing_unused"),
    ),
    Term(
        "MLA",
        "multi-head latent attention: a KV cache of one latent and one rope key a position",
        "DeepSeek's multi-head latent attention caches, once a position for every head, a compressed latent "
        "(`kv_lora_rank` elements) and a rope key (`rope.dimension_count`): DeepSeek-V3 holds 61 × (512 + 64) × 2 = "
        "70,272 bytes a position at 2-byte elements, where multi-head attention would hold 4,997,120.",
        ("multi-head latent attention", "latent", "rope key", "latent + rope key"),
    ),
    Term(
        "MXFP4",
        "4-bit float weights in blocks of 32 with one shared scale (gpt-oss's experts)",
        "MXFP4 (GGML type 39): 32 E2M1 weights and one E8M0 scale in 17 bytes; NVFP4 (type 40): 64 weights and four "
        "E4M3 scales in 36 bytes. passprice reads both on the integer array (each code an int8 table value, two "
        "passes) with their scales on the block-scale lanes. `MXFP4_MOE` (`synth --mix MXFP4`) is llama.cpp's mix "
        "of that name: the experts MXFP4, the other matrices Q8_0, norms and routers F32.",
        ("nvfp4", "fp4", "MXFP4_MOE"),
    ),
    Term(
        "term",
        "one of the five parts of a pass's time: memory, host, array, vector, scale",
        "A pass's time has five terms, each the seconds one resource needs for the pass: `memory` (bytes through "
        "card memory), `host` (bytes over the host link), `array` (integer multiply-adds), `vector` (f32 "
        "multiply-adds) and `scale` (block-scale lane cycles). They run overlapped, so the pass takes the largest "
        "(it *binds*). A price table's columns: `time` (the term's seconds), `of pass` (its share of the pass's "
        "seconds), `bind` (the term the pass binds on)."
        " `roofline --json`'s `coefficients` are the terms' lines on the card (seconds): memory ="
        " `memory_shared_s` + batch × `memory_per_sequence_s`, array, vector, scale = batch × `array_s`,"
        " `vector_s`, `scale_s`; `crossing` the batch (a real number) at which the largest arithmetic term"
        " reaches memory (`null` when it never does); `regions` the batches from `first` to `last` that bind on"
        " one term.",
        ("terms", "time", "of pass", "coefficients", "memory_shared_s", "memory_per_sequence_s", "crossing",
         "regions", "first", "last"),
    ),
    Term(
        "MAC",
        "one multiply-accumulate (a multiply-add): the unit of the array's and vector units' work",
        "A multiply-accumulate: one product added to a running sum, the unit a matrix-vector product is counted in "
        "(a matrix of R × C weights is R × C MACs a token-row). Rates are in MAC/s (`array`, `vector`, `tensor.*`, "
        "with prefixes: GMAC, TMAC); `work/pass` gives the multiply-adds a pass does on the array and the vector "
        "units, and the block-scale lane cycles. A datasheet's TOPS or TFLOPS count a MAC as two operations.",
        ("MAC/s", "multiply-add", "multiply-adds", "multiply-accumulate", "GMAC", "TMAC", "MMAC", "work/pass",
         "work", "Mcycle", "Gcycle", "cycles"),
    ),
    Term(
        "state",
        "a recurrent layer's dense state: read and written back in place each pass",
        "The recurrent state of a Gated-DeltaNet layer: heads × key width × value width elements of `--state-bytes` "
        "each (4: f32), held once per sequence whatever its context, read and written back in place each pass "
        "(`streams.rewrite`; \"rewritten in place\" in a price), unless `--flush` carries it for a few tokens in a "
        "log. Beside it each recurrent layer holds a conv ring."
        " `state_bytes_per_element` (`kv --json`) is the bytes of one state element (`--state-bytes`);"
        " `state_per_layer` one recurrent block's dense state, heads × key × value × state bytes (0 without"
        " recurrence).",
        ("recurrent state", "state bytes", "--state-bytes", "state-bytes", "rewritten in place",
         "Gated DeltaNet", "recurrence", "recurrent", "state_bytes_per_element", "state_per_layer"),
    ),
    Term(
        "conv ring",
        "the last conv_kernel − 1 inputs of a recurrent layer's short convolution, kept per sequence",
        "A recurrent (Gated-DeltaNet) layer runs a short causal convolution over its inputs before the recurrence, "
        "so each sequence keeps the last `ssm.conv_kernel` − 1 inputs of the channels it convolves: "
        "(conv_kernel − 1) × channels × `--state-bytes` bytes a layer, whatever the context, read each pass and "
        "appended to by one row a token (`streams.append`)."
        " `ring_per_layer` (`kv --json`) is one recurrent block's ring, (conv_kernel − 1) × channels × state"
        " bytes; `ring_bytes` a sequence's rings at a context.",
        ("ring", "conv", "convolution", "ring_per_layer", "ring_bytes"),
    ),
    Term(
        "windowed attention",
        "attention over the last `window` positions, the token's own included (sliding window); global reads all",
        "Sliding-window attention: a windowed layer (`attention.sliding_window`, by the architecture's layer "
        "pattern: gemma3 has five windowed layers, then one global) attends at most the last `window` positions, "
        "the token's own included (as llama.cpp's and Transformers' masks do): it reads at most `window − 1` of its "
        "KV cache and writes its own, and holds at most `window`, however long the context; a global attention "
        "layer reads every position reached. `kv` lists the two kinds apart.",
        ("sliding window", "sliding-window attention", "window", "windowed", "global attention", "global"),
    ),
    Term(
        "defaulted",
        "a metadata key the header lacks, priced at llama.cpp's default (gemma2's window: 4,096 positions)",
        "A key the header lacks that llama.cpp reads as optional, with a default it runs the model with, is priced "
        "at that default, and the price says so: today only gemma2's `attention.sliding_window`, 4,096 positions "
        "(llama.cpp src/llama-model.cpp at a5410f046c, `load_hparams`: `hparams.n_swa = 4096; // default value of "
        "gemma 2`, then the key read optional). `price`, `best`, `max-batch`, `kv`, `roofline`, `compare`, `audit` "
        "and `simulate` print it on a `defaulted` line (the key, the value, the citation; audit's markdown a "
        "bullet), and their `--json` holds `defaulted`: `[{\"key\", \"value\", \"source\"}]` (absent when nothing "
        "is defaulted); `sweep` prints it once on stderr, one `passprice: defaulted: CHECKPOINT: …` line a "
        "checkpoint, never in a row. The other windowed architectures (gemma3, cohere2, gpt-oss) have no default: "
        "llama.cpp refuses such a header, and so does passprice (`MissingMetadata`).",
        ("default window", "defaulted window"),
    ),
    Term(
        "attention",
        "where attention's products over the KV cache run: the vector units (default) or the array",
        "`--attention vector|array`: where attention's scores (query · key) and weighted sums (weights · value) "
        "over the cached positions run. On the vector units (the default, `attention on vector`) they are f32 "
        "multiply-adds; on the integer array (`attention on array`) they read 8-bit codes of the cache, so the "
        "cache's elements must be 1 byte (`--kv-bytes 1`, else `WideCacheOnArray`). The softmax stays on the vector "
        "units.",
        ("attention on vector", "attention on array", "--attention", "attention on"),
    ),
    Term(
        "scaling",
        "how activations are scaled against a weight block: per-block (default) or sub32 (per 32 elements)",
        "`--scaling per-block|sub32`: activations quantized for the array carry a scale per weight block "
        "(`per-block scaling`, the default), or one per 32 elements (`sub32`). A block-scale lane applies each "
        "scale the integer sums need: under `sub32` a block larger than 32 elements (a K-quant's 256) costs a lane "
        "cycle every 32 elements, so the `scale` term grows; per block, the block's own sub-block scales set it.",
        ("per-block scaling", "per-block", "sub32", "sub32 scaling", "activation scaling", "--scaling"),
    ),
    Term(
        "context",
        "a sequence's positions: the limit it may reach and the mean position it has reached",
        "A serving's contexts: each class of sequences (a share of the batch) has a `limit` (the positions a "
        "sequence may reach: a contiguous cache holds it whole) and a mean `position` reached (what a pass reads of "
        "the KV cache; default limit / 2). `contexts at mean position P of a L limit` in a price says which. A "
        "limit past the model's context length is refused (`ContextBeyondModel`)."
        " `model_context` (`kv --json`) is the checkpoint's own `context_length`, the longest it was trained for"
        " (`null` when the header lacks it).",
        ("contexts", "contexts at mean position", "mean position", "position", "context limit", "--position",
         "context length", "model_context"),
    ),
    Term(
        "limit",
        "a context's limit (the positions a sequence may reach), or the card's limit (the price its facts give)",
        "Two things are called a limit. A context's `limit` (`--limit`; `contexts at mean position P of a L limit` "
        "in a price) is the positions a sequence may reach: a contiguous KV cache holds it whole, and one past the "
        "model's context length is refused (`ContextBeyondModel`; passprice explain context). The card's limit is "
        "the price every command prints: every term at the card's own rates, the largest binding, which no runtime "
        "reaches; `--stack S` prints a serving stack's expected price beside it, and their ratio (`× limit`; "
        "passprice explain stack). A review's lock made under a stack says its `tokens/s` line is the limit's "
        "(`tokens/s  996.1 → 996.1  (limit +0 %)`); the price it pins moves on its `expected` line, as its markdown "
        "row's `+0.2191 % expected (limit +0 %)`.",
        ("limits", "--limit", "the limit", "card's limit", "the card's limit", "limit price"),
    ),
    Term(
        "price",
        "one decode pass's time on one card (pass seconds, tokens/s, TPOT), never money: no $/hour is a fact",
        "What passprice calls a price is what one decode pass of a serving takes on one card: its seconds, the "
        "term it binds on, tokens/s and TPOT, with the facts it rests on (the card's limit; under `--stack S` also "
        "what a runtime is expected to deliver). It is never money: the registry holds no card's rent or purchase "
        "price ($/hour is no fact of a card), so no command ranks cards by cost, and `compare` ranks them by "
        "tokens/s. For the cheapest card meeting a TPOT bound, `passprice compare SERVING --max-tpot SECONDS` "
        "gives each card's best batch within the bound and its tokens/s; with your own $/hour for each card, "
        "dollars a million tokens = $/hour / (0.0036 × tokens/s), the least of them the cheapest card (a card "
        "that meets the bound only at a batch near 100 % `held` leaves the runtime no room: read its row's "
        "`held`, or give `--memory-use`).",
        ("prices", "priced", "cost", "cheapest", "cheaper", "cheap", "money", "dollars", "$/hour",
         "cost per token"),
    ),
    Term(
        "tokens/s",
        "tokens the whole batch emits a second: tokens a pass over the pass's seconds",
        "Throughput: the tokens the whole batch emits a pass (each sequence 1 + its accepted drafts) over the pass's "
        "seconds: tokens/s = batch × `emitted_per_sequence` / pass time (`price --json` and a lock's `[price]` give "
        "all three; the pass time is the largest term, or under a stack its expected pass). r1-qwen7b-h200: 1 × 1 / "
        "1.004 ms = 996.1; the MTP lock qwen35-27b-h200-mtp, drafting 2 tokens: 16 × 2.4875 / 10.92 ms = 3,644.2. "
        "`passprice audit` gives the sentence with its price's numbers. One sequence's wait for each token is the "
        "TPOT. `best` finds the batch with the most tokens/s.",
        ("tokens per second", "throughput", "tokens_per_s"),
    ),
    Term(
        "bytes/pass",
        "bytes a pass reads: the weights once for the batch, and each sequence's own",
        "The bytes a pass moves through card memory: the weights and embedding rows, read once and shared by the "
        "batch (with `--prefix-read-once`, the shared prefix's KV too), and each sequence's own bytes (its KV "
        "cache up to its position, recurrent state, log and conv ring), of which those rewritten in place (a "
        "recurrent state) are shown apart. Of a mixture of experts, a pass reads the weights of the experts its rows "
        "route to, not all it holds: D(T) of its E experts a layer (the `experts` line; `passprice explain "
        "routing`), so `weight_bytes` grows with the batch up to every expert's, and `held` counts them all. In "
        "`--json`: `weight_bytes` (shared by the batch), `sequence_bytes` (one sequence's) and `rewrite_bytes` (of "
        "those, rewritten in place).",
        ("bytes", "weight bytes", "sequence bytes", "per sequence", "shared by the batch", "embedding rows",
         "weights and embedding rows", "rewrite_bytes"),
    ),
    Term(
        "ridge",
        "work per byte at which a datapath takes as long as the memory",
        "A ridge point (roofline model): a datapath's rate over the memory's read rate, in MAC/B (or cycle/B). A "
        "pass whose work per byte is below a datapath's ridge is memory-bound for that datapath."
        " `roofline --json`'s `ridges` gives a ridge per datapath: its `rate`, `work` (MAC or cycle), the memory"
        " `bandwidth` (B/s), the `share` of it a pass reads at and the fact that share is (`share_path`,"
        " `streams.read`), and the `ridge`.",
        ("ridge point", "roofline", "ops:byte", "ridges", "share_path", "bandwidth"),
    ),
    Term(
        "stack",
        "a serving runtime of a build range, and what it delivers of the card's limit",
        "A serving stack (facts/stacks/NAME.toml) is a runtime of a build range (llama.cpp CUDA, vLLM, TensorRT-LLM "
        "...) described by cited facts: fixed seconds a pass and a layer, the share of each card rate its kernels "
        "reach, whether its terms overlap or add (terms.serial), and the memory it keeps for itself. The price without "
        "a stack is the card's limit; --stack S prints the stack's expected price beside it, and the ratio. passprice "
        "calibrate fits a stack's facts to measured runs (registry/measurements/), reporting its error on cards and "
        "checkpoints it held out; passprice validate prices every measured run both ways. Its facts hold only where "
        "its runs were measured (range.rows: token-rows a pass; range.position: cached positions): a price outside is "
        "refused (BeyondStack), and best --stack seeks its best batch only inside. Cards and the ratio are not "
        "bounded so: a price's `fitted span` line gives the least and largest measured / limit ratio of the runs its "
        "facts were fitted to, and a price whose expected / limit ratio lies outside it is an extrapolation of the "
        "fit, said on stderr too (`audit` under a stack prints the line in its body, with a `fit reach` line for a "
        "card or kind of model the runs never measured; its `calibrated on` section names the runs a stack was "
        "fitted to and, after `the fit reads`, the card facts their limits read with the sources those cite). A "
        "`× limit` column (compare --stack, speculate --stack) is "
        "the expected tokens/s "
        "over the card's limit: in compare, the limit at its own best batch, which may be larger than the stack's. "
        "In `--json`: `expected` (the expected price), `ratio` (its tokens/s over the limit's), `stack_span` (the "
        "fitted span), `stack_fit` (`null` unless its fit no longer follows from today's runs); a sweep's "
        "`expected_tokens_per_s`, `expected_pass_s`, `expected_binds`, `expected_provenance` and `expected_refusal` "
        "columns are the expected price's. Audits and reviews follow a stack's fit through the cards its runs are "
        "priced on: `fitted_on_cards` (the card facts a changed fact reaches the fit through) and an audit's "
        "`card_facts` (the card facts the fit reads and their sources; `unread`: a fit card whose file does not "
        "read, its facts not counted). "
        "`audit --source --json`'s `fitted_through` is each stack fitted to runs pricing a routing record citing the "
        "source (`{stack, routing}`), and `fitted_on_cards`' `paths` the card facts those runs' passes read."
        " `--json`'s `stack_span` is that line: how many `runs` were fitted, their least and largest measured / limit "
        "ratio (`low`, `high`), this price's `ratio` (at `batch` when the limit shown lies at another) and `inside`, "
        "whether the ratio lies in the span; `stack_reach` (audit) its `fit reach` lines, and `calibration` the "
        "`calibrated on` section: each measurement `file` the fit read with its `source`, `runs`, `cards` and "
        "`card_facts`. "
        "`calibrate --json`'s `written` is the stack file the fit was written to (`null` with `--dry-run`; `lock "
        "--json` says `written: false` of a lock it did not write). A price's `stack_fit` under `--lock L` made "
        "under the stack adds `pinned_apart`: the stale stack facts L pinned with another value, or fitted from other "
        "runs.",
        ("serving stack", "expected", "expected price", "calibrate", "validate", "fitted span", "× limit",
         "memory.reserved", "calibrated on", "fit reach", "ratio", "stack_span", "stack_fit", "expected_tokens_per_s",
         "expected_pass_s", "expected_provenance", "expected_refusal", "fitted_on_cards", "card_facts",
         "unread",
         "fitted_through", "paths",
         "low", "high", "inside", "stack_reach", "calibration", "written", "pinned_apart"),
    ),
    Term(
        "by hand",
        "audit's line giving tokens/s as batch × emitted a sequence / pass time, with the price's numbers",
        "`passprice audit` prints, under its table, the price's last step with its own numbers, so it can be "
        "checked by hand: `by hand: tokens/s = batch × emitted_per_sequence / pass time = 1 × 1 / 1.004 ms = 996.1 "
        "(the pass time is the largest term, memory)`; under a stack, the expected pass. `--json` gives it as "
        "`by_hand`. The README's *Checking a price by hand* takes the memory term apart the same way.",
        ("by_hand", "checking a price by hand"),
    ),
    Term(
        "extrapolation",
        "a stack's expected price outside the measured runs its facts were fitted to",
        "A serving stack's facts are fitted to measured runs (`passprice calibrate`). A price the runs do not cover "
        "is an extrapolation of the fit: outside the stack's `range.*` facts (token-rows a pass, cached positions) it "
        "is refused (BeyondStack); on a card or a kind of model no run measured (`fit reach`: extrapolates across "
        "cards), or at an expected / limit ratio outside the least and largest its runs gave (`fitted span`), it is "
        "priced, and said to be extrapolated on stderr and in `audit` (the held-out error `calibrate` measured says "
        "how far such a price may be off). passprice never extrapolates silently.",
        ("extrapolated", "extrapolates", "extrapolate", "extrapolates across cards"),
    ),
    Term(
        "batch",
        "the sequences one pass carries together (--batch, a serving's batch)",
        "The batch: how many sequences advance together in one pass, each by its verified token and drafted ones, "
        "every weight read once for all of them (`--batch N`, a serving's `batch`; `validate`'s column: the batch a "
        "measured run was served at). More sequences share the weights' bytes, so tokens/s rises with the batch until "
        "a term other than memory binds or memory runs out: `best` finds the best batch.",
        ("batches", "--batch", "batch size"),
    ),
    Term(
        "best batch",
        "the batch with the most tokens/s that fits (passprice best), within a TPOT cap if one is given",
        "`passprice best` prices batches to find the one that emits the most tokens a second (the best batch) among "
        "those that fit the card's memory and on-chip memory (the largest that fits: `max-batch`), and, with a TPOT "
        "cap, whose time per output token is within it. Batches within a relative 1e-12 of each other's tokens/s tie, "
        "and a tie goes to the smaller batch: past the batch where an arithmetic term binds, tokens/s stays level "
        "(DeepSeek-V2-Lite on an H200 binds on vector from batch 144 on, 34,433.1 tokens/s to batch 1,036), so the "
        "best is where the level starts, its TPOT the least. `roofline` marks the best and the largest batch (`best / "
        "largest`); `speculate` the best draft length (`best`), each row at its own batch or at `--best` batches.",
        ("best", "best / largest", "largest", "largest batch", "max-batch", "max batch", "best draft length"),
    ),
    Term(
        "fact",
        "one figure passprice prices with: value, unit, provenance, source and locator",
        "A fact is one figure of a card (`facts/cards/`), a drafting method, a routing record or a serving stack, "
        "named by its path (`memory.bandwidth`, `streams.read`, `stack.share.read`): its `value` in a `unit`, its "
        "provenance, the source and locator it is read from, and a note or derivation where there is one. `fact "
        "show` prints one; `fact set` edits one; a lock pins each by digest."
        " `base_value` (`audit --json`) is the value in base units (4.8 TB/s is 4.8e12 B/s)."
        " `fact show --history --json` gives its `versions`, newest first: each commit's `commit`, `date`, `author`, "
        "`subject`, the `fact` as it left it (or the `error` that kept it from reading) and what `changed`: the parts "
        "(`value`, `unit`, `provenance`, `citation`, `note`, `derivation`; `new` for the first; after versions "
        "that do not read, those since the last that does, `reads again` when none changed or none before reads), "
        "as the text line says them in `fact set`'s and the review's words (`citation, note changed, derivation "
        "removed`; after such versions `reads again: value changed since COMMIT, the last version that reads`); "
        "`older_not_read` marks the oldest read when older commits were not (`older_not_read_why`: past 2,000 commits,"
        " or a shallow clone), `merged_by` the merge commit that brought a branch's version, `merged_branch_not_read` "
        "a merge past the newest 32 whose branch was not read.",
        ("facts", "value", "fact path", "path", "unit", "base_value",
         "versions", "author", "merged_by", "merged_branch_not_read", "older_not_read", "older_not_read_why"),
    ),
    Term(
        "note",
        "a fact's caveat: the basis of an estimate, what a device reports, what differs from the source",
        "A fact's `note` (`fact set --note`) says what a reader of its figure must know and the citation does not: "
        "the basis of an estimate, what a device reports beside the datasheet, a convention. `audit` prints each "
        "under `notes`, and a source record's note its caveat (`notes of the cited documents`).",
        ("notes", "notes of the cited documents"),
    ),
    Term(
        "card",
        "an accelerator's facts: facts/cards/NAME.toml (memory, bandwidth, datapath rates, on-chip memory)",
        "A card is an accelerator as facts (`facts/cards/NAME.toml`): its memory and bandwidth, the shares of it "
        "each kind of traffic sustains (`streams.*`), its datapaths' rates (`array`, `vector`, `scale`, "
        "`tensor.*`), on-chip memory and the host link, each cited. `passprice cards` lists them (its `memory "
        "is` column: `datasheet` for a `published` capacity, the figure the maker markets in decimal GB, `device` "
        "for a `measured` one, what the device reports, nvidia-smi's MiB, some GB more on one part: the H100 "
        "SXM5's 80 GB beside the H100 PCIe's 85.52 GB; `compare` names both kinds when its cards mix them, and "
        "`max-batch` says which its bound rests on); `kv` and `calibrate` show one a row."
        " `compare --json`'s `own_card` is the serving's own card; `title` in any `--json` is the full display"
        " name of the record it sits in (a card, a serving, a checkpoint, a source).",
        ("cards", "card file", "accelerator", "own_card", "title"),
    ),
    Term(
        "checkpoint",
        "a model as its GGUF header: a registry entry (registry/checkpoints/) or a .gguf path",
        "A checkpoint is a model's weights as a GGUF header describes them (tensor names, shapes and types; layers, "
        "heads, context length), registered as an entry (`registry/checkpoints/NAME.toml`, `passprice import`) or "
        "named by a `.gguf` path. passprice prices the bytes and work its tensors give; a lock pins its `content`. "
        "`passprice checkpoints` lists them."
        " `name` in a record's `--json` (a checkpoint's, a card's) is its registry name.",
        ("checkpoints", "checkpoint entry", "entry", "model", "name"),
    ),
    Term(
        "serving",
        "a named way of serving a checkpoint on a card: registry/servings/NAME.toml (batch, contexts, choices)",
        "A serving (`registry/servings/NAME.toml`) names a checkpoint and a card and every choice a price depends "
        "on: the batch, the contexts (limit and mean position), the KV cache's paging and element bytes, drafting, "
        "routing, host memory, a TPOT cap. Pricing commands take its name, options override a field (a what-if), "
        "and a lock pins it whole. `passprice servings` lists them. A sweep's rows name theirs in the `serving` "
        "column, empty (`null` in JSON) for a checkpoint swept with no serving (`sweep --checkpoint C`: C on every "
        "card, at price's defaults). Its `description` (one line, the `servings` column) says what it is for; a "
        "lock pins it too."
        " `new-serving --json` gives the serving's name, the `path` written and its `document`, the file's fields as "
        "written.",
        ("servings", "serving file", "description",
         "document"),
    ),
    Term(
        "lock digest",
        "a lock's [lock] digest: sha256 over everything it pins, what a citation of its price names",
        "A lock's `[lock] digest` is the sha256 of everything it holds but the digest (every pinned fact, the "
        "checkpoint's content, the serving, the policy, the pricing model's digest and the recorded price), so one "
        "digest names the price and all it rests on: cite it with the lock's name. `audit LOCK` prints it on its "
        "`lock` line and `reproduce LOCK` on its `lock digest` line (`lock_digest` in `--json` of both), checked "
        "against the file; `audit DIGEST` and `reproduce DIGEST` name the lock that holds it.",
        ("digest", "lock_digest", "[lock] digest"),
    ),
    Term(
        "measured run",
        "one measured tokens/s of a runtime on a card and checkpoint (registry/measurements/)",
        "A measured run (`registry/measurements/*.toml`) is a published benchmark's tokens/s for one checkpoint on "
        "one card under one runtime, at its batch and the cached positions its tokens spanned (`positions`), with its "
        "source. `validate` prices each run both as the card's limit and under its stack's expected price; "
        "`calibrate` fits a stack's facts to them (`worst run`: the run with the largest |error|).",
        ("run", "runs", "measured runs", "worst run"),
    ),
    Term(
        "positions",
        "cached positions: tokens a sequence's KV cache holds (validate: the span a run's tokens covered)",
        "A position is one token a sequence has reached, held in its KV cache (a K and a V row a layer). `kv` gives, "
        "for each layer kind, the positions a sequence holds at each context (a windowed layer at most its window) "
        "and their bytes; `validate` the positions a measured run's generated tokens spanned (from its prompt's "
        "length to its last token).",
        ("cached positions",),
    ),
    Term(
        "bytes/token",
        "kv: the KV bytes one cached position adds, by layer kind (K and V rows of every block)",
        "`passprice kv`: for each layer kind (global or windowed attention, latent attention, recurrent), its "
        "`layers`, `KV heads` and the bytes one cached position adds (`bytes/token`: K and V rows × heads × head width "
        "× element bytes, over its layers); then, at each context, the positions and bytes each kind holds and a "
        "sequence's total (`per sequence`, with the same in binary units, `(binary)`: MiB, GiB), and how many "
        "sequences fit on each card."
        " In `kv --json`: `per_token` the bytes one cached position adds, by layer kind, `per_token_total` their"
        " sum over the main blocks and `draft_per_token` over the draft blocks; each of `layers` gives its"
        " `index` (its block number), kind and `bytes_per_position`; each context's `kinds` gives by layer kind"
        " its layers, positions and bytes. (`index` in `simulate --json`'s `records` is a request's place in the"
        " trace.)",
        ("layer kind", "layers", "KV heads", "(binary)", "bytes per token", "per_token", "per_token_total",
         "draft_per_token", "bytes_per_position", "kinds", "index"),
    ),
    Term(
        "datapath",
        "a unit of the card doing a pass's work at a rate: the integer array, the vector units, the scale lanes",
        "A datapath does a kind of a pass's work at its `rate`: the integer matrix array (MAC/s: `array`), the f32 "
        "vector units (MAC/s: `vector`) and the block-scale lanes (cycle/s: `scale`); the float-matrix rates "
        "(`tensor.*`) join the array's term. `roofline` gives each datapath's rate and ridge point.",
        ("datapaths", "rate", "rates"),
    ),
    Term(
        "intensity",
        "arithmetic intensity: a pass's work per byte of memory traffic, against a datapath's ridge",
        "Arithmetic intensity (roofline model): a pass's work on a datapath over the bytes it moves, in MAC/B (array "
        "and vector) or cycle/B (scale lanes), the bytes counted as read-equivalent bytes (the memory term's seconds "
        "× `memory.bandwidth` × `streams.read`: the table's `read-eq bytes`, beside the card-memory `bytes moved`). A "
        "datapath binds once its intensity reaches its ridge; `roofline` gives it by batch (`array MAC/B`, `vector "
        "MAC/B`, `scale cyc/B`)."
        " `roofline --json`'s `points` gives one priced batch each: `bytes_moved` (card-memory bytes a pass"
        " moves), `read_equivalent_bytes` (memory_s × bandwidth × streams.read), the intensities per"
        " read-equivalent byte (`array_macs_per_byte`, `vector_macs_per_byte`, `scale_cycles_per_byte`) and per"
        " byte moved (`array_macs_per_byte_moved`, `vector_macs_per_byte_moved`), with the pass's seconds,"
        " tokens/s and bind.",
        ("arithmetic intensity", "MAC/B", "cycle/B", "cyc/B", "array MAC/B", "vector MAC/B", "scale cyc/B",
         "bytes moved", "read-eq bytes", "array_macs_per_byte", "vector_macs_per_byte", "scale_cycles_per_byte",
         "read_equivalent_bytes", "array_macs_per_byte_moved", "vector_macs_per_byte_moved", "points"),
    ),
    Term(
        "fitted",
        "calibrate: a stack fact's value fitted to its measured runs, beside its value before",
        "`passprice calibrate --stack S` fits each of the stack's facts (overheads, shares, terms.serial) to its "
        "measured runs and prints it `fitted`, beside its value `before` (as the stack file holds it); a fact no run "
        "exercises is `not fitted`. Its error table gives the `mean` and `max` of |error| of tokens/s "
        "((expected − measured) / measured) in sample and held out, and the `worst run`. In a review's `--json`, a "
        "lock's `cites` entry says `fitted: true` of such a fact: its source states no figure of it, its check is the "
        "fit. "
        "A fitted fact's `derivation` names the measured `figure` (`tokens_per_s`), its `tolerance` against a re-fit "
        "and its `errors`: `in_sample_mean` and `in_sample_max` of |error|, and `checkpoint_out_mean` and "
        "`checkpoint_out_max` on checkpoints held out."
        " `card_out_mean` and `card_out_max` are the same on cards held out. `calibrate --json` gives each hold-out's "
        "`worst` (the run it misses most) and `cautions`: what not to read into the fit, a line each (fewer runs than "
        "facts fitted, a hold-out not possible, no `memory.reserved`).",
        ("before", "not fitted", "|error|", "|error| of tokens/s", "mean", "max",
         "in_sample_mean", "in_sample_max", "checkpoint_out_mean", "checkpoint_out_max", "figure", "tolerance",
         "card_out_mean", "card_out_max", "worst", "cautions"),
    ),
    Term(
        "trace",
        "simulate's request trace: each request's arrival, prompt and output tokens (a JSON-lines file)",
        "`passprice simulate --trace FILE` serves a request trace (JSON lines: each request's arrival time, prompt "
        "tokens, output tokens, optional `prefix_id`) on a serving; its `trace` line counts the requests and tokens "
        "and its `engine` line gives the simulated server's limits: token-rows a step (`--chunk`, and what on-chip "
        "memory holds), sequences (`--max-batch`), the KV cache and what admission reserves."
        " `simulate --json`'s `trace` counts its requests, `prompt_tokens` and `output_tokens` (all requests'),"
        " the `longest` request (prompt + output tokens), `last_arrival_s` and `shared_prefixes`; `records`"
        " (always, under `--json`) gives a row per request, its place (`index`) and its `line` in the trace file"
        " (`null` for a synthetic trace), its prompt and output tokens and its times."
        " `--synthetic N` draws a trace instead (`--seed`, `--rate`), as its `trace` line says: `Poisson arrivals`"
        " at the rate a second (exponential gaps), `lognormal prompts` (their median and sigma, the spread of the"
        " log), `Pareto outputs` (scale, the least drawn, and alpha, the tail index); a request longer than the"
        " serving's limit is `cut to fit`: its prompt to at most half the limit (less a shared prefix), its output"
        " to the rest, the line counting the prompts and outputs cut.",
        ("request trace", "engine", "requests", "prompt_tokens", "output_tokens", "longest",
         "last_arrival_s", "records", "line", "synthetic trace", "Poisson", "lognormal", "Pareto",
         "cut to fit"),
    ),
    Term(
        "changed",
        "a review's list of what a change edited: facts, files, servings, the pricing model",
        "In a review (`passprice diff`), what a change edits: each changed fact (old → new value, provenance, "
        "citation, note, derivation), file, checkpoint, serving, lock policy and the pricing model; under a lock, "
        "`changed` names the facts it rests on that the change edited. "
        "In its `--json`, each file of `files` says its `status` (`added`, `removed`, `changed` or `unchanged`; a "
        "lock's `status` is its lock file's, and `reproduce`'s `checkpoint.status` says where the pinned content is),"
        " whether it was `compared` (both sides read it), its `errors` on each side (the first 20 of all files, the "
        "rest counted in `errors_left_out`), `meta` (the keys of a card's or drafting method's own table that "
        "changed), `content_changes` and `layout_changes` (what differs in a checkpoint entry's content, its tensor "
        "table and metadata, and in its layout, tensor offsets and sizes, which no price reads) and `renamed` (the "
        "other path of a file moved: a record renamed, a measurement file under the same bytes, a checkpoint entry "
        "under the same content); "
        "each changed fact gives its `old` and `new` entry, the `fields` that differ and `relative_change` (new / "
        "old − 1 of its value in base units; of a lock, tokens/s after / before − 1); `removed` lists the locks the "
        "change removes.",
        ("change", "changes",
         "status", "compared", "errors", "errors_left_out", "content_changes", "layout_changes", "meta",
         "renamed", "removed", "old", "new", "fields", "relative_change"),
    ),
    Term(
        "not locked",
        "a review's servings whose price moves but that no lock pins: informational, never a failure",
        "In a review (`passprice diff`), the registered servings whose price the change moves while no lock pins "
        "them: `NOT LOCKED`, listed for information (nothing can fail for them), each with the command that would "
        "lock it (`lock it`: `passprice lock SERVING -o locks/SERVING.lock.toml`)."
        " `--json`'s `unlocked` gives each with its `lock_command` (`null` when HEAD refuses its price); a serving "
        "HEAD adds (`added_servings`) gives `serves` (its card, checkpoint, batch and contexts, in words), its price "
        "`after`, its `locks` and its `lock_command` too.",
        ("NOT LOCKED", "lock it", "servings no lock pins", "unlocked",
         "lock_command", "serves"),
    ),
    Term(
        "explain",
        "passprice explain WORD: the entry this glossary gives a word passprice prints",
        "`passprice explain WORD` prints the term WORD names (its name or an alias, case, `-` and `_` ignored): its "
        "name, its one line, the other spellings it is looked up by, then its definition; without WORD, every term "
        "with its one line. `--json` gives `term`, `short` (the one line), `definition` and `aliases`; without WORD, "
        "`terms`, each term's by its name.",
        ("passprice explain", "glossary", "short", "definition", "aliases"),
    ),
    Term(
        "registry",
        "the folders passprice reads: facts/, registry/, locks/, sources/ (passprice init makes one of your own)",
        "A registry is what passprice prices from: `facts/` (cards, drafting methods, routing records, stacks), "
        "`registry/` (checkpoints, servings, measurements), `locks/` and `sources/`; this checkout's, or one of your "
        "own (`passprice init`, `--root`). A source of kind `registry` is a document inside it (a review's "
        "decisions), dated by the registry's own history. "
        "`passprice check --json` validates all of it: `ok`, `frozen` (`--frozen` given), `files` (how many were "
        "read), `kinds` (how many of each: `cards`, `drafts`, `routings`, `stacks`, `checkpoints`, `measurements`, "
        "`sources`, `servings`, `locks`), `problems`, `warnings` (lines that fail nothing) and `disagreements` (locks"
        " of one serving recording different prices)."
        " `init --json` gives the new registry's `path`, its record `folders`, those `copied` in with their files (the"
        " reference data; with `--examples` the checkpoints, servings and locks too), the `files` written, the "
        "`requirement` line CI installs passprice by and where it was read (`requirement_origin`: `given`, `vcs`, "
        "`archive`, `local` or `unknown`), `advice` (what to do before CI can "
        "install it, else `null`), `caution` (written below a git repository's top: its workflow and hook never run; "
        "else `null`), `kept` (files there already, left alone), `attributes` (a `.gitattributes` of yours left alone "
        "that lacks lines init writes: which to add, else `null`) and `then`, what to do first: commit it to the "
        "default branch.",
        ("registries", "registry document", "--root",
         "ok", "frozen", "files", "measurements", "routings", "warnings", "disagreements",
         "folders", "copied", "requirement", "requirement_origin", "advice", "caution", "kept", "attributes",
         "then"),
    ),
    Term(
        "tensor.f16",
        "a card's dense F16 tensor-core rate: F16 matrices ride it instead of the vector units",
        "tensor.f16, tensor.bf16, tensor.f8: a card's dense float-matrix rates (MAC/s), from its datasheet. Where a "
        "card has the rate for a matrix's type, the matrix rides it (its seconds join the array term, the matrix "
        "datapath; the price shows them as float_matrix_macs); where it has none, the vector units.",
        ("tensor.bf16", "tensor.f8", "tensor", "float_matrix_macs"),
    ),
)

#: Every term by its name.
TERMS: dict[str, Term] = {t.name: t for t in _TERMS}


def _key(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text.strip().lower().lstrip("-"))


_INDEX: dict[str, Term] = {}
for _t in _TERMS:
    for _name in (_t.name, *_t.aliases):
        _INDEX.setdefault(_key(_name), _t)

#: ``--json`` keys that mean different things in different commands, each command's entry by the command (walk95:
#: ``explain .locks[0].breaks``, a review's key, printed ``withdrawn``'s entry, which defines ``audit --source``'s):
#: :func:`lookup` refuses them naming each, and :func:`entries` gives each command's term. A key here is no alias.
_SHARED: dict[str, tuple[tuple[str, str], ...]] = {
    "breaks": (("diff --json", "floors hold"), ("audit --source --json", "withdrawn")),
    "locks.breaks": (("diff --json", "floors hold"), ("audit --source --json", "withdrawn")),
}
_SHARED = {_key(k): v for k, v in _SHARED.items()}

#: The most dotted keys a name of :data:`_INDEX` has (3 when written): :func:`lookup` tries only the tails of a
#: ``--json`` path this long or shorter, since no longer one is a name. It tried every tail, each joined anew:
#: ``explain`` of a 120,001-character path ``.a.a.a…`` took 110.7 s wall on the loaded 2-core machine (a path of
#: 16,001 keys: 7.3 s; attack80); now 0.7 s, the same term or refusal for 20,000 drawn paths.
_MOST_KEYS = max(name.count(".") + 1 for name in (*_INDEX, *_SHARED))


def _refuse_empty_key(text: str) -> None:
    """One rule for an empty key in a dotted path, as a card's fact path has it (``fact show CARD streams.rewrite.``:
    "not a card fact path; did you mean streams.rewrite?"): a path ``text`` with two dots together or one at its end
    (``.calibration[0]..card_facts.unread``, ``streams.rewrite.``) is refused by name, the path without its empty
    keys offered when it names a term. One leading dot is jq's (``.calibration[0]``), not an empty key; ``[N]`` is a
    key's index. Raises :class:`InputError`. Before (left56, session 42), ``streams..rewrite`` was refused but
    ``streams.rewrite.`` and ``.calibration[0]..card_facts.unread`` explained, their empty keys skipped."""
    given = text.strip()
    keys = given.removeprefix(".").split(".")
    if "." not in given or all(keys):
        return
    offered = ""
    if any(keys):
        path = ("." if given.startswith(".") else "") + ".".join(key for key in keys if key)
        with contextlib.suppress(InputError):
            lookup(path)
            offered = f"; did you mean {escaped(path)}?"
    raise InputError(f"explain: {shown_value(text)}: an empty key in the path (two dots together, or one at its "
                     f"end){offered} (passprice explain lists the terms)")


def lookup(text: str) -> Term:
    """The term ``text`` names (its name or an alias, case, ``-``/``_`` and a leading ``--`` ignored; a fact path
    by its record's prefix, an audit row's by its index; a ``--json`` key's dotted path, ``[N]`` indices and all,
    by the longest tail of it a term names, ``.locks[0].held`` by ``locks.held``, the review's). Raises
    :class:`InputError` naming the closest terms when none matches, and naming each command's entry when the key is
    one that commands use for different things (:data:`_SHARED`: ``.locks[0].breaks``, a review's or
    ``audit --source``'s)."""
    shared = entries(text)
    if len(shared) == 1:
        return shared[0][1]
    named = ", ".join(f"{command}'s is `passprice explain '{term.name}'`" for command, term in shared)
    raise InputError(f"explain: {shown_value(text)} is a --json key of more than one command, each with its own "
                     f"entry: {named}")


def entries(text: str) -> list[tuple[str, Term]]:
    """The entries ``text`` names, each with the command whose ``--json`` key it defines: one, ``("", TERM)``, for
    a word or a key one meaning (:func:`lookup`'s rules); one per command for a key of :data:`_SHARED`
    (``breaks``, ``.locks[0].breaks``: ``diff --json``'s ``floors hold``, ``audit --source --json``'s
    ``withdrawn``). Raises :class:`InputError` as :func:`lookup` does when none matches."""
    key = _key(text)
    if _INDEX.get(key) is None and key not in _SHARED and "." in key and not key.startswith(
            ("routing.", "stack.", "draft.")):
        keys = re.sub(r"\[[0-9]*\]", "", key, flags=re.ASCII).split(".")
        keys = keys[1:] if keys[0] == "" else keys  # jq's leading dot (another empty key: refused by _term)
        if all(keys):  # the longest tail a key of _SHARED is, unless a longer one names a term (_term's rule)
            tails = [".".join(keys[i:]) for i in range(max(0, len(keys) - _MOST_KEYS), len(keys))]
            at = next((i for i, t in enumerate(tails) if t in _SHARED), None)
            if at is not None and not any(t in _INDEX for t in tails[:at]):
                key = tails[at]
    if key in _SHARED:
        return [(command, TERMS[name]) for command, name in _SHARED[key]]
    return [("", _term(text))]


def _term(text: str) -> Term:
    found = _INDEX.get(_key(text))
    if found is None:
        _refuse_empty_key(text)
    if found is None:  # a fact path as a lock or `rests on` names it: routing.hot_share, stack.share.read
        for prefix in ("routing.", "stack.", "draft."):
            if _key(text).startswith(prefix):
                found = _INDEX.get(_key(text)[len(prefix):])
                break
    if found is None:  # a path an audit row prints: draft.acceptance.2, stack.range.rows.min (walkthrough 35)
        path = re.sub(r"^(routing|stack|draft)\.", "", _key(text))
        # ASCII digits alone (re.ASCII): `\d` took draft.acceptance.١ (an Arabic-Indic one) as draft.acceptance.1,
        # which no audit row prints (attack round 52)
        found = _INDEX.get(re.sub(r"\.([0-9]+|min|max)$", "", path, flags=re.ASCII))
    if found is None and "." in text:
        # a --json key by its path, as jq writes it (`.calibration[0].card_facts.unread`): its own key, the last
        # (attack69: `explain card_facts.unread` said "not a term", where `explain unread` explains it)
        # the longest tail of the path a term names first (walk59: `.pricing_model.commit`, the commit whose code
        # wrote a lock, read as its last key, `commit`, explained a source's "at commit")
        keys = re.sub(r"\[[0-9]*\]", "", _key(text), flags=re.ASCII).rstrip(".").split(".")
        tails = (".".join(keys[i:]) for i in range(max(0, len(keys) - _MOST_KEYS), len(keys)) if all(keys[i:]))
        found = next((_INDEX[tail] for tail in tails if tail in _INDEX), None)
    if found is not None:
        return found
    close = difflib.get_close_matches(_key(text), list(_INDEX), n=6, cutoff=0.6)
    # Only the matches about as close as the closest (walk106: `explain bindz` offered "binds, out of date already on
    # BASE, source", the last two terms of the aliases "behind" and "kind", far further off than "bind")
    ratio = {c: difflib.SequenceMatcher(None, _key(text), c).ratio() for c in close}
    close = [c for c in close if ratio[c] >= max(ratio.values(), default=0.0) - 0.1]
    def plain(word: str) -> str:
        return re.sub(r"[\s_/-]+", "", word).removesuffix("s")

    # an alias is shown with the term it is explained under (`roofline (ridge)`): the term's name alone read as no
    # match of what was typed
    shown = {c: _INDEX[c].name if plain(c) == plain(_key(_INDEX[c].name)) else f"{c} ({_INDEX[c].name})"
             for c in close}
    seen: dict[str, str] = {}
    for c in close:  # a term and its alias once, as one name
        seen.setdefault(_INDEX[c].name, shown[c])
    names = list(seen.values())[:3]
    hint = f"; did you mean {', '.join(names)}?" if names else ""
    raise InputError(
        f"explain: {shown_value(text)} is not a term passprice defines{hint} (passprice explain lists them)"
    )


def headline(term: Term, asked: str | None = None) -> tuple[str, str]:
    """The name and one line ``explain`` opens with for ``asked`` (the word or ``--json`` key given, found under
    ``term``): an alias of :attr:`Term.heads` (``alone``, ``.locks[0].alone``) by its own name and line, said to be
    explained under the term; else the term's. Raises nothing."""
    if asked is not None:
        keys = re.sub(r"\[[0-9]*\]", "", _key(asked), flags=re.ASCII).split(".")
        own = dict(term.heads)
        for alias in (k for k in reversed(keys) if k):
            if alias in own:
                return alias, f"{own[alias]}; explained under {term.name}"
    return term.name, term.short


def text(term: Term, asked: str | None = None) -> str:
    """One term for ``passprice explain TERM``: the name, its one line (:func:`headline`: an alias's own where it
    names another notion), then the definition."""
    name, short = headline(term, asked)
    others = [a for a in (term.name, *term.aliases) if a != name] if name != term.name else list(term.aliases)
    also = f"  (also: {', '.join(others)})" if others else ""
    return f"{name}: {short}{also}\n\n{term.long}"


#: The most characters a term's one line shows in ``explain``'s listing (the longest written is 103).
SHORT_WIDTH = 104


def whole_words(text: str, width: int = SHORT_WIDTH) -> str:
    """``text`` as it is when it fits ``width`` characters, else cut at the last word boundary that leaves room for
    "…" (a one-line summary is never cut mid-word: UnknownType's read "so its bytes are" when its own text was)."""
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return f"{cut}…"


def listing() -> str:
    """Every term with its one line (:func:`whole_words`), for ``passprice explain`` without a term."""
    width = max(len(t.name) for t in _TERMS)
    return "\n".join(f"{t.name.ljust(width)}  {whole_words(t.short)}" for t in _TERMS)


def markdown() -> str:
    """The README's glossary: one bullet a term, its name in bold, then the definition."""
    return "\n".join(f"- **{t.name}**: {t.long}" for t in _TERMS)


def legend(*names: str) -> str:
    """The one-line legend under a table: each of ``names`` with its short definition, ``;``-separated, then where
    the rest is (``passprice explain TERM``)."""
    parts = [f"{TERMS[n].name} = {TERMS[n].tag or TERMS[n].short}" for n in names]
    return " · ".join(parts) + " (passprice explain TERM)"
