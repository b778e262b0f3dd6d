"""Measures as small named objects, parsed from one syntax.

ir_measures style: `P@10`, `R@100`, `RR`, `RR@10`, `nDCG`, `nDCG@10`, `AP`, `AP@100`,
`Success@5`, `Rprec`, `bpref`, `Judged@10`, `IPrec@0.1`, `NumRet`, `NumRel`,
`NumRelRet`, `gmAP`, with a relevance level as `P(rel=2)@10`.
trec_eval names are aliases: `P_5`, `recall_100`, `recip_rank`, `ndcg`,
`ndcg_cut_10`, `map`, `map_cut_100`, `gm_map`, `success_10`, `Rprec`, `bpref`,
`iprec_at_recall_0.10`, `num_ret`, `num_rel`, `num_rel_ret`; a bare trec_eval
family (`P`, `recall`, `ndcg_cut`, `map_cut`, `success`, `iprec_at_recall`)
expands to trec_eval's default cutoffs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankgate.core.errors import InputError

FAMILIES = ("P", "R", "RR", "nDCG", "AP", "Success", "Rprec", "bpref", "Judged",
            "IPrec", "NumRet", "NumRel", "NumRelRet", "gmAP")
NEEDS_CUTOFF = {"P", "Success", "Judged", "IPrec"}
NO_CUTOFF = {"Rprec", "bpref", "NumRel", "gmAP"}
SUMMED = {"NumRet", "NumRel", "NumRelRet"}  # trec_eval sums these over queries

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALL_LEVELS = tuple(i / 10 for i in range(11))

DESCRIPTIONS = {
    "P": "precision at k: relevant documents in the top k, divided by k",
    "R": "recall at k: relevant documents in the top k, divided by all relevant documents",
    "RR": "reciprocal rank of the first relevant document (0 when none)",
    "nDCG": "normalised discounted cumulative gain, linear gain = grade, log2 discount",
    "AP": "average precision (divided by all relevant documents)",
    "Success": "1 when a relevant document is in the top k (hit rate)",
    "Rprec": "precision at R, R = number of relevant documents",
    "bpref": "binary preference (trec_eval's definition)",
    "Judged": "share of the top k that has a judgment, divided by k",
    "IPrec": "interpolated precision at a recall level",
    "NumRet": "documents retrieved",
    "NumRel": "relevant documents judged",
    "NumRelRet": "relevant documents retrieved",
    "gmAP": "average precision; the summary is the geometric mean (trec_eval gm_map)",
}


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
        f, k = self.family, self.cutoff
        base = {
            "P": f"P_{k}",
            "R": f"recall_{k}" if k is not None else "recall",
            "RR": "recip_rank" if k is None else f"recip_rank_cut_{k}",
            "nDCG": "ndcg" if k is None else f"ndcg_cut_{k}",
            "AP": "map" if k is None else f"map_cut_{k}",
            "Success": f"success_{k}",
            "Rprec": "Rprec",
            "bpref": "bpref",
            "Judged": f"judged_{k}",
            "IPrec": f"iprec_at_recall_{k:.2f}" if k is not None else "iprec_at_recall",
            "NumRet": "num_ret",
            "NumRel": "num_rel",
            "NumRelRet": "num_rel_ret",
            "gmAP": "gm_map",
        }[f]
        return base

    @property
    def summed(self) -> bool:
        return self.family in SUMMED

    def __str__(self) -> str:
        return self.name


_IR = re.compile(r"^(?P<fam>[A-Za-z]+)(?:\(rel=(?P<rel>-?\d+)\))?(?:@(?P<cut>\d+(?:\.\d+)?))?$")

_FAMILY_ALIASES = {
    "p": "P", "r": "R", "recall": "R", "rr": "RR", "mrr": "RR", "ndcg": "nDCG", "ap": "AP", "map": "AP",
    "success": "Success", "hit": "Success", "hitrate": "Success", "rprec": "Rprec", "bpref": "bpref",
    "judged": "Judged", "iprec": "IPrec", "numret": "NumRet", "numrel": "NumRel", "numrelret": "NumRelRet",
    "gmap": "gmAP",
}

_TREC_FIXED = {
    "recip_rank": Measure("RR"), "ndcg": Measure("nDCG"), "map": Measure("AP"), "gm_map": Measure("gmAP"),
    "rprec": Measure("Rprec"), "bpref": Measure("bpref"), "num_ret": Measure("NumRet"),
    "num_rel": Measure("NumRel"), "num_rel_ret": Measure("NumRelRet"),
}
_TREC_CUT = re.compile(r"^(P|recall|ndcg_cut|map_cut|success|recip_rank_cut|judged)_(\d+)$")
_TREC_CUT_FAMILY = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success",
                    "recip_rank_cut": "RR", "judged": "Judged"}
_TREC_GROUPS = {
    "P": [Measure("P", k) for k in TREC_CUTOFFS],
    "recall": [Measure("R", k) for k in TREC_CUTOFFS],
    "ndcg_cut": [Measure("nDCG", k) for k in TREC_CUTOFFS],
    "map_cut": [Measure("AP", k) for k in TREC_CUTOFFS],
    "success": [Measure("Success", k) for k in (1, 5, 10)],
    "iprec_at_recall": [Measure("IPrec", r) for r in TREC_RECALL_LEVELS],
}
# trec_eval's -m all_trec, limited to the families rankgate computes.
ALL_TREC = ([Measure("NumRet"), Measure("NumRel"), Measure("NumRelRet"), Measure("AP"), Measure("gmAP"),
             Measure("Rprec"), Measure("bpref"), Measure("RR")] + _TREC_GROUPS["iprec_at_recall"]
            + _TREC_GROUPS["P"] + _TREC_GROUPS["recall"] + [Measure("nDCG")] + _TREC_GROUPS["ndcg_cut"]
            + _TREC_GROUPS["map_cut"] + _TREC_GROUPS["success"])


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
    if low.startswith("iprec_at_recall_"):
        try:
            level = float(text[len("iprec_at_recall_"):])
        except ValueError:
            raise _bad(text, "the recall level is not a number") from None
        return [Measure("IPrec", _level(level, text))]
    m = _IR.match(text)
    if not m:
        raise _bad(text, "unknown measure")
    fam = _FAMILY_ALIASES.get(m.group("fam").lower())
    if fam is None:
        raise _bad(text, "unknown measure")
    rel = int(m.group("rel")) if m.group("rel") is not None else None
    cut_text = m.group("cut")
    cutoff: int | float | None = None
    if cut_text is not None:
        if fam == "IPrec":
            cutoff = _level(float(cut_text), text)
        elif "." in cut_text:
            raise _bad(text, "the cutoff must be a whole number")
        else:
            cutoff = _positive(int(cut_text), text)
    if fam in NEEDS_CUTOFF and cutoff is None:
        raise _bad(text, f"{fam} needs a cutoff")
    if fam in NO_CUTOFF and cutoff is not None:
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
