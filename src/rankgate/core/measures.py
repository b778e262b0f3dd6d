"""Measures as small named objects, parsed from one syntax.

ir_measures style: `P@10`, `R@100`, `RR`, `RR@10`, `nDCG`, `nDCG@10`, `AP`, `AP@100`,
`Success@5`, `Rprec`, `bpref`, `Judged@10`, `IPrec@0.1`, `NumRet`, `NumRel`,
`NumRelRet`, `gmAP`, with a relevance level as `P(rel=2)@10`.
trec_eval names are aliases: `P_5`, `recall_100`, `recip_rank`, `ndcg`,
`ndcg_cut_10`, `map`, `map_cut_100`, `gm_map`, `success_10`, `Rprec`, `bpref`,
`iprec_at_recall_0.10`, `num_ret`, `num_rel`, `num_rel_ret`; a bare trec_eval
family (`P`, `recall`, `ndcg_cut`, `map_cut`, `success`, `iprec_at_recall`)
expands to trec_eval's default cutoffs.

Every family is one `Family` entry in `FAMILIES` below; the engine computes it
with the kernel registered under the same name (`@kernel` in core/engine.py).
Names, aliases, cutoff rules, trec_eval names and descriptions all come from
the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankgate.core.errors import InputError

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALL_LEVELS = tuple(i / 10 for i in range(11))


@dataclass(frozen=True)
class Family:
    """A measure family: how it is named and parsed, how trec_eval names and summarises it, what it means."""

    name: str  # the ir_measures-style name, accepted in any case
    description: str
    aliases: tuple[str, ...] = ()  # more names accepted, in any case
    cutoff: str = "optional"  # "optional", "required" or "none"
    level: bool = False  # the cutoff is a recall level between 0 and 1, not a rank
    trec: str | None = None  # trec_eval's name without a cutoff (with one too, when there is no trec_cut)
    trec_cut: str | None = None  # trec_eval's name before "_k": "ndcg_cut" -> ndcg_cut_10
    trec_group: tuple = ()  # the cutoffs the bare `trec_cut` name expands to (trec_eval's defaults)
    summary: str = "mean"  # over queries: "mean", "sum" or "geometric" (as trec_eval summarises it)
    top_k_only: bool = False  # with a cutoff k, each ranking's top k is all it needs


FAMILIES = {f.name: f for f in (
    Family("P", "precision at k: relevant documents in the top k, divided by k",
           cutoff="required", trec_cut="P", trec_group=TREC_CUTOFFS, top_k_only=True),
    Family("R", "recall at k: relevant documents in the top k, divided by all relevant documents",
           aliases=("recall",), trec_cut="recall", trec_group=TREC_CUTOFFS, top_k_only=True),
    Family("RR", "reciprocal rank of the first relevant document (0 when none)",
           aliases=("mrr",), trec="recip_rank", trec_cut="recip_rank_cut", top_k_only=True),
    Family("nDCG", "normalised discounted cumulative gain, linear gain = grade, log2 discount",
           trec="ndcg", trec_cut="ndcg_cut", trec_group=TREC_CUTOFFS, top_k_only=True),
    Family("AP", "average precision (divided by all relevant documents)",
           aliases=("map",), trec="map", trec_cut="map_cut", trec_group=TREC_CUTOFFS, top_k_only=True),
    Family("Success", "1 when a relevant document is in the top k (hit rate)",
           aliases=("hit", "hitrate"), cutoff="required", trec_cut="success", trec_group=(1, 5, 10),
           top_k_only=True),
    Family("Rprec", "precision at R, R = number of relevant documents", cutoff="none", trec="Rprec"),
    Family("bpref", "binary preference (trec_eval's definition)", cutoff="none", trec="bpref"),
    Family("Judged", "share of the top k that has a judgment, divided by k",
           cutoff="required", trec_cut="judged", top_k_only=True),
    Family("IPrec", "interpolated precision at a recall level",
           cutoff="required", level=True, trec_cut="iprec_at_recall", trec_group=TREC_RECALL_LEVELS),
    Family("NumRet", "documents retrieved", trec="num_ret", summary="sum"),
    Family("NumRel", "relevant documents judged", cutoff="none", trec="num_rel", summary="sum"),
    Family("NumRelRet", "relevant documents retrieved", trec="num_rel_ret", summary="sum", top_k_only=True),
    Family("gmAP", "average precision; the summary is the geometric mean (trec_eval gm_map)",
           cutoff="none", trec="gm_map", summary="geometric"),
)}
DESCRIPTIONS = {f.name: f.description for f in FAMILIES.values()}
DEPTH_FAMILIES = frozenset(f.name for f in FAMILIES.values() if f.top_k_only)
# trec_eval's `-m all_trec`, in its order, limited to the families rankgate computes.
ALL_TREC_NAMES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                  "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success")


@dataclass(frozen=True)
class Measure:
    family: str
    cutoff: int | float | None = None  # k, or the recall level for IPrec
    rel: int | None = None  # relevance level; None = the evaluation's level

    @property
    def name(self) -> str:
        out = self.family
        if self.rel is not None:
            out += f"(rel={self.rel})"
        if self.cutoff is not None:
            out += f"@{self.cutoff:g}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        return out

    @property
    def trec_name(self) -> str:
        f, k = FAMILIES[self.family], self.cutoff
        if k is None or f.trec_cut is None:
            return f.trec or f.trec_cut
        return f"{f.trec_cut}_{k:.2f}" if f.level else f"{f.trec_cut}_{k}"

    @property
    def summed(self) -> bool:
        return FAMILIES[self.family].summary == "sum"

    @property
    def geometric(self) -> bool:
        return FAMILIES[self.family].summary == "geometric"

    def __str__(self) -> str:
        return self.name


_IR = re.compile(r"^(?P<fam>[A-Za-z]+)(?:\(rel=(?P<rel>-?\d+)\))?(?:@(?P<cut>\d+(?:\.\d+)?))?$")

_FAMILY_ALIASES = {alias.lower(): f.name for f in FAMILIES.values() for alias in (f.name, *f.aliases)}
_TREC_FIXED = {f.trec.lower(): Measure(f.name) for f in FAMILIES.values() if f.trec}
_TREC_CUT_FAMILY = {f.trec_cut: f.name for f in FAMILIES.values() if f.trec_cut and not f.level}
_TREC_CUT = re.compile(rf"^({'|'.join(map(re.escape, _TREC_CUT_FAMILY))})_(\d+)$")
_TREC_LEVEL_FAMILY = {f.trec_cut.lower() + "_": f.name for f in FAMILIES.values() if f.trec_cut and f.level}
_TREC_GROUPS = {f.trec_cut: [Measure(f.name, k) for k in f.trec_group] for f in FAMILIES.values() if f.trec_group}


def _bad(text: str, why: str) -> InputError:
    return InputError("measure", f"{text!r}: {why} (expected e.g. P@10, R@100, RR@10, nDCG@10, AP, "
                      "P(rel=2)@10 or a trec_eval name such as ndcg_cut_10)")


def parse_measure(text: str) -> Measure:
    found = parse_measures(text)
    if len(found) != 1:
        raise _bad(text, "names a group of measures, expected one")
    return found[0]


def parse_measures(text: str) -> list[Measure]:
    """One name, or a comma-separated list; trec_eval family names expand to their cutoffs."""
    out: list[Measure] = []
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        out.extend(_parse_one(part))
    if not out:
        raise _bad(text, "no measure named")
    return list(dict.fromkeys(out))


def _parse_one(text: str) -> list[Measure]:
    low = text.lower()
    if low == "all_trec":
        return list(ALL_TREC)
    if low in _TREC_FIXED:
        return [_TREC_FIXED[low]]
    if text in _TREC_GROUPS:
        return list(_TREC_GROUPS[text])
    m = _TREC_CUT.match(text)
    if m:
        return [Measure(_TREC_CUT_FAMILY[m.group(1)], _positive(int(m.group(2)), text))]
    for prefix, fam in _TREC_LEVEL_FAMILY.items():
        if low.startswith(prefix):
            try:
                level = float(text[len(prefix):])
            except ValueError:
                raise _bad(text, "the recall level is not a number") from None
            return [Measure(fam, _level(level, text))]
    m = _IR.match(text)
    if not m:
        raise _bad(text, "unknown measure")
    fam = _FAMILY_ALIASES.get(m.group("fam").lower())
    if fam is None:
        raise _bad(text, "unknown measure")
    spec = FAMILIES[fam]
    rel = int(m.group("rel")) if m.group("rel") is not None else None
    cut_text = m.group("cut")
    cutoff: int | float | None = None
    if cut_text is not None:
        if spec.level:
            cutoff = _level(float(cut_text), text)
        elif "." in cut_text:
            raise _bad(text, "the cutoff must be a whole number")
        else:
            cutoff = _positive(int(cut_text), text)
    if spec.cutoff == "required" and cutoff is None:
        raise _bad(text, f"{fam} needs a cutoff")
    if spec.cutoff == "none" and cutoff is not None:
        raise _bad(text, f"{fam} takes no cutoff")
    return [Measure(fam, cutoff, rel)]


def _positive(k: int, text: str) -> int:
    if k < 1:
        raise _bad(text, "the cutoff must be at least 1")
    return k


def _level(x: float, text: str) -> float:
    if not 0.0 <= x <= 1.0:
        raise _bad(text, "the recall level must be between 0 and 1")
    return round(x, 4)


ALL_TREC = [m for name in ALL_TREC_NAMES for m in _parse_one(name)]
