"""The seeds' claims, each checked against the stored records (pure: no TensorFlow, no store).

Every quantitative or checkable statement of the four seeds in ``/work/shared/seeds`` is one :class:`Claim`: what the
seed says (with its own figure, from ``rnnlab.experiments.seeds``), which experiment, preset and variants test it,
the run that produces the records (:meth:`Claim.plan`, :attr:`Claim.command`), and a pure
``verdict(records) -> Verdict``. :func:`evaluate` judges them all.

Statuses (``rnnlab.core.rules.STATUSES``):

- ``holds`` / ``does not hold``: the records decide it, every configuration judged agrees;
- ``depends``: the records show it holds in some measured configurations or measures and not in others
  (``measured`` says where);
- ``too noisy to call``: the interval of a ratio the claim rests on reaches across the margin (its spread across
  rounds, or the quartiles of a one-round record's timed steps), or there is none (one round of a figure timed once:
  ``stats.ratio_interval``'s "none"), and nothing measured contradicts it either way;
- ``not measured``: no usable record (``why`` gives the command that makes them);
- ``not measurable here``: a GPU claim and only CPU records (this machine has no GPU). GPU records from
  anywhere (bundled ``data/baseline`` files, ``python -m rnnlab import``) are used when present.

Judging rules, the same for every claim (the margins and "A beats B" are ``rnnlab.core.rules``'; which record stands
and which records may be compared is ``rnnlab.judge.select``'s):

- Machines. Two records are compared only when they come from one machine (``select.machine_key``: origin,
  environment fingerprint, matmul-rate class); a verdict never sets one machine's record against another's. Where
  this machine's store has a pair at a configuration, other machines' (bundled, imported) pairs of that
  configuration are left out. A record that was not measured here says whose it is ("[bundled from ...]").
- Configuration. A claim about a seed's own configuration is judged on records at exactly that configuration when
  there are any (the other configurations are then summarised in ``measured``); otherwise on every configuration
  measured, said as "not the seed configuration".
- Speed and memory (``rules.call(stats.ratio_interval(...))``). "A is faster / smaller than B" holds when A saves
  at least ``rules.MARGIN`` (10%) of B's time or memory over the whole interval of A/B; "A is not slower than B"
  holds when A is not more than 10% worse over the whole interval. The interval is the 95% prediction interval of the
  per-round ratios when both records have two rounds or more, else the quartiles of the timed steps (``fwd_ms_p25``/``_p75`` ...: A.p25/B.p75
  .. A.p75/B.p25), else the ratio alone. An interval on both sides of the margin is "too noisy to call" (never a
  loss). Forward and training steps are judged separately; if they disagree the claim depends. ``measured`` always
  gives the numbers and the interval, so a reader can see how close a call was.
- Several records of one variant at one configuration and machine: ``select.best`` (this machine's, then imported,
  then bundled; a successful one before a failed one; then the newest).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.experiments import seeds
from rnnlab.judge import select
from rnnlab.judge.claim import Claim, Verdict
from rnnlab.judge.claim_records import DYN, STATIC
from rnnlab.judge.claims_knobs import judge_mixed, judge_pi, judge_swap, judge_time_major, judge_unstack
from rnnlab.judge.claims_migrate import judge_cudnn, judge_tf_function
from rnnlab.judge.claims_pitfalls import judge_input_shape, judge_shared, judge_state_tuple
from rnnlab.judge.claims_unroll import (judge_build, judge_graph, judge_keras, judge_memory, judge_memory_long,
                                        judge_not_slower, judge_ref_lstm, judge_short_static, judge_speed)
from rnnlab.judge.claims_varlen import (judge_dynamic_no_skip, judge_dynamic_skips, judge_seed003_build,
                                        judge_seed003_run, judge_seqlen_correctness, judge_static_seqlen_skip,
                                        judge_static_varlen)


_SAME = object()  # the run measures exactly the claim's variants


_F0 = seeds.SEED_000_FIGURES


_F3 = seeds.SEED_003_FIGURES


def _c(id, seed, section, text, experiment, preset, variants, judge, device="any", *,
       sets: Mapping[str, Any] | None = None, run: Any = _SAME) -> Claim:
    """A claim; ``sets``: the run's parameters over the preset's (a list: a sweep); ``run``: the variants the run
    measures (default the claim's; None: the preset's)."""
    overrides = tuple((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in (sets or {}).items())
    run_variants = tuple(variants) if run is _SAME else None if run is None else tuple(run)
    return Claim(id, seeds.SEED_FILES[seed], section, text, experiment, preset, tuple(variants), judge, device,
                 overrides, run_variants)


def _v(x: float) -> str:
    return fmt.fmt_value(x)


CLAIMS: tuple[Claim, ...] = (
    _c("s000_memory", "000", "3.1", f"static_rnn peak memory {_v(_F0['peak_mb'][STATIC])} MB vs dynamic_rnn "
       f"{_v(_F0['peak_mb'][DYN])} MB (dynamic ~30% less)", "unroll", "seed", (STATIC, DYN), judge_memory),
    _c("s000_memory_long", "000", "3.1", "dynamic_rnn's memory advantage is largest for long sequences",
       "unroll", "seed", (STATIC, DYN), judge_memory_long, sets={"seq_len": [25, 50, 100, 200]}),
    _c("s000_cpu_speed", "000", "3.2", f"dynamic_rnn about 20% faster on CPU (static {_v(_F0['cpu_ms'][STATIC])} ms "
       f"vs dynamic {_v(_F0['cpu_ms'][DYN])} ms)", "unroll", "seed", (STATIC, DYN), judge_speed, "CPU"),
    _c("s000_gpu_speed", "000", "3.2", f"dynamic_rnn about 28% faster on GPU (static {_v(_F0['gpu_ms'][STATIC])} ms "
       f"vs dynamic {_v(_F0['gpu_ms'][DYN])} ms)", "unroll", "seed", (STATIC, DYN), judge_speed, "GPU",
       sets={"device": "gpu"}),
    _c("s000_graph_size", "000", "4.2", "static_rnn makes every time step a graph node: large graphs for long "
       "sequences; dynamic_rnn's while_loop keeps the graph small", "unroll", "seed", (STATIC, DYN), judge_graph),
    _c("s000_static_no_varlen", "000", "3.3", "static_rnn cannot take variable-length sequences directly (padding "
       "and masking by hand)", "varlen", "quick", ("tf1_static", "tf1_static_nolen"), judge_static_varlen,
       run=("tf1_static", "tf1_static_nolen", "tf1_dynamic")),
    _c("s000_dynamic_skips_padding", "000", "4.1", "dynamic_rnn handles sequence lengths automatically, skipping "
       "the padded part of the computation", "seed003", "seed", ("dynamic",), judge_dynamic_skips),
    _c("s000_parallel_iterations", "000", "5.3", "parallel_iterations=32 increases parallelism (a speed-up for "
       "dynamic_rnn)", "knobs", "seed", ("dynamic_pi1", "dynamic_default", "dynamic_pi128"), judge_pi),
    _c("s000_swap_memory", "000", "5.3", "swap_memory=True lets dynamic_rnn swap GPU memory to the CPU (less GPU "
       "memory)", "knobs", "seed", ("dynamic_default", "dynamic_swap"), judge_swap, "GPU", sets={"device": "gpu"}),
    _c("s000_time_major", "000", "5.3", "time_major=False ((batch, time, features)) is a dynamic_rnn performance "
       "setting", "knobs", "seed", ("dynamic_default", "dynamic_time_major"), judge_time_major),
    _c("s000_unstack_num", "000", "5.3", f"tf.unstack(inputs, num={_F0['unstack_num']}, axis=1) unrolls only the "
       f"first {_F0['unstack_num']} steps and saves static_rnn memory", "knobs", "seed",
       ("static_full", "static_first_n"), judge_unstack),
    _c("s000_shared_cells", "000", "6.1", "MultiRNNCell([cell] * 3) makes all layers share parameters",
       "pitfalls", "quick", ("tf1_shared_dynamic", "tf1_shared_static"), judge_shared),
    _c("s000_input_shape", "000", "6.2", "input shape mistakes show up as dimension errors: feed [batch_size, "
       "time_steps, input_dim]", "pitfalls", "quick", ("shape_time_major", "shape_2d_input"), judge_input_shape),
    _c("s000_state_is_tuple", "000", "6.2", "for LSTMCell make sure state_is_tuple=True (state is (c, h))",
       "pitfalls", "quick", ("shape_state_is_tuple",), judge_state_tuple),
    _c("s000_mixed_precision", "000", "6.3", "with a mixed_float16 global policy dynamic_rnn supports mixed "
       "precision automatically", "precision", "quick", ("tf1_dynamic_policy", "tf1_dynamic_mixed_float16"),
       judge_mixed, run=None),
    _c("s000_short_static", "000", "5.2", "static_rnn is a fine choice for very short, fixed-length sequences",
       "unroll", "quick", (STATIC, DYN), judge_short_static),
    _c("s000_keras_faster", "000", "7", "TF2's Keras LSTM/GRU/RNN layers perform better than dynamic_rnn and "
       "static_rnn", "unroll", "seed", (STATIC, DYN, "keras"), judge_keras),
    _c("s001_seqlen_correctness", "001", "question", "dynamic_rnn's sequence_length is for correctness, not "
       "performance (unlike rnn())", "seed003", "seed", ("dynamic",), judge_seqlen_correctness),
    _c("s001_static_seqlen_skip", "001", "question", "static rnn() with sequence_length does not compute steps "
       "past the minibatch's longest sequence, saving time", "seed003", "seed", ("static",), judge_static_seqlen_skip),
    _c("s001_ref_lstm", "001", "question", "BasicLSTMCell + dynamic_rnn computes the same as a reference LSTM "
       "(no approximation)", "unroll", "quick", (DYN,), judge_ref_lstm, sets={"cell": "lstm"}, run=(DYN, STATIC)),
    _c("s001_static_build_slow", "001", "answer 1", "static rnn graph creation is slow; dynamic_rnn builds faster",
       "unroll", "seed", (STATIC, DYN), judge_build),
    _c("s001_dynamic_not_slower", "001", "answer 1", "dynamic_rnn is as fast as static_rnn or faster",
       "unroll", "seed", (STATIC, DYN), judge_not_slower),
    _c("s003_static_runs_faster", "003", "conclusion", "for variable-length batches static_rnn runs faster: "
       f"{_v(_F3['static']['steps_per_s'])} vs {_v(_F3['dynamic']['steps_per_s'])} steps/s once warm "
       f"({fmt.fmt_ratio(_F3['static']['steps_per_s'] / _F3['dynamic']['steps_per_s'])})", "seed003", "seed",
       ("static", "dynamic"), judge_seed003_run, run=None),
    _c("s003_static_builds_slower", "003", "conclusion", "static_rnn builds slower (first 100 steps: "
       f"{_v(_F3['static']['first_interval_steps_per_s'])} vs {_v(_F3['dynamic']['first_interval_steps_per_s'])} "
       "steps/s)", "seed003", "seed", ("static", "dynamic"), judge_seed003_build, run=None),
    _c("s003_dynamic_no_skip", "003", "text", "dynamic_rnn does not compute only the first n steps of a length-n "
       "sequence ('it is not the case')", "seed003", "seed", ("dynamic",), judge_dynamic_no_skip),
    _c("s004_cudnn", "004", "model", "keras RNN(tf.compat.v1 LSTMCell) is cuDNN-based and greatly speeds up "
       "training", "migrate", "seed", ("seed004_construct",), judge_cudnn),
    _c("s004_tf_function", "004", "train_step", "tf.function compiles the train step into an efficient graph: "
       "noticeably faster training", "training", "seed", ("keras", "keras_eager"), judge_tf_function),
)


BY_ID: dict[str, Claim] = {c.id: c for c in CLAIMS}


def get(claim_id: str) -> Claim:
    from rnnlab.core.errors import RnnlabError

    if claim_id not in BY_ID:
        raise RnnlabError(f"unknown claim {claim_id!r}; known: {', '.join(BY_ID)}")
    return BY_ID[claim_id]


def verdict(claim_id: str, records: Iterable[Record]) -> Verdict:
    """One claim judged on ``records`` (the Claims table's verdict for it, on the same records)."""
    return get(claim_id).verdict(records)


def evaluate(records: Iterable[Record], claims: Sequence[Claim] = CLAIMS) -> list[tuple[Claim, Verdict]]:
    """Every claim judged on the same records (typically ``select.combined(store)``)."""
    recs = select.dedupe(records)
    return [(c, c.judge(recs, c)) for c in claims]


def table_rows(results: Sequence[tuple[Claim, Verdict]]) -> list[dict[str, Any]]:
    """Flat rows for tables and exports: id, seed, claim, status, measured, why, command."""
    return [{"id": c.id, "seed": c.seed[:3], "section": c.section, "claim": c.text, "status": v.status,
             "measured": v.measured, "why": v.why, "experiment": c.experiment, "command": c.command}
            for c, v in results]
