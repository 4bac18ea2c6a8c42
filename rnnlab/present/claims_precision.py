"""The Claims page's words on each precision record: is its dtype fast, slow or unsupported on the device that
measured it, and why (:func:`dtype_note`), composed from the record's numbers and facts. Pure."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rnnlab.core import format as fmt
from rnnlab.core import stats, wording
from rnnlab.core.record import Record
from rnnlab.judge import select as sel
from rnnlab.present.claims_sections import Configuration, _order, precision_label

# What each dtype is for, and the CPU flags that give native arithmetic in it (for the words below).
_NATIVE = {"float16": ("avx512_fp16", "amx_fp16"), "bfloat16": ("avx512_bf16", "amx_bf16")}
_MADE_FOR = {"mixed_float16": "mixed_float16 is made for NVIDIA GPUs with compute capability >= 7.0 (Tensor Cores).",
             "bfloat16": "bfloat16 is made for CPUs with AMX / AVX512-BF16, TPUs and recent GPUs."}


def _device_ref(records: Sequence[Record]) -> str:
    """"this CPU" for this machine's records only; "the measuring CPU" for bundled and imported ones (the sentence
    before names whose machine, ``select.where``)."""
    dev = sel.device_of(records[0]) if records else "?"
    dev = "device" if dev == "?" else dev
    return f"this {dev}" if sel.is_here(records) else f"the measuring {dev}"


def _matmul_words(comp: str, ratio: float | None, error: str | None, dev: str) -> str:
    """The 512 x 512 matmul in ``comp`` against float32, from ``matmul_vs_float32`` (or the matmul's error)."""
    if ratio is None:
        return (f"A plain {comp} matmul cannot run on {dev}: {error}" if error else
                f"A {comp} matmul was not timed")
    r = fmt.fmt_ratio(ratio)
    if ratio < 0.8:
        return (f"A 512 x 512 {comp} matmul runs at {r} float32's rate: SLOW (converted to and from float32 around "
                "the arithmetic, it only adds work)")
    if ratio < 1.2:
        return f"A 512 x 512 {comp} matmul runs at about float32's rate ({r})"
    return f"A 512 x 512 {comp} matmul is FASTER than float32's ({r} the rate)"


def _hardware_words(comp: str, device: str, details: Mapping[str, Any], dev: str) -> tuple[str, bool]:
    """What the device offers for ``comp`` arithmetic, from the stored CPU flags ("" when they were not read), and
    whether it has native ``comp`` arithmetic."""
    if device == "GPU":
        return (f"on a GPU it computes in {comp}, fast with Tensor Cores (NVIDIA compute capability >= 7.0 for "
                "float16, >= 8.0 for bfloat16)"), False
    flags = details.get("cpu_flags_checked")
    if device != "CPU" or comp not in _NATIVE or not isinstance(flags, (list, tuple)) \
            or details.get("cpu_flags_read") is False:
        return "", False
    has = [f for f in _NATIVE[comp] if f in flags]
    return (f"{dev} has {', '.join(has)}" if has else
            f"{dev} has no native {comp} arithmetic ({' / '.join(_NATIVE[comp])} absent)"), bool(has)


def _count(n: float, noun: str) -> str:
    return f"{fmt.fmt_value(n, 'int')} {noun}{'' if round(n) == 1 else 's'}"


def _policy_note(r: Record, dev: str) -> str:
    """tf1_dynamic_policy: what the global mixed_float16 policy did to dynamic_rnn (``policy_*`` metrics/details)."""
    m, d = r.metrics, r.details
    runs, n16, n32 = m.get("policy_runs"), m.get("policy_float16_matmuls"), m.get("policy_float32_matmuls")
    parts = []
    if runs == 0:
        err = d.get("policy_error")
        parts.append("dynamic_rnn did not run under the global mixed_float16 policy" + (f": {err}." if err else "."))
    elif runs and not n16:
        facts = [f"{_count(n32, 'float32 matmul')}, none in float16" if n32 is not None else "no float16 matmuls"]
        if d.get("policy_output_dtype"):
            facts.append(f"outputs {d['policy_output_dtype']}")
        parts.append(f"Under the global mixed_float16 policy dynamic_rnn still computed in float32 "
                     f"({'; '.join(facts)}): the policy applies to Keras layers, and dynamic_rnn's TF1 cells "
                     "ignored it.")
    elif runs:
        parts.append(f"Under the global mixed_float16 policy dynamic_rnn computed in float16 "
                     f"({_count(n16, 'float16 matmul')}, {fmt.fmt_value(n32, 'int')} in float32).")
    ratio = m.get("matmul_vs_float32")
    if ratio is not None:
        parts.append(f"What float16 would give: a 512 x 512 float16 matmul runs at {fmt.fmt_ratio(ratio)} float32's "
                     f"rate on {dev}.")
    return " ".join(parts)


def dtype_note(r: Record) -> str:
    """Plain words on one precision record: is its dtype fast, slow or unsupported on the device that measured it,
    and why. Composed from the record's numbers and facts (``fwd_vs_float32``, ``matmul_vs_float32``,
    ``cpu_flags_checked``, ``policy_*``), never from prose a worker stored; "this CPU" only for this machine's
    records (others say "the measuring CPU": :func:`precision_notes_intro` names whose machine)."""
    from rnnlab.experiments.precision import COMPUTE

    path, dtype = precision_label(r.variant)
    m, d = r.metrics, r.details
    dev = _device_ref([r])
    if dtype == "policy":
        return _policy_note(r, dev)
    if dtype == "float32":
        return "float32: the native dtype; the other dtypes of this path are timed against it."
    comp = str(d.get("compute_dtype") or COMPUTE.get(dtype, dtype))
    out = []
    slow = m.get("fwd_vs_float32")
    if slow is not None:
        n = len(r.round_metrics)  # its rounds: each timed both dtypes in one worker
        iv = stats.ratio_interval(r.round_metrics, [{"fwd_vs_float32": 1.0}] * n, "fwd_vs_float32")
        phrase = wording.difference(iv)
        how = fmt.interval_words(iv)
        out.append(f"{path} in {dtype} runs its forward pass {phrase.against('float32')} on the same path"
                   f"{f' ({how})' if how else ''}." if phrase is not None else
                   f"{path} in {dtype} takes {fmt.fmt_ratio(slow)} the float32 time of the same path (one round: "
                   "no interval, so no call).")
    device = sel.device_of(r)
    ratio = m.get("matmul_vs_float32")
    hw, native = _hardware_words(comp, device, d, dev)
    sep = ", even though " if native and ratio is not None and ratio < 0.8 else "; "
    out.append(_matmul_words(comp, ratio, d.get("matmul_error"), dev) + (f"{sep}{hw}." if hw else "."))
    if device != "GPU" and dtype in _MADE_FOR:
        out.append(_MADE_FOR[dtype])
    if slow is None:
        out.append("At RNN sizes casts and elementwise ops weigh as much as the matmuls: compare the forward and "
                   "train step columns with the float32 row.")
    return " ".join(out)


def precision_notes(cfg: Configuration) -> list[tuple[str, str]]:
    """(variant, :func:`dtype_note`) for every successful record, in the table's order (failures: the table's error
    column)."""
    from rnnlab.experiments.precision import VARIANTS

    return [(r.variant, dtype_note(r)) for r in _order(cfg.records, VARIANTS) if r.ok]


def precision_notes_intro(cfg: Configuration) -> str:
    """The sentence before the dtype notes: whose machine measured them (``select.where``) and how."""
    return (f"{sel.where(list(cfg.records))}, each variant's worker timed a 512 x 512 matmul in its compute dtype "
            "against float32 and, for mixed_float16 and bfloat16, the same path's forward pass in float32:")
