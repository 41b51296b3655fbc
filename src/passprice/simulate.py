"""A served trace is a sequence of priced passes: each step's time is the seed's price of exactly the token-rows it
carries, at the positions its sequences have reached, on the card's cited facts — so static and continuous batching
are compared on the same card terms, and the comparison rests on the same facts as a single price.

:func:`simulate` runs one scheduling policy over a :class:`~passprice.trace.Trace` with a
:class:`~passprice.steps.StepPricer`. Both policies build their steps the same way; they differ only in when they
admit (Yu et al., "Orca", OSDI 2022: request-level against iteration-level scheduling):

- **static**: when the card is free, admit the waiting requests (arrival order) that memory and the batch cap hold,
  and run that batch until its last request ends; a finished request stops computing but keeps its memory, and no
  request joins, until the batch ends. (The sketch's ``simulate_static_batching`` waits for a full batch to arrive;
  starting with the requests already waiting can only help static batching.)
- **continuous**: every step, retire the finished requests and admit waiting ones (arrival order, first come first
  served: the first that does not fit stops admission) while memory and the batch cap hold them.

Modelling decisions (each is a choice the sketch and the seed leave open):

- **Admission reserves a request's full length**: its state and log, and a cache for ``prompt + output`` positions
  (whole pages; a contiguous cache its whole limit), as Hugging Face TGI's router budgets each request's input plus
  ``max_new_tokens`` against ``max_batch_total_tokens``. No step can then run out of memory, so no request is ever
  preempted and every step is a pass the card can run; the trace's output length plays ``max_new_tokens``. A
  request that waits at the head of the queue because memory is full counts as *waited for memory*. ``peak held``
  reports the bytes actually written (each sequence's pages at its current length), ``peak reserved`` what admission
  counted.
- **Chunked prefill** (Agrawal et al., "Sarathi-Serve", OSDI 2024): a step carries every decoding sequence's pass
  and then prompt rows, in admission order, up to a token budget (``chunk`` rows in all, decode rows first, never
  more than the card's on-chip memory holds: :meth:`~passprice.steps.StepPricer.rows_on_chip`). A prompt's last row
  gives its first output token at the end of its step (time to first token); each later pass emits the serving's
  expected tokens per pass (with drafts, fractional: no acceptance is sampled, so the run is deterministic).
- **Prefix caching** (paged caches only; vLLM's automatic prefix caching shares whole blocks): requests naming the
  same prefix share its whole pages, held once while any admitted request uses them and freed with the last; a
  request admitted while its prefix is held skips prefilling those positions (it waits until the prefix's first
  request has written them). With the serving's ``prefix_read_once`` each step streams every shared prefix it reads
  once (:class:`~passprice.steps.StepRows`). Without prefix caching every request holds and prefills its whole
  prompt.
- Every sequence lives in card memory (the serving's host memory is not used); the batch cap defaults to 256
  sequences and is lowered to what on-chip memory carries.

Reported per policy: throughput (output tokens / s from the first arrival to the last token), time to first token
and time per output token at p50/p90/p99, end-to-end latency (arrival to last token) at p50/p99 — nearest-rank
percentiles — peak memory held and reserved, peak sequences, requests that waited for memory, steps by bind.
"""

from __future__ import annotations

import bisect
import enum
import heapq
import itertools
import math
import operator
import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from passprice.architectures import windowed_reads_array
from passprice.errors import InputError, escaped
from passprice.jsontext import Table
from passprice.serving import NotResident, OnChipOverflow, PassShape, ServingBind
from passprice.steps import StepPricer, StepRows, StepSums
from passprice.stretch import BLOCK, Stretch, advance, held_totals, stepwise_sums
from passprice.tables import count, si, text_table
from passprice.trace import Request, Trace, check_trace

#: Default token budget of a step (rows: decode rows first, then prompt rows).
CHUNK = 2048

#: Default cap on the sequences a step carries (the default of ``max_num_seqs`` in vLLM's V0 engine arguments).
MAX_BATCH = 256

#: Default cap on the steps one command simulates, every policy together: a step costs tens of microseconds, so
#: this bounds a run to about a minute; a longer trace is refused, before it runs when :func:`least_steps` already
#: passes the cap.
MAX_STEPS = 500_000

#: Default cap on the work one command does, every policy together, in units of about :data:`WORK_UNIT_US` µs of
#: CPU: a step priced alone costs :data:`WORK_ALONE` units; each stretch :data:`WORK_STRETCH` (its sums set up,
#: its first steps priced, its admissions, finishes and peak held recorded), each further block of its steps priced
#: :data:`WORK_BLOCK`; each other call that prices many steps at once (a prediction's first guess) :data:`WORK_CALL`,
#: and each prediction of the next arrivals' steps a unit for every :data:`WORK_LOOKS` steps of its clock, steps it
#: places a prompt in, and chunks and decodings it walks to find an arrival's step; each try of planning a stretch's
#: admissions ahead (its planning, pricing and confirming) :data:`WORK_TRY`, and a third of a unit for each request it
#: plans, each prompt
#: chunk and each step it walks; each request finished in a stretch 1; every 64 steps of a stretch 1; each run of a
#: drafting stretch's steps with the same sequences :data:`WORK_SEGMENT` (its sums taken apart), and a unit for every
#: :data:`WORK_ELEMENTS` positions of its block (steps × sequences, advanced and summed). A least-squares fit
#: of CPU time to these counts over 10 runs (5 trace shapes of about 1 MB, both policies: arrivals at 50/s, a queue of
#: 15,000 at once, a drafting serving, shared prefixes, --chunk 256) on the 2-core development machine, quiet: 8.4 to
#: 11.4 µs a unit; measured again once drafting stretches ran through their finishes, as ratios to the arrivals'
#: static run in the same process (loaded machine): 0.99 to 1.45 times it, about 8.3 to 12.2 µs a unit quiet. The
#: steps a trace takes do not bound its time (a stretch prices thousands of steps for the cost of a few alone): this
#: cap does, to about 0.9 s of simulating (at most 1.1 s at the slowest rate measured), so that with the command's
#: own 0.5 to 0.7 s (imports, the serving's decomposition, reading a 1 MB trace, the report) no trace under 1 MB runs
#: a command past 2 s on a quiet machine. Issue 13 found a shape the fit had not seen: 12,998 arrivals at 50/s on
#: ``gemma3-270m-h100 --max-batch 160`` (a small model: short stretches of about 60 steps, two attention groups, a
#: prediction of the next arrivals at each) spent 21 to 33 µs a unit, refused after 1.8 s of CPU on a quiet machine
#: (2.4 s loaded): its stretches cost about 480 µs each besides their blocks (charged 10 units then, now
#: WORK_STRETCH), its blocks about 140 µs (10, now WORK_BLOCK) and its predictions' bisections, uncharged then, about
#: 0.15 to 0.4 µs a look (now 1 unit a WORK_LOOKS looks); with them it is refused after about 1.0 s.
MAX_WORK = 90_000
WORK_ALONE = 8
#: ... and a unit for every this many active sequences besides (their rows gathered, priced, advanced and their
#: memory held summed: 0.15 to 0.2 µs each a step). Uncharged before: 9,800 requests at 0 sharing one 64-token
#: prefix (so no stretch plans their prompts) on ``gemma3-270m-h100 --max-batch 4096``, 986 KB, priced about
#: 11,000 steps of 4,096 sequences alone, 6.9 to 8.9 s of CPU (load 3) before the refusal.
WORK_ALONE_SEQUENCES = 48
WORK_CALL = 10
WORK_STRETCH = 40
WORK_BLOCK = 14
WORK_LOOKS = 32
WORK_ELEMENTS = 512
WORK_TRY = 60
WORK_SEGMENT = 2
WORK_UNIT_US = 10
#: A stretch's peak check of memory held (``held_peak``) is charged a unit for every :data:`WORK_PEAK_SEQUENCES`
#: active sequences it walks, every :data:`WORK_LOOKS` prompt chunks of the prompts prefilling, and every
#: :data:`WORK_ELEMENTS` positions (prompts prefilling × finishing steps) it sums; the other active sequences hold at
#: every step what they hold now, summed once. Before (attack round 21, issue 13) each sequence was a row of NumPy
#: calls (15 µs): ``gemma3-270m-h100 --max-batch 4096`` on the benchmark's 925 KB queue (15,000 requests at 0) summed
#: about 4,000 of them a step, 0.9 s of CPU in 14 checks before its refusal (charged, they refused the README's own
#: example: 1,000 requests at 200/s on r1-qwen7b-h200).
WORK_PEAK_SEQUENCES = 64
#: And each check 40 units whatever it sums (attack round 35, issue 13: uncharged, a check cost 480 µs of CPU a call
#: over the 395 of the benchmark's arrivals, 1.5 ms over the 44 of its queue, and 660-860 µs alone beside a lone
#: request: 20,000 requests 10,000 s apart, each served alone in one stretch, ran 18-25 µs a unit and 2.5-3.1 s of
#: CPU before the refusal).
WORK_PEAK = 40
#: The most positions (prompts prefilling × finishing steps) the peak check holds in one matrix (8 MB of doubles):
#: more steps are summed a block at a time.
PEAK_BLOCK = 1 << 20
#: Units charged for every 2 prompts prefilling over several steps whose rows so far ``held_sums`` finds at each
#: finishing step (a few NumPy calls each; a Python loop over their steps and chunks before, uncharged).
WORK_PEAK_ROWS = 3


def _passes_left(generated: np.ndarray, outputs: np.ndarray, emitted: float,
                 which: Callable[[Iterable[float]], float]) -> int:
    """The passes (at least 1) a block of a drafting stretch needs to reach the first (``which`` = ``min``) or the
    last (``max``) finish of sequences that have ``generated`` of their ``outputs`` tokens, ``emitted`` a pass, plus
    one for the rounding of its running sums (a block that stops short is followed by the next). Attack round 35
    (issue 13): a drafting serving's lone sequence, its next arrival far ahead, was advanced through a block of
    :data:`~passprice.stretch.BLOCK` passes at every stretch (two accumulations of 65,536 rows, uncharged), whatever
    few tokens it had left: 20,000 requests 10,000 s apart ran 2.7 s of CPU (1.0 s more of the system's) before the
    refusal."""
    left = (outputs - generated) / emitted
    return max(math.ceil(which(left.tolist())), 0) + 2


def _clock(start: float, seconds: np.ndarray) -> list[float]:
    """``start`` and the running sums after it of ``seconds`` (a float array), added one at a time in order, as
    the step-by-step loop adds each step's seconds: the doubles ``numpy.add.accumulate`` gives, as Python floats
    (cheaper than NumPy calls for the few steps between two arrivals)."""
    if len(seconds) > 64:  # a long stretch (static batching): one NumPy call, then Python floats
        clock: list[float] = np.add.accumulate(np.concatenate(([start], seconds))).tolist()
        return clock
    return list(itertools.accumulate(seconds.tolist(), initial=start))


#: A continuous stretch prices at most this many arrivals ahead (:func:`simulate`'s ``ahead``), admitted before this
#: many steps, in at most this many tries of predicting their steps.
AHEAD = 32
AHEAD_STEPS = 4096
AHEAD_TRIES = 4
#: ... and at most this many of the requests waiting.
AHEAD_QUEUED = 1024
#: A try of planning prompt chunks ahead whose units exceed what the steps it keeps cost priced alone (L more) makes
#: the next try wait ``(L // a + 1) × PLAN_BACKOFF ** k`` steps (a: a step's price alone; k: the losses in a row,
#: at most 8), priced alone meanwhile; a try that pays resets k. The steps alone after a loss cost at least 4L, so
#: the tries lost add at most about a third of the step-by-step work. The outcome is the same either way (every
#: stretch is the steps the step loop prices); only the work differs. Session 14's deep queue (1,200 requests at 0,
#: ``--chunk 64 --max-batch 512`` on gemma3-270m-h100) spent about 4,800 units a try to keep 2 to 11 steps: 2.75
#: million units in stretches against 147,839 step by step; now 111,578 (docs/DESIGN.md, Hostile input).
PLAN_BACKOFF = 4
#: Positions further on at which a prediction prices an arrival's decoding again (how it grows a step).
GROWTH = 1024
#: A step no stretch reaches (the end of a sequence that is not retired in it).
_ALWAYS = 1 << 62


class Policy(enum.Enum):
    """When requests are admitted (see the module's docstring)."""

    STATIC = "static"
    CONTINUOUS = "continuous"


@attrs.frozen
class Settings:
    """How the engine schedules: ``chunk`` (token-rows a step carries, decode rows first), ``max_batch`` (sequences
    admitted at once), ``prefix_caching`` (share prefixes' whole pages; only a paged cache can), ``read_once``
    (stream each shared prefix once a step: the serving's ``prefix_read_once``)."""

    chunk: int = CHUNK
    max_batch: int = MAX_BATCH
    prefix_caching: bool = True
    read_once: bool = False


@attrs.frozen
class Record:
    """One request's passage (seconds from the trace's start; ``None`` where it does not apply): when it arrived,
    was admitted, got its first token and its last; its shared prefix positions (held once) and whether it found them
    held (``prefix_hit``: not prefilled again); prompt rows it computed; whether it waited for memory."""

    request: Request
    admitted: float
    first_token: float
    finished: float
    shared: int
    prefix_hit: bool
    prompt_rows: int
    waited_for_memory: bool

    @property
    def ttft(self) -> float:
        """Time to first token: arrival to the end of the step holding the prompt's last row."""
        return self.first_token - self.request.arrival

    @property
    def tpot(self) -> float | None:
        """Time per output token after the first: (last − first) / (output − 1); ``None`` for one output token."""
        if self.request.output < 2:
            return None
        return (self.finished - self.first_token) / (self.request.output - 1)

    @property
    def e2e(self) -> float:
        """End-to-end latency: arrival to the last output token."""
        return self.finished - self.request.arrival


#: The keys of a request's record in ``--json`` (:func:`records_table`), in order.
RECORD_KEYS = (
    "index", "line", "arrival_s", "prompt_tokens", "output_tokens", "prefix_id", "prefix_tokens", "shared_positions",
    "prefix_hit", "prompt_rows", "admitted_s", "first_token_s", "finished_s", "queue_s", "ttft_s", "tpot_s", "e2e_s",
    "waited_for_memory",
)


def records_table(records: Sequence[Record]) -> Table:
    """Every field of each of ``records``, base units, column by column (:data:`RECORD_KEYS`; what ``--json``
    writes of each request): its request's figures, then the record's, then the latencies :class:`Record`'s
    properties give (the same subtractions and divisions, element by element, so the same doubles)."""
    reqs = [r.request for r in records]
    arrival = list(map(attrgetter("arrival"), reqs))
    outputs = list(map(attrgetter("output"), reqs))
    admitted = list(map(attrgetter("admitted"), records))
    first = list(map(attrgetter("first_token"), records))
    finished = list(map(attrgetter("finished"), records))
    tpot = [None if n < 2 else (f - s) / (n - 1) for f, s, n in zip(finished, first, outputs, strict=True)]
    columns = (
        list(map(attrgetter("index"), reqs)), list(map(attrgetter("line"), reqs)), arrival,
        list(map(attrgetter("prompt"), reqs)), outputs, list(map(attrgetter("prefix_id"), reqs)),
        list(map(attrgetter("prefix"), reqs)), list(map(attrgetter("shared"), records)),
        list(map(attrgetter("prefix_hit"), records)), list(map(attrgetter("prompt_rows"), records)), admitted, first,
        finished, list(map(operator.sub, admitted, arrival)), list(map(operator.sub, first, arrival)), tpot,
        list(map(operator.sub, finished, arrival)), list(map(attrgetter("waited_for_memory"), records)),
    )
    return Table(RECORD_KEYS, columns)


def percentile(values: Sequence[float], q: float, ordered: bool = False) -> float | None:
    """The nearest-rank ``q``-th percentile: the smallest value with at least ``q`` % of ``values`` at or below it
    (``None`` for no values, e.g. no request with a second output token); ``ordered``: ``values`` are sorted
    already."""
    if not values:
        return None
    ranked = values if ordered else sorted(values)
    rank = max(math.ceil(q / 100.0 * len(ranked)), 1)
    return ranked[rank - 1]


@attrs.frozen
class Outcome:
    """One policy's run: its ``records`` (trace order), ``steps`` and their seconds by bind, the peaks of bytes
    held (written) and reserved (admitted) with the weights, of sequences admitted at once, the mean sequences a
    step carried, and the card's ``capacity``."""

    policy: Policy
    records: tuple[Record, ...]
    steps: int
    binds: dict[str, int]
    bind_s: dict[str, float]
    peak_held: float
    peak_reserved: float
    peak_sequences: int
    mean_sequences: float
    capacity: float
    weights: float
    work: int = attrs.field(default=0, eq=False)  # units of work the run took (MAX_WORK's); not part of the outcome

    @property
    def makespan(self) -> float:
        """First arrival to last token (s)."""
        return max(r.finished for r in self.records) - min(r.request.arrival for r in self.records)

    @property
    def output_tokens(self) -> int:
        """Output tokens of every request."""
        return sum(r.request.output for r in self.records)

    @property
    def throughput(self) -> float:
        """Output tokens per second over the makespan."""
        span = self.makespan
        return self.output_tokens / span if span > 0 else math.inf

    @property
    def waited_for_memory(self) -> int:
        """Requests that waited at the head of the queue because memory was full."""
        return sum(r.waited_for_memory for r in self.records)

    def over_tpot(self, cap: float) -> int:
        """Requests whose TPOT (seconds from their first token to their last over the tokens after the first:
        :meth:`Record.tpot`, the figure the TPOT percentiles read) is above ``cap`` seconds; a request of one output
        token has no TPOT and is never counted."""
        return sum(1 for r in self.records if (t := r.tpot) is not None and t > cap)

    def summary(self) -> dict[str, Any]:
        """The reported figures, base units (JSON-ready)."""
        # The latencies as arrays, each sorted once (the same subtractions and divisions as Record's, element by
        # element, so the same doubles).
        recs = self.records
        arrival = np.array([r.request.arrival for r in recs], dtype=float)
        first = np.array([r.first_token for r in recs], dtype=float)
        last = np.array([r.finished for r in recs], dtype=float)
        outputs = [r.request.output for r in recs]
        out = np.array(outputs, dtype=np.int64)
        many = out >= 2
        ttft = np.sort(first - arrival).tolist()
        tpot = np.sort((last[many] - first[many]) / (out[many] - 1).astype(float)).tolist()
        e2e = np.sort(last - arrival).tolist()
        makespan = float(last.max()) - float(arrival.min())
        output_tokens = sum(outputs)
        return {
            "policy": self.policy.value,
            "requests": len(recs),
            "output_tokens": output_tokens,
            "prompt_rows": sum(r.prompt_rows for r in recs),
            "prefix_hits": sum(r.prefix_hit for r in recs),
            "steps": self.steps,
            "makespan_s": makespan,
            "throughput_tokens_per_s": output_tokens / makespan if makespan > 0 else math.inf,
            "ttft_s": {f"p{q}": percentile(ttft, q, ordered=True) for q in (50, 90, 99)},
            "tpot_s": {f"p{q}": percentile(tpot, q, ordered=True) for q in (50, 90, 99)},
            "e2e_s": {f"p{q}": percentile(e2e, q, ordered=True) for q in (50, 99)},
            "peak_held_bytes": self.peak_held,
            "peak_reserved_bytes": self.peak_reserved,
            "capacity_bytes": self.capacity,
            "weights_bytes": self.weights,
            "peak_sequences": self.peak_sequences,
            "mean_sequences": self.mean_sequences,
            "waited_for_memory": sum(r.waited_for_memory for r in recs),
            "steps_by_bind": dict(self.binds),
            "seconds_by_bind": dict(self.bind_s),
        }


class _Prefix:
    """A shared prefix held in memory: its whole-page ``positions``, its ``bytes`` (held once), how many admitted
    requests use it, and whether its positions are written yet."""

    def __init__(self, positions: int, held: float) -> None:
        self.positions = positions
        self.bytes = held
        self.refs = 0
        self.ready = False


def _check_settings(settings: Settings) -> None:
    """Raise :class:`~passprice.errors.InputError` unless ``settings`` holds what the command line lets through:
    ``chunk`` and ``max_batch`` integers 1 … 2^32 − 1 (as ``--chunk`` and ``--max-batch``), the two choices bools
    (attack round 39: a chunk of 0 or a float, given from Python, ran into ``TypeError`` or a step of nothing)."""
    if not isinstance(settings, Settings):
        raise InputError(f"simulate: the settings are a {type(settings).__name__}, not a passprice.simulate.Settings")
    bad = [f"simulate: Settings.{name} is {value!r}, not a whole number from 1 to 4,294,967,295"
           for name, value in (("chunk", settings.chunk), ("max_batch", settings.max_batch))
           if not (type(value) is int and 1 <= value <= 0xFFFF_FFFF)]
    bad += [f"simulate: Settings.{name} is {value!r}, not True or False"
            for name, value in (("prefix_caching", settings.prefix_caching), ("read_once", settings.read_once))
            if type(value) is not bool]
    if bad:
        raise InputError.of(bad)


def least_steps(pricer: StepPricer, trace: Trace, settings: Settings = Settings()) -> int:
    """A lower bound on the steps either policy takes to serve ``trace``. A step carries at most the token budget
    of prompt rows, at most the batch cap's decode rows, and at most the larger of the two in all; so the steps are
    at least every prompt row (less the shared positions a prefix hit skips) over the budget, every decode row over
    the cap's, and both over the larger; and a request's own prompt chunks and decode passes run one a step."""
    check_trace(trace, pricer.limit)
    _check_settings(settings)
    shape = pricer.shape
    n_rows = shape.rows_per_sequence
    on_chip_rows = pricer.rows_on_chip()
    cap = max(min(settings.max_batch, on_chip_rows // n_rows), 1)
    budget = max(min(settings.chunk, on_chip_rows), 1)
    page = pricer.kv_page if settings.prefix_caching else None
    reqs = trace.requests
    # One array a field, the arithmetic on them (integers, and the same float division as on each request's).
    own = np.fromiter(map(attrgetter("prompt"), reqs), dtype=np.int64, count=len(reqs))
    if page:
        prefix = np.fromiter(map(attrgetter("prefix"), reqs), dtype=np.int64, count=len(reqs))
        named = np.fromiter((r.prefix_id is not None for r in reqs), dtype=bool, count=len(reqs))
        own = own - np.where(named, prefix // page * page, 0)
    outputs = np.fromiter(map(attrgetter("output"), reqs), dtype=np.int64, count=len(reqs))
    decode = np.floor((outputs - 1) / shape.emitted_per_sequence).astype(np.int64)
    prompt_rows = int(own.sum())
    decode_rows = int(decode.sum()) * n_rows
    longest = max(int((-(-own // budget) + decode).max()), 0) if len(reqs) else 0
    return max(
        -(-prompt_rows // budget),
        -(-decode_rows // (cap * n_rows)),
        -(-(prompt_rows + decode_rows) // max(budget, cap * n_rows)),
        longest,
    )


def require_steps(
    pricer: StepPricer, trace: Trace, policies: Sequence[Policy], settings: Settings, max_steps: int
) -> None:
    """Raise :class:`~passprice.errors.InputError` when serving ``trace`` with each of ``policies`` needs more than
    ``max_steps`` steps in all by :func:`least_steps` (a lower bound: a trace refused here is refused before any
    step is priced)."""
    least = least_steps(pricer, trace, settings) * len(policies)
    if least > max_steps:
        raise InputError(
            f"simulate: the trace needs at least {least:,} steps ({', '.join(p.value for p in policies)}), more "
            f"than the {max_steps:,} --max-steps allows (tens of microseconds a step); simulate part of the "
            "trace, or raise --max-steps"
        )


def serve(
    pricer: StepPricer,
    trace: Trace,
    policies: Sequence[Policy],
    settings: Settings = Settings(),
    progress: Callable[[int], None] | None = None,
    max_steps: int | None = None,
    max_work: int | None = None,
) -> tuple[Outcome, ...]:
    """Serve ``trace`` with each of ``policies`` in turn (:func:`simulate`), the budgets shared: ``max_steps`` steps
    and ``max_work`` units of work (:data:`MAX_WORK`) in all, each policy given what the ones before it left.
    ``progress`` as for :func:`simulate`.

    Raises :class:`~passprice.errors.InputError` first when the policies together need more than ``max_steps``
    steps (:func:`require_steps`), and as :func:`simulate` does."""
    if max_steps is not None:
        require_steps(pricer, trace, policies, settings, max_steps)
    outcomes: list[Outcome] = []
    for policy in policies:
        steps = None if max_steps is None else max_steps - sum(o.steps for o in outcomes)
        work = None if max_work is None else max_work - sum(o.work for o in outcomes)
        spent = sum(o.work for o in outcomes)
        outcomes.append(simulate(pricer, trace, policy, settings, progress, max_steps=steps, max_work=work,
                                 spent_before=spent))
    return tuple(outcomes)


def _pace(work: int, done: int, requests: int, spent_before: int) -> str:
    """What the refusal of :func:`simulate`'s work budget adds: the units the run needs if the rest of it goes at
    its pace so far (``work`` units for ``done`` of ``requests`` served), plus ``spent_before``, rounded up to two
    significant figures; empty before a twentieth of the requests are served (a pace read off fewer says too
    little). An extrapolation, said as one: a run's later requests may cost more or less (walkthrough 14:
    ``--chunk 512`` on the README's synthetic trace was refused at 168 of 1,000 requests; this says near 520,000,
    and 372,000 sufficed)."""
    if done <= 0 or done * 20 < requests:
        return ""
    need = spent_before + math.ceil(work * requests / done)
    step = 10 ** max(len(str(need)) - 2, 0)
    need = -(-need // step) * step
    return (f" (at its pace so far, {done:,} of {requests:,} requests in {work:,} units, this run would end near "
            f"{need:,} units of --max-work, counting the runs before it)")


def simulate(
    pricer: StepPricer,
    trace: Trace,
    policy: Policy,
    settings: Settings = Settings(),
    progress: Callable[[int], None] | None = None,
    max_steps: int | None = None,
    stretches: bool = True,
    max_work: int | None = None,
    spent_before: int = 0,
) -> Outcome:
    """Serve ``trace`` with ``policy`` on the card ``pricer`` prices for; ``progress`` is called with the requests
    finished (by each step, or each stretch of steps). With ``stretches`` (the default) consecutive steps that carry
    the same decoding sequences and nothing else are priced together (:mod:`passprice.stretch`); without, every step
    alone (always under a serving stack, whose range every step is checked against). Both give the same outcome,
    bit for bit (the tests compare them).

    Raises :class:`~passprice.serving.NotResident` when a request alone does not fit the card's memory beside the
    weights, :class:`~passprice.serving.OnChipOverflow` when not even one sequence's rows fit on chip, and
    :class:`~passprice.errors.InputError` when the run would take more than ``max_steps`` steps (checked first
    against :func:`least_steps`, then as it runs) or more than ``max_work`` units of work (:data:`MAX_WORK`); that
    refusal says, once a request has been served, about how many units the whole run needs at its pace so far, plus
    ``spent_before`` (what the policies run before it spent of the same budget)."""
    check_trace(trace, pricer.limit)
    _check_settings(settings)
    if max_steps is not None:
        least = least_steps(pricer, trace, settings)
        if least > max_steps:
            raise InputError(
                f"simulate: the trace needs at least {least:,} steps ({policy.value}), more than the {max_steps:,} "
                "--max-steps allows (tens of microseconds a step); simulate part of the trace, or raise --max-steps"
            )
    if pricer.calibrated is not None:
        # Under a serving stack each step is checked to lie where the stack's facts hold (StepPricer.price raises
        # BeyondStack); a stretch prices many steps at once without that check, so a stack's run goes step by step.
        stretches = False
    reqs = sorted(trace.requests, key=attrgetter("arrival", "index"))
    n_req = len(reqs)
    shape = pricer.shape
    n_rows = shape.rows_per_sequence
    emitted = shape.emitted_per_sequence
    on_chip_rows = pricer.rows_on_chip()
    cap = min(settings.max_batch, on_chip_rows // n_rows)
    if cap < 1:
        raise OnChipOverflow(n_rows * pricer.row_on_chip, pricer.card.on_chip.capacity.value)
    budget = max(min(settings.chunk, on_chip_rows), 1)
    page = pricer.kv_page
    caching = settings.prefix_caching and page is not None
    read_once = settings.read_once and caching

    shared = [r.prefix // page * page if caching and page and r.prefix_id is not None else 0 for r in reqs]
    lengths = np.array([r.length for r in reqs], dtype=float)
    shared_arr = np.array(shared, dtype=float)
    reserve = pricer.held(lengths, shared_arr).tolist()  # each request's bytes reserved, as Python floats
    out_tokens = np.array([r.output for r in reqs], dtype=float)
    codes: dict[str, int] = {}
    code = np.array(
        [
            codes.setdefault(r.prefix_id, len(codes)) if s and r.prefix_id else -1
            for r, s in zip(reqs, shared, strict=True)
        ]
    )
    code_positions = {codes[r.prefix_id]: s for r, s in zip(reqs, shared, strict=True) if s and r.prefix_id}
    capacity = pricer.capacity
    weights = pricer.weights_held
    room = capacity - weights

    length = np.zeros(n_req)  # cached positions
    generated = np.zeros(n_req)
    prefilled = [0] * n_req
    rows_done = [0] * n_req
    admitted_at = [math.nan] * n_req
    first_at = [math.nan] * n_req
    finished_at = [math.nan] * n_req
    waited = [False] * n_req
    hit = [False] * n_req
    finished = [False] * n_req
    prefixes: dict[str, _Prefix] = {}

    active: list[int] = []  # admitted, not retired, in admission order
    prefilling: list[int] = []  # admitted, prompt rows left, in admission order
    decoding: list[int] = []  # admitted, decoding
    reserved = 0.0
    t = 0.0
    arrived = 0
    waiting: deque[int] = deque()
    done = 0
    steps = 0
    binds = {b.value: 0 for b in ServingBind}
    bind_s = {b.value: 0.0 for b in ServingBind}
    peak_held = peak_reserved = weights
    peak_sequences = 0
    carried = 0
    work = 0
    plan_from = plan_wait = 0  # prompt chunks are planned ahead from step plan_from (PLAN_BACKOFF)
    guess_from = guess_wait = 0  # and the next arrivals admitted ahead from step guess_from

    def spend(units: int) -> None:
        """Count ``units`` of work (:data:`MAX_WORK`); past ``max_work``, refuse the run by name."""
        nonlocal work
        work += units
        if max_work is not None and work > max_work:
            raise InputError(
                f"simulate: the {policy.value} run passed the {max_work:,} units of work left of --max-work after "
                f"{steps:,} steps, {t:,.1f} s into the trace with {done:,} of {n_req:,} requests served (a unit is "
                f"about {WORK_UNIT_US} µs of CPU: a step priced alone {WORK_ALONE} and 1 a {WORK_ALONE_SEQUENCES} "
                f"sequences, a stretch of steps priced together "
                f"{WORK_STRETCH}, a try of planning admissions ahead {WORK_TRY} and more); simulate part of the trace, "
                f"or raise --max-work{_pace(work, done, n_req, spent_before)}"
            )

    def prefix_bytes() -> float:
        """The bytes of every shared prefix held, summed in the order they were placed; charged a unit every
        :data:`WORK_LOOKS` prefixes (attack round 21: 9,472 requests each naming its own 512-token prefix, 990 KB,
        summed thousands of prefixes at every step uncharged: 1.8 to 2.3 s of CPU before the refusal, load 4.5)."""
        spend(len(prefixes) // WORK_LOOKS)
        return sum(p.bytes for p in prefixes.values())

    def admit() -> None:
        nonlocal reserved
        while waiting and len(active) < cap:
            j = waiting[0]
            need = reserve[j]
            pid = reqs[j].prefix_id if shared[j] else None
            held_prefix = prefixes.get(pid) if pid is not None else None
            if pid is not None and held_prefix is None:
                need += pricer.prefix_held(float(shared[j]))
            if reserved + need > room:
                if not active:
                    raise NotResident(weights + need, capacity)
                waited[j] = True
                return
            waiting.popleft()
            active.append(j)
            prefilling.append(j)
            reserved += need
            admitted_at[j] = t
            if pid is not None:
                if held_prefix is None:
                    held_prefix = prefixes[pid] = _Prefix(shared[j], pricer.prefix_held(float(shared[j])))
                else:
                    hit[j] = True
                    prefilled[j] = shared[j]
                    length[j] = float(shared[j])
                held_prefix.refs += 1

    whole = float(emitted).is_integer()
    bind_names = list(binds)
    pace = [0.0]  # the last step's seconds: how many steps a stretch may run before the next arrival

    def predict(seconds: list[float], extra: dict[int, list[tuple[int, float]]],
                slope: dict[int, tuple[int, float, float]] | None = None, pair: float = 0.0,
                place: tuple[int, dict[int, int], dict[int, int]] | None = None) -> list[int]:
        """The steps the next arrivals are predicted to be admitted at, from ``seconds`` (the steps' seconds
        without the predicted prompt chunks; the last one repeats), each arrival's chunks' ``extra`` seconds
        ((steps after its admission, seconds): a chunk queued behind others, or split, lands after it), and the
        seconds each admitted request's decoding adds to the steps from a step on until it finishes (``slope``:
        (steps after its admission, seconds a step, and how much more each step after as its positions grow));
        ``pair``: the seconds a chunk adds to a step holding another's already, beyond its own. With ``place``
        (rows a step leaves for prompts, rows already taken by step, each arrival's prompt rows), an arrival's
        prompt rows are placed in the steps from its admission on as they leave room, its ``extra`` seconds spread
        over them by rows, and its decoding starts after its last. A prediction only decides how many tries a
        stretch takes: the clock priced confirms it."""
        clock = list(itertools.accumulate(seconds, initial=t))
        size = len(clock)
        tail = seconds[-1]
        out: list[int] = []
        before = 0.0  # the extra seconds of the chunks in steps before the current one
        # The decoding begun by the current step adds q2 · i² + q1 · i + q0 to step i's start.
        q2 = q1 = q0 = 0.0
        pending: dict[int, float] = {}  # chunks in the current step or after: step -> seconds
        rising: dict[int, list[float]] = {}  # decoding begun after the current step: first step -> [d, g]
        slopes = slope or {}
        cur = 0
        last = min(arrived + AHEAD + 1, n_req)
        passes = [math.ceil((reqs[j].output - 1) / emitted) for j in range(arrived, last)]
        free, used, place_rows = place if place is not None else (0, {}, {})
        used = dict(used)
        looked = [len(seconds)]  # the steps' clock, start_of's evaluations and the steps placed in (WORK_LOOKS)

        def clock_at(i: int) -> float:
            return clock[i] if i < size else clock[-1] + (i - size + 1) * tail

        def first_clock(target: float, lo: int) -> int:
            """The first step from ``lo`` (at least 1) whose start on the clock alone is at or after ``target``."""
            lo = max(lo, 1)
            if target <= clock[-1]:
                i = bisect.bisect_left(clock, target, lo)
                if i < size:
                    return i
            return max(size - 1 + max(math.ceil((target - clock[-1]) / tail), 1), lo)

        def start_of(i: int) -> float:
            looked[0] += 1 + len(pending) + len(rising)
            s = (clock[i] if i < size else clock[-1] + (i - size + 1) * tail) + before + (q2 * i + q1) * i + q0
            for y, v in pending.items():
                if y < i:
                    s += v
            for y, (d, g) in rising.items():
                if y < i:
                    s += (d + g * (i - y - 1) / 2) * (i - y)
            return s

        for g_ in range(last - arrived):
            j = arrived + g_
            a = reqs[j].arrival
            if not (cur and start_of(cur) >= a):
                # Settle what lies before the next step for good (every later step's start holds it).
                nxt = cur + 1
                for y in [y for y in pending if y < nxt]:
                    before += pending.pop(y)
                for y in [y for y in rising if y < nxt]:
                    d, g = rising.pop(y)  # (d + g (i − y − 1) / 2)(i − y), expanded
                    q2 += g / 2
                    q1 += d - g * (2 * y + 1) / 2
                    q0 += -d * y + g * y * (y + 1) / 2
                nxt = first_clock(a - before, cur + 1)
                if q2 or q1 or q0 or pending or rising:
                    # The steps are longer than the clock: an earlier one may reach it. What the chunks and the
                    # decoding add grows from step to step, so what they add at nxt gives the earliest candidate;
                    # then the first whose start is at or after the arrival, by bisection (starts only grow).
                    lo = first_clock(a - (start_of(nxt) - clock_at(nxt)), cur + 1)
                    while lo < nxt:
                        mid = (lo + nxt) // 2
                        if start_of(mid) >= a:
                            nxt = mid
                        else:
                            lo = mid + 1
                cur = nxt
            out.append(cur)
            chunks = extra.get(j, ())
            begins = None
            if place is not None and j in place_rows:
                total = sum(v for _, v in chunks)
                left = prompt = place_rows[j]
                y = cur
                while left > 0 and free > 0 and y < cur + 4 * AHEAD_STEPS:
                    take = min(free - used.get(y, 0), left)
                    if take > 0:
                        v = total * take / prompt
                        if y in pending:
                            v += pair  # two chunks in one step cost less than apart (they share its decode time)
                        pending[y] = pending.get(y, 0.0) + v
                        used[y] = used.get(y, 0) + take
                        left -= take
                    y += 1
                looked[0] += y - cur
                begins = y
            else:
                for y, v in chunks:
                    if cur + y in pending:
                        v += pair
                    pending[cur + y] = pending.get(cur + y, 0.0) + v
            slope_j = slopes.get(j)
            if slope_j is not None:  # its decoding passes, then it finishes
                y0 = begins if begins is not None else cur + slope_j[0]
                d, g = slope_j[1], slope_j[2]
                z = y0 + passes[g_]
                for y, d_, g__ in ((y0, d, g), (z, -(d + g * (z - y0)), -g)):
                    both = rising.setdefault(y, [0.0, 0.0])
                    both[0] += d_
                    both[1] += g__
        spend(looked[0] // WORK_LOOKS)
        return out

    def ahead(
        members: np.ndarray,
        positions: np.ndarray,
        own: np.ndarray,
        start: np.ndarray,
        finish: np.ndarray,
        gen: np.ndarray,
        reads_from: np.ndarray | None,
        first: StepSums | None,
        alone: Stretch,
        pre: Sequence[int] = (),
        static: bool = False,
    ) -> tuple[Any, ...] | None:
        """A continuous stretch's steps priced past the next admissions (whole emitted tokens, no prompt left after
        step 0). The candidates are the requests waiting, in queue order, then the next arrivals: each is admitted
        at the first step from the one before it (a waiting request), or from the step its arrival is predicted at
        (from the pace, then from the clock the last try priced), where the batch cap and the room left after the
        retirements before it hold it — a step where the cap does but memory does not marks it waited for memory,
        as :func:`admit` does — and its prompt is chunked in admission order within each step's token budget, as the
        step loop chunks it, its decode from the step after its last chunk. Planning stops at the first candidate
        with a shared prefix, past the candidates and steps allowed (:data:`AHEAD`, :data:`AHEAD_QUEUED`,
        :data:`AHEAD_STEPS`), or where the batch would empty before an arrival. Every step is priced at once; the
        clock then confirms each arrival's step (the first step that starts at or after it), and the stretch keeps
        its steps up to the first wrong one, or the first candidate not planned, and no prompt left unfinished.
        With ``pre`` (the requests prefilling, in order, none with a shared prefix) step 0 is planned too: their
        chunks from step 0, as the step loop gives them, before any admitted ahead; ``static``: nobody is admitted
        (static batching runs its batch to its end). ``None`` when nothing is planned; else the members, positions,
        starts, finishes and tokens generated (:class:`Stretch`'s arrays, the requests of ``pre`` prefilled and
        those admitted appended), the steps' seconds and binds, when each ends, the clock, the steps kept, the
        admitted requests with their steps, the chunks of those and of ``pre`` (request → (step, rows before,
        rows)), and the (request, step) pairs that waited for memory."""
        e = int(emitted)
        most = max_steps - steps if max_steps is not None else math.inf
        horizon = int(min(most, AHEAD_STEPS))
        fin0 = dict(zip(members.tolist(), finish.tolist(), strict=True))
        queue = sorted((fin0[m], q, m) for q, m in enumerate(active) if m in fin0)
        last_fin = queue[-1][0] if queue else 0
        queued = [] if static else list(waiting)[:AHEAD_QUEUED]
        n_wait = 0 if static else len(waiting)
        guess: list[int] = []
        est: dict[int, list[tuple[int, float]]] = {}  # each arrival's chunks: (steps after its admission, s)

        def first_guess() -> None:
            """The arrivals' first predicted steps, priced beside the members as they are now (not exactly): a
            decode step, step 0 with its prompt chunks, and each arrival's chunk step (its seconds beyond a decode
            step's)."""
            spend(WORK_CALL)
            near = list(range(arrived, min(arrived + AHEAD + 1, n_req)))
            Head = tuple[float, float, float, tuple[tuple[float, float], ...]]  # chunks, rows, lasts, group sums
            heads: list[Head] = [(0.0, 0.0, 0.0, tuple((0.0, 0.0) for _ in pricer.groups))]
            if first is not None:
                heads.append((first.chunks, first.prompt_rows, first.lasts,
                              tuple((pa, pr) for _, _, pa, pr in first.groups)))
            # The prompts prefilling (``pre``) are chunked from step 0 as the members leave the rows (their
            # finishes left out): each chunk priced alone beside the members, its seconds added to its step.
            free0 = budget - n_rows * len(members)
            pre_at: list[int] = []  # the step of each of pre's chunks
            if pre and free0 > 0:
                y, left = 0, free0
                starts_: list[float] = []
                rows_: list[float] = []
                lasts_: list[float] = []
                for j in pre:
                    done_, total = prefilled[j], reqs[j].prompt
                    while done_ < total and y < horizon:
                        r = min(left, total - done_)
                        pre_at.append(y)
                        starts_.append(float(done_))
                        rows_.append(float(r))
                        lasts_.append(1.0 if done_ + r == total else 0.0)
                        done_ += r
                        left -= r
                        if not left:
                            y, left = y + 1, free0
                sums_pre = [(pa.tolist(), pr.tolist()) for pa, pr in
                            pricer.chunk_sums(np.array(starts_), np.array(rows_), np.zeros(len(rows_)))]
                heads += [(1.0, rows_[x], lasts_[x], tuple((pa[x], pr[x]) for pa, pr in sums_pre))
                          for x in range(len(rows_))]
            rows_near = np.array([float(reqs[j].prompt) for j in near])
            per = [(pa.tolist(), pr.tolist()) for pa, pr in
                   pricer.chunk_sums(np.zeros(len(near)), rows_near, np.zeros(len(near)))]
            i_chunk = len(heads)
            heads += [(1.0, float(reqs[j].prompt), 1.0, tuple((pa[x], pr[x]) for pa, pr in per))
                      for x, j in enumerate(near)]
            # A step of the first two arrivals' chunks (what two chunks in one step cost beyond each alone).
            two = len(near) >= 2
            if two:
                both = pricer.sums(StepRows(np.empty(0), np.empty(0), np.zeros(2), rows_near[:2],
                                            np.ones(2, dtype=bool), np.zeros(2)))
                heads.append((both.chunks, both.prompt_rows, both.lasts,
                              tuple((pa, pr) for _, _, pa, pr in both.groups)))
            # Then a decode step with each arrival decoding besides (its seconds beyond a decode step's).
            zeros = tuple((0.0, 0.0) for _ in pricer.groups)
            heads += [(0.0, 0.0, 0.0, zeros) for _ in range(len(near) + 1 if near else 0)]
            more = np.concatenate((np.zeros(len(heads) - len(near) - 1), np.ones(len(near) + 1))) if near else (
                np.zeros(len(heads)))
            added = np.concatenate((np.zeros(len(heads) - len(near) - 1), rows_near, rows_near[:1] + GROWTH)) if (
                near) else np.zeros(len(heads))
            sums_now = []
            for q, g_ in enumerate(pricer.groups):
                pa = np.array([h[3][q][0] for h in heads])
                pr = np.array([h[3][q][1] for h in heads])
                if g_.window is None:
                    sums_now.append((float(positions.sum()) + added, float((positions - own).sum()) + added, pa, pr))
                else:
                    scored = (float(windowed_reads_array(positions, g_.window).sum())
                              + windowed_reads_array(added, g_.window))
                    sums_now.append((scored, scored, pa, pr))
            now_s = pricer.price_many(StepSums(float(len(members)) + more, np.array([h[0] for h in heads]),
                                               np.array([h[1] for h in heads]), np.array([h[2] for h in heads]),
                                               0.0, tuple(sums_now)))[0].tolist()
            decode_s = now_s[0]
            m = len(near)
            # Each arrival's chunk and decoding (the latter growing a step as its positions do: the first
            # arrival's decoding priced again further on).
            grow = (now_s[-1] - now_s[len(heads) - m - 1]) / GROWTH * emitted if m else 0.0
            slope: dict[int, tuple[int, float, float]] = {}
            for x, j in enumerate(near):
                est[j] = [(0, now_s[i_chunk + x] - decode_s)]
                slope[j] = (1, now_s[len(heads) - m - 1 + x] - decode_s, grow)
            pair = now_s[i_chunk + m] - now_s[i_chunk] - now_s[i_chunk + 1] + decode_s if two else 0.0
            used: dict[int, int] = {}
            for y, taken in zip(pre_at, rows_ if pre_at else [], strict=True):
                used[y] = used.get(y, 0) + int(taken)
            # The clock of the members alone (their finishes, their growing positions), for as many steps as the
            # arrivals predicted would take at the pace of step 0.
            last_arrival = reqs[near[-1]].arrival if near else t
            few = int(min(horizon, last_fin, (last_arrival - t) / decode_s * 1.25 + 8))
            seconds = alone.priced(pricer, np.arange(few))[0].tolist() if few > 1 else []
            if len(seconds) < 2:
                seconds = [now_s[1] if first is not None else decode_s, decode_s]
            for x, y in enumerate(pre_at):
                while len(seconds) <= y:
                    seconds.append(seconds[-1])
                seconds[y] += now_s[(2 if first is not None else 1) + x] - decode_s
            guess[:] = predict(seconds, est, slope, pair, (max(free0, 0), used, {j: reqs[j].prompt for j in near}))

        by_finish: list[tuple[int, int, int]] = []
        pf: list[list[int]] = []  # requests admitted ahead still prefilling: [request, rows done, prompt]
        pieces: dict[int, list[tuple[int, int, int]]] = {}  # request -> its chunks: (step, rows before, rows)
        fin: dict[int, int] = {}
        live = order = cur = walked = 0
        room_used = 0.0
        top_fin = last_fin

        def pop_to(x: int) -> None:
            """Retire the sequences that finished before step ``x``."""
            nonlocal live, room_used
            while by_finish and by_finish[0][0] <= x:
                room_used -= reserve[heapq.heappop(by_finish)[2]]
                live -= 1

        def run_to(x: int) -> None:
            """Give the prompt chunks of the steps before ``x`` (their admissions done), as the step loop does."""
            nonlocal cur, order, top_fin, walked
            while pf and cur < x:
                walked += 1
                pop_to(cur)
                free = budget - n_rows * (live - len(pf))
                if free <= 0:  # no rows for prompts until a sequence finishes: skip to that step
                    cur = max(cur + 1, min(x, by_finish[0][0])) if by_finish else x
                    continue
                while pf and free > 0:
                    item = pf[0]
                    j, done_rows, total = item
                    rows = min(free, total - done_rows)
                    pieces[j].append((cur, done_rows, rows))
                    free -= rows
                    if done_rows + rows < total:
                        item[1] = done_rows + rows
                        break
                    pf.pop(0)
                    f = fin[j] = cur + 1 - int(1.0 - float(reqs[j].output)) // e
                    heapq.heappush(by_finish, (f, order, j))
                    order += 1
                    top_fin = max(top_fin, f)
                cur += 1
            cur = max(cur, x)

        for attempt in range(AHEAD_TRIES):
            by_finish[:] = queue  # sorted: a heap
            pieces.clear()
            fin.clear()
            pf[:] = [[j, prefilled[j], reqs[j].prompt] for j in pre]
            for j in pre:
                pieces[j] = []
            live = len(queue) + len(pre)  # decoding or prefilling (static batching keeps the finished as well)
            walked = 0  # steps walked while planning
            order = len(active)
            room_used = reserved
            top_fin = last_fin
            cur = 0 if pre else 1
            prev = 1
            adm: list[tuple[int, int]] = []  # (request, step admitted), in admission order
            checks: list[tuple[int, int, int]] = []  # per arrival admitted: (its place in adm, its step lo, prev)
            blocked: list[tuple[int, int, int]] = []  # (place in adm it would take, request, step): waited
            stop: tuple[int, int] | None = None  # the first arrival not planned: (request, prev)
            bound: float = math.inf  # the steps the first candidate not planned leaves (or the arrivals' fence)
            g = 0
            while True:
                if static:
                    break
                if g < len(queued):
                    j, lo, arrival_of = queued[g], prev, False
                elif g < n_wait:  # past the waiting requests planned at once
                    bound = prev
                    break
                else:
                    a_no = g - n_wait
                    j = arrived + a_no
                    if j >= n_req:
                        break
                    if not guess and (shared[j] or a_no >= AHEAD):  # not planned: no prediction needed
                        stop, bound = (j, prev), (adm[-1][1] + 1 if adm else prev)
                        break
                    if not guess:
                        first_guess()
                    lo = max(guess[a_no], prev) if a_no < len(guess) else horizon
                    arrival_of = True
                    if a_no >= AHEAD or lo >= horizon or lo > top_fin or shared[j] or reqs[j].prompt < 1:
                        stop = (j, prev)
                        bound = max(lo + lo // 8 + 2, adm[-1][1] + 1 if adm else 0)
                        break
                s = lo
                admitted = False
                while s < horizon:
                    run_to(s)
                    pop_to(s)
                    if live < cap:
                        if shared[j] or reqs[j].prompt < 1:
                            break  # considered here, not planned: the stretch stops at s
                        need = reserve[j]
                        if room_used + need <= room:
                            admitted = True
                            break
                        if not live:
                            break  # alone it does not fit: the step loop refuses it
                        blocked.append((len(adm), j, s))
                    walked += 1
                    # The next step anything changes: a chunk given (prompts prefilling and rows for them), else a
                    # sequence finishing.
                    if pf and budget - n_rows * (live - len(pf)) > 0:
                        s += 1
                    else:
                        s = by_finish[0][0] if by_finish else horizon
                if not admitted:
                    if arrival_of:
                        stop = (j, prev)
                        bound = min(s, max(lo + lo // 8 + 2, adm[-1][1] + 1 if adm else 0))
                    else:
                        bound = min(s, horizon)
                    break
                if arrival_of:
                    checks.append((len(adm), lo, prev))
                adm.append((j, s))
                pieces[j] = []
                pf.append([j, 0, reqs[j].prompt])
                live += 1
                room_used += need
                prev = s
                g += 1
            if not adm and not pre:
                return None
            run_to(int(min(bound, horizon)))  # every prompt's chunks up to the steps priced (one unfinished is cut)
            spend(WORK_TRY + (len(adm) + len(pre) + sum(len(chunks) for chunks in pieces.values()) + walked) // 3)
            # A prompt still prefilling at the horizon has chunks in the steps after it, unplanned: the steps priced
            # end there (else they run without its rows, as if it waited: 1,981 requests at once, --chunk 256).
            n = int(min(most, top_fin, bound, horizon if pf else math.inf))

            def cut(k: int, adm: list[tuple[int, int]]) -> int:
                """The steps kept: at most ``k``, and none where a request of ``adm`` is still prefilling."""
                again = True
                while again:
                    again = False
                    for j, s in adm:
                        if s >= k:
                            break
                        if pieces[j][-1][0] >= k if j in fin else True:
                            k, again = s, True
                            break
                return k

            n = cut(n, adm)
            kept = [(j, s) for j, s in adm if s < n]
            if n < 1 or (not kept and not pre):
                return None
            # Those of pre prefilled before step n decode after; then those admitted, in order.
            done_pre = [j for j in pre if j in fin and pieces[j][-1][0] < n]
            new = np.array(done_pre + [j for j, _ in kept], dtype=np.int64)
            ends = np.array([pieces[j][-1][0] for j in new.tolist()], dtype=np.int64)  # each prompt's last chunk
            m2 = np.concatenate((members, new))
            pos2 = np.concatenate((positions, np.array([float(reqs[j].prompt) for j in new.tolist()])))
            st2 = np.concatenate((start, ends + 1))
            fin2 = np.concatenate((finish, np.array([fin[j] for j in new.tolist()], dtype=np.int64)))
            gen2 = np.concatenate((gen, 1.0 - (ends + 1) * e))
            own2 = np.concatenate((own, np.zeros(len(new))))
            once = codes_of = rf2 = None
            if read_once:
                codes_of = np.where(own2 > 0, code[m2], -1)
                once = own2
                rf2 = np.concatenate((reads_from if reads_from is not None else start, ends + 1))
            closed = Stretch(pos2, own2, st2, fin2, emitted, pricer.groups, once, codes_of, rf2)
            # The chunk steps' prompt sums: a step of one chunk from the per-chunk sums, others as price sums them.
            by_step: dict[int, list[tuple[int, int, int]]] = {}  # step -> its chunks (request, rows before, rows)
            for j in [*pre, *(j for j, _ in kept)]:
                for y, before, rows in pieces[j]:
                    if y < n:
                        by_step.setdefault(y, []).append((j, before, rows))
            at_steps = sorted(by_step)
            # Every chunk's sums at once, then each step's summed over its chunks (whole numbers: exact in any
            # order, so each step's are the doubles price sums alone; a step of one chunk gets the chunk's own).
            flat = [(x, j, before, rows) for x, y in enumerate(at_steps) for j, before, rows in by_step[y]]
            where_ = np.array([x for x, _, _, _ in flat], dtype=np.intp)
            befores = np.array([float(b) for _, _, b, _ in flat])
            chunk_rows_ = np.array([float(r) for _, _, _, r in flat])
            ending_ = np.array([1.0 if b + r == reqs[j].prompt else 0.0 for _, j, b, r in flat])
            per = pricer.chunk_sums(befores, chunk_rows_, np.zeros(len(flat)))
            n_at = len(at_steps)

            def by_at(values: np.ndarray, where_: np.ndarray = where_, n_at: int = n_at) -> np.ndarray:
                summed: np.ndarray = np.bincount(where_, weights=values, minlength=n_at)
                return summed

            columns_ = [by_at(np.ones(len(flat))), by_at(chunk_rows_), by_at(ending_)]
            group_sums = [(by_at(pa), by_at(pr)) for pa, pr in per]
            if first is not None:
                columns_ = [np.concatenate(([v], c)) for v, c in
                            zip((first.chunks, first.prompt_rows, first.lasts), columns_, strict=True)]
                group_sums = [(np.concatenate(([pa0], pa)), np.concatenate(([pr0], pr)))
                              for (_, _, pa0, pr0), (pa, pr) in zip(first.groups, group_sums, strict=True)]
            at = np.array(([0] if first is not None else []) + at_steps, dtype=np.int64)
            prompts = StepSums(0.0, columns_[0], columns_[1], columns_[2], 0.0,
                               tuple((0.0, 0.0, pa, pr) for pa, pr in group_sums))
            cost, bind = closed.priced_chunked(pricer, n, at, prompts, bare=True)
            bare, cost, bind = cost[n:], cost[:n], bind[:n]
            times = _clock(t, cost)
            # Confirm: an arrival is considered from the first step that starts at or after it, or from the step
            # the request before it was admitted at, whichever is later: the step its admission was planned from.
            bad = next((q for q, lo, before in checks
                        if q < len(kept) and max(bisect.bisect_left(times, reqs[kept[q][0]].arrival, 1), before) != lo),
                       None)
            k = n
            if stop is not None:
                k = min(k, max(bisect.bisect_left(times, reqs[stop[0]].arrival, 1), stop[1]))
            dropped = next(((adm[q][0], before) for q, _, before in checks if q >= len(kept)), None)
            if dropped is not None:  # the first arrival planned past the steps priced: it may come before
                k = min(k, max(bisect.bisect_left(times, reqs[dropped[0]].arrival, 1), dropped[1]))
            if bad is not None:
                if attempt + 1 < AHEAD_TRIES:
                    # Re-predict from the clock priced, less the arrivals' chunks (each step's seconds beyond its
                    # decoding alone, shared by its chunks' rows), which predict adds back where each now falls.
                    seconds = cost.tolist()
                    extra = dict(est)
                    admitted_at_ = {j: s for j, s in kept if j >= arrived}
                    for j in admitted_at_:
                        extra[j] = []
                    for y, decoding_s in zip(at.tolist(), bare.tolist(), strict=True):
                        chunked = by_step.get(y)
                        if not chunked or chunked[0][0] < arrived:
                            continue  # step 0's chunks, or a waiting request's: they stay in the clock
                        over = seconds[y] - decoding_s
                        seconds[y] = decoding_s
                        total = sum(rows for _, _, rows in chunked)
                        for j, _, rows in chunked:  # each where it fell, from its admission
                            extra[j].append((y - admitted_at_[j], over * rows / total))
                    guess[:] = predict(seconds, extra)
                    continue
                j, s = kept[bad]
                lo_bad = next(before for q, _, before in checks if q == bad)
                k = min(k, s, max(bisect.bisect_left(times, reqs[j].arrival, 1), lo_bad))
                kept = kept[:bad]
            k = cut(k, adm)
            kept = [(j, s) for j, s in kept if s < k]
            waits = [(j, x) for q, j, x in blocked if x < k and (bad is None or q < bad)]
            keep = np.zeros(len(m2), dtype=bool)
            keep[:len(members)] = True
            keep[len(members):len(members) + len(done_pre)] = ends[:len(done_pre)] < k
            keep[len(members) + len(done_pre):len(members) + len(done_pre) + len(kept)] = True
            return (m2[keep], pos2[keep], st2[keep], fin2[keep], gen2[keep], cost[:k], bind[:k], times[1:k + 1],
                    times[k], k, kept, {j: pieces[j] for j in [*pre, *(j for j, _ in kept)]}, waits)
        return None  # pragma: no cover - the last try always returns

    def stretch(
        dec: np.ndarray,
        positions: np.ndarray,
        dec_shared: np.ndarray,
        chunks: tuple[list[int], list[int], list[bool], list[float]] | None = None,
        pre: list[int] | None = None,
    ) -> bool:
        """Run the steps from this one that carry the decoding sequences ``dec`` and nothing else — or, with
        ``chunks`` (requests, rows, last, prefix positions read once), this step also the prompt chunks that end
        every prompt still prefilling, whose requests decode from the next: until a sequence finishes when
        something could follow it (a prompt waits for rows, or a request for room), else until the last does; in
        continuous batching with nobody waiting, until the next arrival — or, when :func:`ahead` predicts them,
        through the next arrivals that are admitted at once and prefill in one chunk each, until the first that is
        not; and no further than ``max_steps``. With ``pre`` (the requests prefilling, none with a shared prefix, and
        whole emitted tokens) this step's and the next steps' prompt chunks are planned as :func:`ahead` plans
        them; ``False`` when nothing could be planned (nothing has run). Every step is the one the step-by-step loop
        prices, in the same order of additions, and every admission, retirement and peak the one it records."""
        nonlocal t, steps, carried, peak_held, done, reserved, peak_sequences, peak_reserved, arrived
        nonlocal guess_from, guess_wait
        spend(WORK_STRETCH)
        drained = not prefilling or chunks is not None  # no prompt waits for rows after this step
        inside = whole and drained and (policy is Policy.STATIC or not waiting)
        arrival = reqs[arrived].arrival if policy is Policy.CONTINUOUS and not waiting and arrived < n_req else None
        end: float = max_steps - steps if max_steps is not None else math.inf
        outs = out_tokens[dec]
        gen = generated[dec]
        members, fresh = dec, 0
        spec: tuple[Any, ...] | None = None
        adm: list[tuple[int, int]] = []  # requests admitted inside the stretch (ahead), and the step of each
        pieces: dict[int, list[tuple[int, int, int]]] = {}  # and their prompt chunks: (step, rows before, rows)
        through = False  # a drafting stretch run through its finishes (below)
        if whole:
            e = int(emitted)
            start = np.zeros(len(dec), dtype=np.int64)
            finish = -((gen - outs).astype(np.int64) // e)
            first = None
            own = dec_shared
            if chunks is not None:
                # Prompts that end in step 0 decode from step 1 (finish there with one output token).
                chunk_j, chunk_rows, _, pre_shared = chunks
                fresh = len(chunk_j)
                new = np.array(chunk_j, dtype=np.int64)
                members = np.concatenate((dec, new))
                first = pricer.sums(StepRows(np.empty(0), np.empty(0),
                                             np.array([prefilled[j] for j in chunk_j], dtype=float),
                                             np.array(chunk_rows, dtype=float), np.ones(fresh, dtype=bool),
                                             np.array(pre_shared, dtype=float)))
                positions = np.concatenate((positions, [float(reqs[j].prompt) for j in chunk_j]))
                gen = np.concatenate((gen, np.full(fresh, 1.0 - e)))
                outs = out_tokens[members]
                start = np.concatenate((start, np.ones(fresh, dtype=np.int64)))
                finish = np.concatenate((finish, 1 - ((1.0 - out_tokens[new]).astype(np.int64) // e)))
                own = np.concatenate((dec_shared, shared_arr[new] if read_once else np.zeros(fresh)))
            if len(finish):
                end = min(end, int(finish.max() if inside else finish.min()))
            once = codes_of = reads_from = None
            if read_once:
                codes_of = np.where(own > 0, code[members], -1)
                once = own
                reads_from = start.copy()
                if chunks is not None:
                    reads_from[len(dec):] = np.where(np.array(chunks[3]) > 0, 0, 1)
            if pre or (policy is Policy.CONTINUOUS and drained and (waiting or arrived < n_req)
                       and (waiting or pace[0] > 0.0) and steps >= guess_from):
                closed = Stretch(positions, own, start, finish, emitted, pricer.groups, once, codes_of, reads_from,
                                 first)
                work0 = work
                spec = ahead(members, positions, own, start, finish, gen, reads_from, first, closed, pre or (),
                             policy is Policy.STATIC)
                if spec is None and pre:
                    return False
                if not pre:
                    # A try that plans nobody (the next arrival predicted past the last finish) lost its units:
                    # the next tries wait, as PLAN_BACKOFF's do (attack round 35).
                    if spec is None:
                        guess_wait += 1
                        alone0 = WORK_ALONE + len(active) // WORK_ALONE_SEQUENCES
                        guess_from = steps + ((work - work0) // alone0 + 1) * PLAN_BACKOFF ** min(guess_wait, 8)
                    else:
                        guess_wait = 0
            elif spec is None:
                closed = Stretch(positions, own, start, finish, emitted, pricer.groups, once, codes_of, reads_from,
                                 first)
        else:
            rows_now, gen_now = positions, gen
            reading = set(code[dec][dec_shared > 0].tolist()) if read_once else set()
            once_now = float(sum(code_positions[c] for c in sorted(reading)))
            # Static batching with no prompt left runs its batch through its finishes (nothing joins): each
            # sequence's positions advanced one pass at a time, a step's sums over the sequences still decoding, in
            # their order (a C-contiguous copy of their columns: each row sums as that step's positions alone).
            # Continuous batching likewise while nobody waits: a finish retires its sequence, nothing joins before
            # the next arrival (the stretch ends at it).
            through = drained and not read_once and len(dec) > 1 and (policy is Policy.STATIC or not waiting)
            snaps: dict[int, np.ndarray] = {}  # continuous: every sequence's positions after each finishing step
            alive = np.arange(len(dec))
            ended_at = np.full(len(dec), -1, dtype=np.int64)  # the step after each one's last pass
            pos_end = np.array(positions, dtype=float)
            gen_end = np.array(gen, dtype=float)

            def through_block(i0: int, i1: int) -> tuple[np.ndarray, np.ndarray, int]:
                """Price steps ``i0`` … ``i1`` − 1 of the batch (fewer: up to the last finish, and no more than
                :data:`BLOCK` positions); the sequences that finish in them leave the steps after."""
                nonlocal alive
                i1 = min(i1, i0 + max(BLOCK // len(alive), 1),
                         i0 + _passes_left(gen_end[alive], outs[alive], emitted, max))
                trail = advance(pos_end[alive], emitted, i1 - i0)
                gen_rows = advance(gen_end[alive], emitted, i1 - i0)
                done_ = gen_rows[1:] >= outs[alive]  # row r: after step i0 + r
                over = done_.any(axis=0)
                last_r = np.where(over, np.argmax(done_, axis=0), i1 - i0 - 1)  # the row of each one's last pass
                if over.all():
                    i1 = i0 + int(last_r.max()) + 1
                # Segments of steps with the same sequences decoding: split after each step a sequence ends in.
                finishing = set((last_r[over] + 1).tolist())
                cuts = sorted(finishing | {i1 - i0})
                parts: list[StepSums] = []
                sizes: list[int] = []
                lo = 0
                keep = np.ones(len(alive), dtype=bool)
                for hi in cuts:
                    if hi > i1 - i0:
                        break
                    if policy is Policy.CONTINUOUS and hi in finishing:
                        ends_ = np.minimum(np.where(over, last_r + 1, hi), hi)
                        snap = pos_end.copy()
                        snap[alive] = trail[ends_, np.arange(len(alive))]
                        snaps[i0 + hi - 1] = snap
                    cols = np.flatnonzero(keep)
                    rows = np.ascontiguousarray(trail[lo:hi][:, cols]) if len(cols) < len(alive) else trail[lo:hi]
                    parts.append(stepwise_sums(rows, dec_shared[alive[cols]], pricer.groups, 0.0))
                    sizes.append(hi - lo)
                    keep &= ~(over & (last_r + 1 == hi))
                    lo = hi
                n_ = np.concatenate([np.full(size_, part.decode) for size_, part in zip(sizes, parts, strict=True)])
                groups_ = tuple((np.concatenate([part.groups[q][0] for part in parts]),
                                 np.concatenate([part.groups[q][1] for part in parts]), 0.0, 0.0)
                                for q in range(len(pricer.groups)))
                spend(WORK_SEGMENT * len(parts) + trail.size // WORK_ELEMENTS)
                c_, b_ = pricer.price_many(StepSums(n_, 0.0, 0.0, 0.0, 0.0, groups_))
                block[:] = [trail, gen_rows, over, last_r]
                return c_, b_, i1

            block: list[np.ndarray] = []

            def through_keep(n: int) -> None:
                """Keep the block's first ``n`` steps (an arrival may cut it): those that ended in them at their
                last pass, the others after step ``n``."""
                nonlocal alive
                trail, gen_rows, over, last_r = block
                fin_cols = np.flatnonzero(over & (last_r < n))
                ended_at[alive[fin_cols]] = i0 + last_r[fin_cols] + 1
                pos_end[alive[fin_cols]] = trail[last_r[fin_cols] + 1, fin_cols]
                gen_end[alive[fin_cols]] = gen_rows[last_r[fin_cols] + 1, fin_cols]
                still = np.flatnonzero(~over | (last_r >= n))
                pos_end[alive[still]] = trail[n, still]
                gen_end[alive[still]] = gen_rows[n, still]
                alive = alive[still]
        after: list[float] = []  # when each step ends
        if spec is not None:
            members, positions, start, finish, gen, cost, bind, after, now, k, adm, pieces, waits = spec
            for j, _ in waits:
                waited[j] = True
        else:
            costs: list[np.ndarray] = []
            bound: list[np.ndarray] = []
            now = t
            i0 = 0
            size = 16
            if arrival is not None and pace[0] > 0.0:
                size = max(int((arrival - t) / pace[0] * 1.25) + 2, 4)
            while i0 < end:
                if i0:
                    spend(WORK_BLOCK)
                i1 = int(min(i0 + size, end))
                if whole:
                    c, b = closed.priced(pricer, np.arange(i0, i1))
                elif through:
                    c, b, i1 = through_block(i0, i1)
                else:
                    i1 = min(i1, i0 + max(BLOCK // len(dec), 1), i0 + _passes_left(gen_now, outs, emitted, min))
                    trail = advance(rows_now, emitted, i1 - i0)
                    gen_rows = advance(gen_now, emitted, i1 - i0)
                    over = (gen_rows[1:] >= outs).any(axis=1)
                    if over.any():
                        i1 = end = i0 + int(np.argmax(over)) + 1
                    c, b = pricer.price_many(stepwise_sums(trail[: i1 - i0], dec_shared, pricer.groups, once_now))
                times = _clock(now, c)
                if arrival is not None:
                    # Step i (i ≥ 1) runs only if the arrival is still ahead when it starts.
                    for n in range(max(1 - i0, 0), len(times) - 1):
                        if times[n] >= arrival:
                            i1 = end = i0 + n
                            c, b, times = c[:n], b[:n], times[: n + 1]
                            break
                if through:
                    through_keep(i1 - i0)
                    if not alive.size:
                        end = i1
                elif not whole:
                    rows_now, gen_now = trail[i1 - i0], gen_rows[i1 - i0]
                costs.append(c)
                bound.append(b)
                after += times[1:]
                now = times[-1]
                i0 = i1
                size = min(size * 4, BLOCK)
            k = i0
            cost = np.concatenate(costs) if len(costs) > 1 else costs[0]
            bind = np.concatenate(bound) if len(bound) > 1 else bound[0]
        pace[0] = float(cost[-1])
        counts = np.bincount(bind, minlength=len(bind_names))
        for index in np.flatnonzero(counts).tolist():
            name = bind_names[index]
            binds[name] += int(counts[index])
            mine = cost[bind == index] if counts[index] < k else cost
            bind_s[name] = _clock(bind_s[name], mine)[-1]
        t = now
        steps += k
        if whole:
            taken = np.minimum(finish, k)
            carried += int(np.maximum(taken - start, 0).sum()) + fresh + sum(len(pieces[j]) for j, _ in adm)
            carried += sum(y < k for j in pre or () for y, _, _ in pieces[j])
            base = positions - start * emitted
            final = base + taken * emitted
            made_final = gen + taken * emitted
        elif through:
            finish = np.where(ended_at >= 0, ended_at, k + 1)
            carried += int(np.minimum(finish, k).sum())
            final, made_final = pos_end, gen_end
        else:
            carried += k * len(dec)
            final, made_final = rows_now, gen_now
            finish = np.where(made_final >= outs, k, k + 1)
        if chunks is not None:
            # Step 0 wrote every prompt's last rows: their first tokens, their prefixes now held.
            for j, rows in zip(chunks[0], chunks[1], strict=True):
                prefilled[j] += rows
                rows_done[j] += rows
                first_at[j] = after[0]
                pid = reqs[j].prefix_id
                if shared[j] and pid is not None and not hit[j]:
                    prefixes[pid].ready = True
                if reqs[j].output > 1:
                    decoding.append(j)
            prefilling.clear()
        if pre:
            # The prompts prefilling: their chunks before step k; a prompt done wrote its first token.
            for j in pre:
                rows = sum(r for y, _, r in pieces[j] if y < k)
                prefilled[j] += rows
                rows_done[j] += rows
                if prefilled[j] == reqs[j].prompt:
                    first_at[j] = after[pieces[j][-1][0]]
                    if reqs[j].output > 1:
                        decoding.append(j)
                else:
                    length[j] = float(prefilled[j])
            prefilling[:] = [j for j in prefilling if prefilled[j] < reqs[j].prompt]
        for j, _ in adm:
            # Admitted at the top of a step; its last chunk wrote its first token.
            rows = reqs[j].prompt
            prefilled[j] += rows
            rows_done[j] += rows
            first_at[j] = after[pieces[j][-1][0]]
            if reqs[j].output > 1:
                decoding.append(j)
        ending = np.flatnonzero(finish <= k)
        joined = 0
        # Prompts prefilled after the step they joined at (several chunks, or queued behind others' chunks; or from
        # before step 0): their rows so far until their last chunk.
        split = [(j, -1) for j in pre or () if pieces[j]] + [(j, s) for j, s in adm if pieces[j][-1][0] > s]

        def join(i: int) -> None:
            """Admit the requests admitted at the tops of steps up to ``i``, as :func:`admit` does."""
            nonlocal joined, reserved, peak_sequences, peak_reserved, arrived
            while joined < len(adm) and adm[joined][1] <= i:
                s = adm[joined][1]
                while joined < len(adm) and adm[joined][1] == s:
                    j = adm[joined][0]
                    active.append(j)
                    reserved += reserve[j]
                    admitted_at[j] = after[s - 1]
                    if waiting and waiting[0] == j:
                        waiting.popleft()
                    else:
                        arrived += 1
                    joined += 1
                peak_sequences = max(peak_sequences, len(active))
                peak_reserved = max(peak_reserved, weights + reserved)

        def held_sums(at_steps: np.ndarray, members: np.ndarray, base: np.ndarray, finish: np.ndarray,
                      adm: list[tuple[int, int]], split: list[tuple[int, int]]) -> dict[int, float]:
            """What :func:`held_now` sums at the end of each of ``at_steps`` (before its retirements): the bytes the
            active sequences hold, all steps at once — only where every sequence holds a whole number of bytes (a
            sum of whole numbers below 2^53 is exact in any order, so each is the double held_now adds up); else
            empty. ``members``, ``base`` and ``finish`` as the stretch's; ``adm`` (the last members) join at their
            steps; ``split``: those prefilled over several steps, their rows so far until their last."""
            if len(at_steps) * len(members) > 1 << 21:
                return {}
            inside_ = set(members.tolist())
            others = np.array([j for j in active if j not in inside_], dtype=np.intp)
            fixed = pricer.held(length[others], shared_arr[others])
            steps_ = at_steps[:, None]
            joined_at = np.full(len(members), -1, dtype=np.int64)
            if adm:
                joined_at[len(members) - len(adm):] = [s for _, s in adm]
            lengths = base + np.minimum(finish, steps_ + 1) * emitted
            column = {j: len(members) - len(adm) + q for q, (j, _) in enumerate(adm)}
            # a prompt prefilling over several steps: its rows so far at each step, a few NumPy calls each
            spend(len(split) * WORK_PEAK_ROWS // 2 + len(at_steps) * len(members) // WORK_ELEMENTS)
            for j, s in split:
                ys = np.array([y for y, _, _ in pieces[j]], dtype=np.int64)
                so_far = np.concatenate(([0], np.cumsum([rows for _, _, rows in pieces[j]], dtype=np.int64)))
                during = (s <= at_steps) & (at_steps < ys[-1])
                counted = so_far[np.searchsorted(ys, at_steps, side="right")].astype(float)
                lengths[during, column[j]] = counted[during]
            held = pricer.held(lengths, shared_arr[members])
            if not (np.array_equal(held, np.floor(held)) and np.array_equal(fixed, np.floor(fixed))):
                return {}
            total = np.where((joined_at <= steps_) & (finish > steps_), held, 0.0).sum(axis=1) + float(fixed.sum())
            return dict(zip(at_steps.tolist(), total.tolist(), strict=True))

        def held_peak(at_steps: np.ndarray, members: np.ndarray, base: np.ndarray, finish: np.ndarray,
                      adm: list[tuple[int, int]], split: list[tuple[int, int]]) -> float | None:
            """The most :func:`held_now` sums (less the weights) at the end of any of ``at_steps`` (sorted; before
            each one's retirements), every step at once: the members' bytes in closed form
            (:func:`~passprice.stretch.held_totals`), those of the prompts still prefilling (``split``: their rows
            so far) and of the other active sequences summed step by step. Only where no sequence holds a shared
            prefix, and every sequence a whole number of bytes (a sum of whole numbers below 2^53 is exact in any
            order, so each total is the double held_now adds up); else ``None``. Arguments as :func:`held_sums`'."""
            inside_ = set(members.tolist())
            others = np.array([j for j in active if j not in inside_], dtype=np.intp)
            if shared_arr[members].any() or shared_arr[others].any():
                return None
            joined_at = np.full(len(members), -1, dtype=np.int64)
            if adm:
                joined_at[len(members) - len(adm):] = [s for _, s in adm]
            cut_at = dict(split)  # request -> the step from which its rows so far count (its admission, or -1)
            cut = np.array([j in cut_at for j in members.tolist()], dtype=bool)
            totals_ = held_totals(pricer, base[~cut], emitted, joined_at[~cut], finish[~cut], at_steps)
            if totals_ is None:
                return None
            totals: np.ndarray = totals_
            # The prompts prefilling (members, and others with chunks planned): each one's positions at each step,
            # one row a sequence; the other active sequences hold what they hold now at every step (a column).
            member_rows = np.flatnonzero(cut)
            varying = [j for j in others.tolist() if cut_at.get(j) is not None and pieces[j]]
            steady = others[[cut_at.get(j) is None or not pieces[j] for j in others.tolist()]] if len(
                varying) else others
            js = np.concatenate((members[member_rows], np.array(varying, dtype=np.intp))).astype(np.intp)
            n_rows_ = len(js)
            chunked = [q for q, j in enumerate(js.tolist()) if cut_at.get(j) is not None and pieces[j]]
            n_pieces = sum(len(pieces[int(js[q])]) for q in chunked)
            block_ = max(PEAK_BLOCK // max(n_rows_, 1), 1)  # steps a matrix of rows x steps covers
            spend(WORK_PEAK + (len(others) + n_rows_) // WORK_PEAK_SEQUENCES + n_pieces // WORK_LOOKS
                  + n_rows_ * len(at_steps) // WORK_ELEMENTS)
            if len(steady):
                fixed = pricer.held(length[steady], 0.0)
                if not np.array_equal(fixed, np.floor(fixed)):
                    return None
                totals = totals + float(fixed.sum())  # whole numbers: exact in any order below 2^53
            if n_rows_:
                base_ = np.concatenate((base[member_rows], np.full(len(varying), math.nan)))
                begin_ = np.concatenate((joined_at[member_rows], np.full(len(varying), -1, dtype=np.int64)))
                end_ = np.concatenate((finish[member_rows], np.full(len(varying), _ALWAYS, dtype=np.int64)))
                now_ = length[js]
                steady_rows = np.isnan(base_)[:, None]
                if chunked:
                    # Each chunked row's pieces in one sorted array, keyed (row, step): the rows so far at a step
                    # are the rows before its first piece and those of its pieces at or before it.
                    q_of = np.array(chunked, dtype=np.int64)
                    flat = [(q, y, r) for q in chunked for y, _, r in pieces[int(js[q])]]
                    ys_ = np.array([y for _, y, _ in flat], dtype=np.int64)
                    wide = int(max(int(ys_.max()), int(at_steps.max()))) + 2
                    keys = np.array([q for q, _, _ in flat], dtype=np.int64) * wide + ys_
                    so_far = np.concatenate(([0], np.cumsum(np.array([r for _, _, r in flat], dtype=np.int64))))
                    sizes_ = np.array([len(pieces[int(js[q])]) for q in chunked], dtype=np.int64)
                    first_ = np.concatenate(([0], np.cumsum(sizes_)[:-1]))
                    before_ = np.array([pieces[int(js[q])][0][1] for q in chunked], dtype=np.int64)
                    from_ = np.array([cut_at[int(js[q])] for q in chunked], dtype=np.int64)
                    last_y = ys_[first_ + sizes_ - 1]
                best = -math.inf
                for a0 in range(0, len(at_steps), block_):
                    at_ = at_steps[a0:a0 + block_]
                    lengths = np.where(steady_rows, now_[:, None], base_[:, None] + (at_ + 1) * emitted)
                    if chunked:
                        idx = np.searchsorted(keys, q_of[:, None] * wide + at_[None, :], side="right")
                        counted = before_[:, None] + so_far[idx] - so_far[first_][:, None]
                        during = (from_[:, None] <= at_) & (at_ < last_y[:, None])
                        lengths[q_of] = np.where(during, counted.astype(float), lengths[q_of])
                    held = pricer.held(lengths, 0.0)
                    if not np.array_equal(held, np.floor(held)):
                        return None
                    live = (begin_[:, None] <= at_) & (at_ < end_[:, None])
                    part = totals[a0:a0 + block_] + np.where(live, held, 0.0).sum(axis=0)
                    best = max(best, float(part.max()))
                if best >= 2.0 ** 53:
                    return None
                return best
            if float(totals.max()) >= 2.0 ** 53:
                return None
            return float(totals.max())

        def held_now(among: list[int] | None = None) -> float:
            live = np.array(active if among is None else among, dtype=np.intp)  # indexed twice: converted once
            held = weights + float(pricer.held(length[live], shared_arr[live]).sum())
            return held + prefix_bytes()

        # The peak held only grows between finishes, so it is reached at a finishing step or the last. Where
        # finished sequences leave (continuous batching), at each finishing step — unless every sequence at its last
        # position, none gone, stays below the peak.
        continuous = policy is Policy.CONTINUOUS
        length[members] = final
        top = held_now(active + [j for j, _ in adm]) if adm else held_now()
        check = continuous and len(ending) > 0 and top * (1.0 + 1e-9) > peak_held
        last_check = check  # the stretch's last step, when no sequence finishes in it
        if not continuous or not len(ending):
            peak_held = max(peak_held, top)
        if check and whole and not prefixes:
            # The peak over the finishing steps at once (no prefix held: none is admitted or retired in a stretch,
            # so each step's check adds 0 bytes of prefixes): the largest of weights + sum is weights + the largest sum.
            most_held = held_peak(np.unique(finish[ending] - 1), members, base, finish, adm, split)
            if most_held is not None:
                peak_held = max(peak_held, weights + most_held)
                check = False
        sums_at = held_sums(np.unique(finish[ending] - 1), members, base, finish, adm, split) if (
            check and whole and len(ending) > 1 and not pre) else {}
        if len(ending):
            order = ending[np.argsort(finish[ending], kind="stable")]
            at = (finish[order] - 1).tolist()
            who = members[order].tolist()
            x = 0
            while x < len(who):
                i = at[x]
                join(i)
                y = x
                while y < len(who) and at[y] == i:
                    y += 1
                ended = who[x:y]
                x = y
                if check and i in sums_at:
                    peak_held = max(peak_held, weights + sums_at[i] + prefix_bytes())
                elif check:
                    length[members] = base + np.minimum(finish, i + 1) * emitted if whole else (
                        snaps[i] if through else final)
                    for j, s in split:  # a prompt admitted and not yet prefilled: its rows so far
                        if s <= i < pieces[j][-1][0]:
                            length[j] = float(pieces[j][0][1] + sum(rows for y, _, rows in pieces[j] if y <= i))
                    peak_held = max(peak_held, held_now())
                when = after[i]
                for j in ended:
                    finished[j] = True
                    finished_at[j] = when
                done += len(ended)
                if continuous:  # the sequences ended in this step are the finished ones still active
                    for j in sorted(ended, key=active.index) if len(ended) > 1 else ended:
                        retire(j)
                        active.remove(j)
                elif x == len(who) and all(finished[j] for j in active):  # only the last can end the batch
                    for j in active:
                        retire(j)
                    active.clear()
            gone = set(who)
            decoding[:] = [j for j in decoding if j not in gone]
            join(k)
            if last_check and at[-1] != k - 1 and active:
                length[members] = final
                peak_held = max(peak_held, held_now())
        join(k)
        length[members] = final
        generated[members] = made_final
        if len(ending) and progress is not None:
            progress(len(ending))
        spend(k // 64 + len(ending))  # every step and every request finished costs some bookkeeping
        return True

    def retire(j: int) -> None:
        nonlocal reserved
        reserved -= reserve[j]
        pid = reqs[j].prefix_id if shared[j] else None
        if pid is not None:
            p = prefixes[pid]
            p.refs -= 1
            if p.refs == 0:
                reserved -= p.bytes
                del prefixes[pid]

    while done < n_req:
        while arrived < n_req and reqs[arrived].arrival <= t:
            waiting.append(arrived)
            arrived += 1
        if policy is Policy.CONTINUOUS or not active:
            admit()
        if not active:
            t = max(t, reqs[arrived].arrival)
            continue
        if max_steps is not None and steps >= max_steps:
            raise InputError(
                f"simulate: the {policy.value} run passed the {max_steps:,} steps --max-steps allows, {t:,.1f} s into "
                f"the trace with {done:,} of {n_req:,} requests served; simulate part of the trace, or raise "
                "--max-steps"
            )
        peak_sequences = max(peak_sequences, len(active))
        peak_reserved = max(peak_reserved, weights + reserved)

        # The step: every decoding sequence's pass, then prompt rows in admission order up to the budget.
        dec = np.array(decoding, dtype=int)
        free = budget - n_rows * len(decoding)
        chunk_j: list[int] = []
        chunk_rows: list[int] = []
        scanned = 0
        for j in prefilling:
            if free <= 0:
                break
            scanned += 1
            if hit[j] and not prefixes[reqs[j].prefix_id or ""].ready:
                continue
            rows = min(free, reqs[j].prompt - prefilled[j])
            chunk_j.append(j)
            chunk_rows.append(rows)
            free -= rows
        if not len(dec) and not chunk_j:  # pragma: no cover - a prefix's first request always makes progress
            raise RuntimeError("a step with nothing to run")
        if stretches and not chunk_j:
            stretch(dec, length[dec], shared_arr[dec] if read_once else np.zeros(len(dec)))
            continue
        starts = [prefilled[j] for j in chunk_j]
        last = [prefilled[j] + c == reqs[j].prompt for j, c in zip(chunk_j, chunk_rows, strict=True)]
        positions = length[dec]
        if read_once:
            dec_shared = shared_arr[dec]
            pre_shared = [float(shared[j]) if prefilled[j] >= shared[j] else 0.0 for j in chunk_j]
        else:
            dec_shared = np.zeros(len(dec))
            pre_shared = [0.0] * len(chunk_j)
        if stretches and whole and all(last) and len(chunk_j) == len(prefilling):
            # Every prompt still prefilling ends in this step: the steps after it only decode.
            stretch(dec, positions, dec_shared, (chunk_j, chunk_rows, last, pre_shared))
            continue
        if stretches and whole and steps >= plan_from and not any(shared[j] for j in prefilling):
            # The prompts' chunks over the next steps, planned; a try that costs more than the steps it keeps
            # would have cost alone backs the planning off (PLAN_BACKOFF).
            work0, steps0, alone0 = work, steps, WORK_ALONE + len(active) // WORK_ALONE_SEQUENCES
            planned = stretch(dec, positions, dec_shared, pre=list(prefilling))
            lost = work - work0 - (steps - steps0) * alone0
            if lost > 0:
                plan_wait += 1
                plan_from = steps + (lost // alone0 + 1) * PLAN_BACKOFF ** min(plan_wait, 8)
            else:
                plan_wait = 0
            if planned:
                continue
        if read_once:
            reading = set(code[dec][dec_shared > 0].tolist())
            reading |= {int(code[j]) for j, s in zip(chunk_j, pre_shared, strict=True) if s > 0}
            once = float(sum(code_positions[c] for c in sorted(reading)))
        else:
            once = 0.0
        spend(WORK_ALONE + len(active) // WORK_ALONE_SEQUENCES)
        cost = pricer.price(
            StepRows(positions, dec_shared, np.array(starts, dtype=float), np.array(chunk_rows, dtype=float),
                     np.array(last, dtype=bool), np.array(pre_shared, dtype=float), once)
        )
        t += cost.pass_s
        steps += 1
        carried += len(dec) + len(chunk_j)
        binds[cost.binds.value] += 1
        bind_s[cost.binds.value] += cost.pass_s

        # Decoding sequences advance by the tokens a pass emits; those past their output finish.
        newly = 0
        if len(dec):
            length[dec] = positions + emitted
            generated[dec] += emitted
            over = generated[dec] >= out_tokens[dec]
            if over.any():
                ended = set(dec[over].tolist())
                for j in ended:
                    finished[j] = True
                    finished_at[j] = t
                newly += len(ended)
                decoding[:] = [j for j in decoding if j not in ended]
        # Prompt chunks write their rows; a prompt's last row gives its first token.
        for j, rows, end in zip(chunk_j, chunk_rows, last, strict=True):
            prefilled[j] += rows
            rows_done[j] += rows
            length[j] = float(prefilled[j])
            pid = reqs[j].prefix_id
            if shared[j] and pid is not None and not hit[j] and prefilled[j] >= shared[j]:
                prefixes[pid].ready = True
            if end:
                first_at[j] = t
                generated[j] = 1.0
                if reqs[j].output <= 1:
                    finished[j] = True
                    finished_at[j] = t
                    newly += 1
                else:
                    decoding.append(j)
        if any(last):  # only the prompts given rows can have ended
            prefilling[:scanned] = [j for j in prefilling[:scanned] if prefilled[j] < reqs[j].prompt]

        held = weights + float(pricer.held(length[active], shared_arr[active]).sum())
        held += prefix_bytes()
        peak_held = max(peak_held, held)

        # Retire: continuous every step; static when its whole batch has ended.
        if newly:
            done += newly
            if policy is Policy.CONTINUOUS:
                for j in [j for j in active if finished[j]]:
                    retire(j)
                active[:] = [j for j in active if not finished[j]]
            elif all(finished[j] for j in active):
                for j in active:
                    retire(j)
                active.clear()
            if progress is not None:
                progress(newly)

    records = [
        Record(
            request=r,
            admitted=admitted_at[j],
            first_token=first_at[j],
            finished=finished_at[j],
            shared=shared[j],
            prefix_hit=hit[j],
            prompt_rows=rows_done[j],
            waited_for_memory=waited[j],
        )
        for j, r in enumerate(reqs)
    ]
    records.sort(key=lambda rec: rec.request.index)
    return Outcome(
        policy=policy,
        records=tuple(records),
        steps=steps,
        binds=binds,
        bind_s=bind_s,
        peak_held=peak_held,
        peak_reserved=peak_reserved,
        peak_sequences=peak_sequences,
        mean_sequences=carried / steps if steps else 0.0,
        capacity=capacity,
        weights=weights,
        work=work,
    )


#: A synthetic trace's cut clause counting one prompt or one output (:func:`passprice.trace.synthetic` writes
#: ``88 prompts (to at most …) and 1 outputs``): the words :func:`counted_trace` makes singular.
_ONE_CUT = re.compile(r"(?<=positions: )1 prompts(?= \(to at most )|(?<=for the output\) and )1 outputs\b")


def counted_trace(summary: dict[str, Any]) -> dict[str, Any]:
    """A trace's ``summary`` (:meth:`passprice.trace.Trace.summary`) with its ``source``'s cut clause counting one
    prompt or output in the singular: a new user's ``simulate … --synthetic 1000 --seed 2 --rate 200`` read "88
    prompts … and 1 outputs" (tests/test_fix166.py). Said here, where the summary is printed: the trace module is
    part of the pricing model, which locks pin by digest. Raises nothing."""
    source = summary.get("source")
    if not isinstance(source, str) or "1 " not in source:
        return summary
    return {**summary, "source": _ONE_CUT.sub(lambda m: m.group(0)[:-1], source)}


@attrs.frozen
class Simulation:
    """Every policy's run of one trace on one serving: ``title`` (serving, checkpoint, card), ``serving`` (its
    registered name; ``None`` for a checkpoint and card given on the command line), the trace's
    ``summary`` (its source's counts said as :func:`counted_trace` says them), the ``settings``, the ``pricer`` (its
    facts) and the ``outcomes`` in policy order; ``max_tpot``: the serving's TPOT cap (seconds, its file's
    ``max_tpot``; ``None``: none), which a simulation does not enforce (admission takes sequences up to
    ``settings.max_batch`` while memory holds them, whatever their steps' TPOT): the text and ``--json`` say so, and
    how many requests of each policy had a TPOT above it."""

    title: str
    serving: str | None
    trace: dict[str, Any] = attrs.field(converter=counted_trace)
    settings: Settings
    pricer: StepPricer
    outcomes: tuple[Outcome, ...]
    max_tpot: float | None = None

    def setup(self) -> dict[str, Any]:
        """The engine's settings as run: budget, cap, cache layout, prefix handling (JSON-ready)."""
        p = self.pricer
        rows = p.rows_on_chip()
        return {
            "chunk_rows": min(self.settings.chunk, rows),
            "rows_on_chip": rows,
            "max_batch": min(self.settings.max_batch, rows // p.shape.rows_per_sequence),
            "kv_page": p.kv_page,
            "limit": p.limit,
            "prefix_caching": self.settings.prefix_caching and p.kv_page is not None,
            "prefix_read_once": self.settings.read_once and self.settings.prefix_caching and p.kv_page is not None,
            "rows_per_sequence": p.shape.rows_per_sequence,
            "emitted_per_pass": p.shape.emitted_per_sequence,
            "admission": "full length reserved",
        }


def written_as_json(as_json: bool, output: Path | None) -> bool:
    """Whether a simulation is written as JSON: ``--json`` given, or ``-o FILE.json`` (a link: its target's name),
    as ``sweep -o`` follows its file's suffix; else the text table, also into a file whose suffix names no format
    passprice writes (``.txt``, none). ``simulate -o run.json`` wrote the text table into the ``.json`` file (attack
    round 27). Raises :class:`InputError` for a suffix naming another format passprice writes (``.csv``, ``.toml``,
    ``.gz`` …: :func:`passprice.files.suffix_format`)."""
    from passprice.files import suffix_format

    if output is None or str(output) == "-":
        return as_json
    said = suffix_format(output, "-o", (".json",), "a simulation (a text table, or JSON)",
                         ".json for JSON, or .txt for the table")
    return as_json or said == ".json"


def simulation_json(sim: Simulation, with_requests: bool = True, as_table: bool = False) -> dict[str, Any]:
    """The ``--json`` object: title, serving, trace, setup, per policy its summary (and, ``with_requests``, every
    request's record: a list of dicts, or with ``as_table`` the :class:`~passprice.jsontext.Table` of them, which
    :func:`passprice.jsontext.dumps` writes as the same text without making the dicts), then the provenance, the
    facts the step prices rest on, and the weakest paths."""
    rests = sim.pricer.rests_on()
    provenance = sim.pricer.provenance()
    policies: dict[str, Any] = {}
    for o in sim.outcomes:
        entry = o.summary()
        if with_requests:
            table = records_table(o.records)
            entry["records"] = table if as_table else table.records()
        if sim.max_tpot is not None:  # the cap is not enforced: the requests it would have kept out, counted
            entry["requests_over_max_tpot"] = o.over_tpot(sim.max_tpot)
        policies[o.policy.value] = entry
    setup = sim.setup()
    if sim.max_tpot is not None:
        setup["max_tpot_s"] = sim.max_tpot
        setup["max_tpot_enforced"] = False
    return {
        "title": sim.title,
        "serving": sim.serving,
        "trace": sim.trace,
        "setup": setup,
        "policies": policies,
        "provenance": provenance.value,
        "rests_on": {path: f.provenance.value for path, f in rests},
        "weakest": [path for path, f in rests if f.provenance is provenance],
    }


def simulation_text(sim: Simulation) -> str:
    """A summary table for people: one column a policy, one row a figure."""
    setup = sim.setup()
    cache = f"paged KV ({setup['kv_page']} positions a page)" if setup["kv_page"] else "contiguous KV"
    prefix = ""
    if sim.trace.get("shared_prefixes"):
        prefix = " · prefix caching " + ("on" if setup["prefix_caching"] else "off")
        if not setup["prefix_caching"]:  # walkthrough 2 (session 11): the trace's prefixes were ignored unsaid
            why = "a contiguous cache shares none; --kv-page N to share them" if not setup["kv_page"] else (
                "--no-prefix-caching")
            prefix += f" (the trace's shared prefixes are prefilled and held by each request: {why})"
        if setup["prefix_read_once"]:
            prefix += ", prefix read once a step"
    lines = [
        escaped(sim.title),  # a checkpoint path's U+202E, as --json escapes it (left43)
        f"  trace   {sim.trace['source']}",
        f"          {count(sim.trace['requests'])} requests, {count(sim.trace['prompt_tokens'])} prompt and "
        f"{count(sim.trace['output_tokens'])} output tokens, longest {count(sim.trace['longest'])} positions",
        f"  engine  steps of at most {count(setup['chunk_rows'])} token-rows (on chip holds "
        f"{count(setup['rows_on_chip'])}), at most {count(setup['max_batch'])} sequences, {cache}, limit "
        f"{count(setup['limit'])}, admission reserves each request's full length{prefix}",
        "",
    ]
    summaries = [o.summary() for o in sim.outcomes]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> list[str]:
        return [label, *(cell(s) for s in summaries)]

    def trio(key: str, qs: tuple[int, ...]) -> Callable[[dict[str, Any]], str]:
        return lambda s: " / ".join("–" if (v := s[key][f"p{q}"]) is None else si(v, "s", 3) for q in qs)

    def binds(s: dict[str, Any]) -> str:
        return ", ".join(f"{k} {count(v)}" for k, v in s["steps_by_bind"].items() if v)

    rows = [
        row("throughput", lambda s: f"{count(round(s['throughput_tokens_per_s'], 1))} tokens/s"),
        row("TTFT p50 / p90 / p99", trio("ttft_s", (50, 90, 99))),
        row("TPOT p50 / p90 / p99", trio("tpot_s", (50, 90, 99))),
        row("end-to-end p50 / p99", trio("e2e_s", (50, 99))),
        row("makespan", lambda s: si(s["makespan_s"], "s")),
        row("steps (by bind)", lambda s: f"{count(s['steps'])} ({binds(s)})"),
        row("sequences a step (mean)", lambda s: f"{s['mean_sequences']:.1f}"),
        row("peak sequences", lambda s: count(s["peak_sequences"])),
        row("peak held / reserved", lambda s: f"{si(s['peak_held_bytes'], 'B')} / {si(s['peak_reserved_bytes'], 'B')}"
            f" of {si(s['capacity_bytes'], 'B')}"),
        row("waited for memory", lambda s: count(s["waited_for_memory"])),
        row("prompt rows computed", lambda s: f"{count(s['prompt_rows'])} ({count(s['prefix_hits'])} prefix hits)"),
    ]
    lines.append(text_table(["", *(o.policy.value for o in sim.outcomes)], rows))
    # fix181: TPOT p99 22.7 ms beside a serving's 20 ms cap, without a word; tests/test_fix184.py: --max-batch at
    # best's 142 left 48 of 300 requests over the cap, prefill chunks of 2,048 rows pushing steps over; --chunk 64: 0
    if sim.max_tpot is not None:
        over = ", ".join(f"{o.policy.value} {count(o.over_tpot(sim.max_tpot))} of {count(len(o.records))}"
                         for o in sim.outcomes)
        lines += ["", f"  TPOT cap    the serving's max_tpot {si(sim.max_tpot, 's')} is not enforced: admission takes "
                  f"up to {count(setup['max_batch'])} sequences (--max-batch) while memory holds them; requests "
                  f"whose TPOT is above it: {over} (`passprice best` finds the best batch within it: --max-batch "
                  f"that batch bounds the decode steps, but a step that also carries a prompt's chunk (--chunk, "
                  f"{count(setup['chunk_rows'])} rows) takes longer, so give a smaller --chunk too)"]
    rests = sim.pricer.rests_on()
    provenance = sim.pricer.provenance()
    weakest = ", ".join(p for p, f in rests if f.provenance is provenance)
    lines += ["", f"  provenance  every step's price rests on {len(rests)} facts; weakest {provenance.value}: "
              f"{weakest}"]
    shape = sim.pricer.shape
    if shape.routing_name:  # a mixture of experts: the record each step's decode and prompt rows route by
        lines.append(f"  routing     {_routing_shown(shape)}")
    return "\n".join(lines)


def _routing_shown(shape: PassShape) -> str:
    """The routing line of a simulation, as ``price`` shows it: the hot set counted in experts (``a hot set of 58
    of 128 experts (45.31 %) takes 90 % …``, :func:`passprice.routing.description`) where the shape holds the
    routing facts and a main expert stream (walkthrough 36: simulate read ``a hot set of 45.31 % of the experts``
    where price read ``58 of 128 experts (45.31 %)``); else the description the price records."""
    from passprice.routing import ROUTING_PATHS, description

    facts = dict(shape.facts)
    hot, share = (facts.get(p) for p in ROUTING_PATHS)
    main = next((e for e in shape.experts if not e.draft), None)
    if hot is None or share is None or main is None:
        return shape.routing_description or shape.routing_name
    return description(shape.routing_name, hot, share, main.router.experts)
