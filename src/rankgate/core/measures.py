"""Measures as small named objects, parsed from one syntax.

ir_measures style: `P@10`, `R@100`, `RR`, `RR@10`, `nDCG`, `nDCG@10`, `AP`, `AP@100`,
`Success@5`, `Rprec`, `bpref`, `Judged@10`, `IPrec@0.1`, `NumRet`, `NumRel`,
`NumRelRet`, `gmAP`, with a relevance level as `P(rel=2)@10`.
ir_measures' other parameters where rankgate computes them: `nDCG(judged_only=True)@10`
(any family), `nDCG(gains={0:0,1:1,2:3})@10`, `nDCG(dcg='log2')`, `RBP(p=0.8)`,
`SetF(beta=0.5)`, `SetP(relative=True)`, `NumRet(rel=2)` (= NumRelRet); the rest is
refused with a line naming what is supported.
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
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.core.errors import InputError
from rankgate.core.text import LazyPattern

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
    level_max: float = 1.0  # the largest level a `level` cutoff may take (Rprec_mult: any multiple of R)
    params: str = ""  # trec_eval parameters it takes after a dot (`utility.2,-1,0,0`), and what they mean


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
    Family("infAP", "inferred AP (Yilmaz and Aslam): AP estimated from a judged sample of the pool; a qrels "
           "grade below 0 marks a pooled document left unjudged", cutoff="none", trec="infAP"),
    Family("gmBpref", "bpref; the summary is the geometric mean (trec_eval gm_bpref)",
           cutoff="none", trec="gm_bpref", summary="geometric"),
    Family("RprecMult", "precision at x times R (R = relevant documents; x given as the cutoff, e.g. @0.5)",
           cutoff="required", level=True, level_max=float("inf"), trec_cut="Rprec_mult",
           trec_group=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    Family("Utility", "set utility: a x relevant retrieved + b x other retrieved + c x relevant not retrieved "
           "(default a,b,c = 1,-1,0)", cutoff="none", trec="utility", params="a,b,c,d"),
    Family("IPrecAvg", "mean interpolated precision at recall 0.0, 0.1 ... 1.0 (trec_eval 11pt_avg)",
           cutoff="none", trec="11pt_avg", params="recall levels"),
    Family("binG", "binary gain G: each relevant document at rank i earns 1/log2(2 + i - relevant so far), "
           "divided by R", cutoff="none", trec="binG"),
    Family("G", "normalised gain G (trec_eval's experimental measure between AP and nDCG)", cutoff="none",
           trec="G", params="level=gain"),
    Family("nDCGRel", "nDCG averaged over the relevant documents' positions (trec_eval ndcg_rel)",
           cutoff="none", trec="ndcg_rel", params="level=gain"),
    Family("Rndcg", "nDCG averaged at the R levels of each grade (trec_eval Rndcg)", cutoff="none",
           trec="Rndcg", params="level=gain"),
    Family("RelP", "relative precision at k: relevant documents in the top k divided by min(k, R)",
           cutoff="required", trec_cut="relative_P", trec_group=TREC_CUTOFFS, top_k_only=True),
    Family("SetP", "precision of the whole ranking: relevant retrieved / retrieved", cutoff="none", trec="set_P"),
    Family("SetRelP", "relevant retrieved / min(retrieved, R)", cutoff="none", trec="set_relative_P"),
    Family("SetR", "recall of the whole ranking: relevant retrieved / R", cutoff="none", trec="set_recall"),
    Family("SetAP", "set precision times set recall (trec_eval set_map)", cutoff="none", trec="set_map"),
    Family("SetF", "F-measure of the whole ranking (beta = 1 unless given)", cutoff="none", trec="set_F",
           params="beta"),
    Family("NumNonrelJudgedRet", "judged non-relevant documents retrieved", cutoff="none",
           trec="num_nonrel_judged_ret", summary="sum"),
    Family("RBP", "rank-biased precision, persistence p = 0.9; grades above 1 scaled to 0..1 by the "
           "query's highest grade", cutoff="none", trec="rbp", params="p=persistence"),
    Family("RBPResid", "the residual of RBP: what the unjudged retrieved documents could add",
           cutoff="none", trec="rbp_resid"),
    Family("Unjudged", "share of the top k with no judgment (trec_eval unj; a grade below 0 counts as unjudged)",
           cutoff="required", trec_cut="unj", trec_group=(5, 10, 20), top_k_only=True),
)}
DESCRIPTIONS = {f.name: f.description for f in FAMILIES.values()}
DEPTH_FAMILIES = frozenset(f.name for f in FAMILIES.values() if f.top_k_only)
# trec_eval's `-m all_trec`, in its order, limited to the families rankgate computes.
ALL_TREC_NAMES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                  "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
                  "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
                  "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp",
                  "rbp_resid", "unj")
# trec_eval's `official` nickname (its default), limited the same way (runid and num_q are printed apart).
OFFICIAL_NAMES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                  "iprec_at_recall", "P")


@dataclass(frozen=True)
class Measure:
    family: str
    cutoff: int | float | None = None  # k, or the recall level for IPrec
    rel: int | None = None  # relevance level; None = the evaluation's level
    params: str = ""  # trec_eval's parameter text for the families that take one (utility, G, ndcg gains ...)
    judged_only: bool = False  # ir_measures' judged_only=True: unjudged documents dropped, the rest ranked again

    @property
    def name(self) -> str:
        out = self.family
        args = (["judged_only=True"] if self.judged_only else []) + ([f"rel={self.rel}"] if self.rel is not None else [])
        if args:  # ir_measures' order: parameters sorted by name
            out += f"({','.join(args)})"
        if self.cutoff is not None:
            out += f"@{self.cutoff:g}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        if self.params:
            out += f"({self.params})"
        return out

    @property
    def trec_name(self) -> str:
        f, k = FAMILIES[self.family], self.cutoff
        if k is None or f.trec_cut is None:
            base = f.trec or f.trec_cut
            return f"{base}_{self.params}" if self.params else base
        return f"{f.trec_cut}_{k:.2f}" if f.level else f"{f.trec_cut}_{k}"

    @property
    def summed(self) -> bool:
        return FAMILIES[self.family].summary == "sum"

    @property
    def geometric(self) -> bool:
        return FAMILIES[self.family].summary == "geometric"

    def __str__(self) -> str:
        return self.name


# compiled when a measure is first parsed from text (the gate's own measures are made, not parsed)
_IR = LazyPattern(r"^(?P<fam>[A-Za-z]+)(?:\((?P<args>[^()]*)\))?(?:@(?P<cut>\d+(?:\.\d+)?))?$")

_FAMILY_ALIASES = {alias.lower(): f.name for f in FAMILIES.values() for alias in (f.name, *f.aliases)}
# trec_eval's names, by family: the measures are made when a name is parsed (not at import: a command's start)
_TREC_FIXED = {f.trec.lower(): f.name for f in FAMILIES.values() if f.trec}
_TREC_CUT_FAMILY = {f.trec_cut: f.name for f in FAMILIES.values() if f.trec_cut and not f.level}
_TREC_CUT_PATTERN = rf"^({'|'.join(map(re.escape, _TREC_CUT_FAMILY))})_(\d+)$"  # (compiled, and cached, by re)
_TREC_LEVEL_FAMILY = {f.trec_cut.lower() + "_": f.name for f in FAMILIES.values() if f.trec_cut and f.level}
_TREC_GROUPS = {f.trec_cut: f for f in FAMILIES.values() if f.trec_group}


def _trec_cut(text: str):
    """`ndcg_cut_10`: the match of a trec_eval family name and its cutoff, or None."""
    return re.match(_TREC_CUT_PATTERN, text) if "_" in text else None


def _bad(text: str, why: str) -> InputError:
    return InputError("measure", f"{text!r}: {why} (expected e.g. P@10, R@100, RR@10, nDCG@10, AP, "
                      "P(rel=2)@10, nDCG(judged_only=True)@10 or a trec_eval name such as ndcg_cut_10)")


def _unknown(text: str) -> InputError:
    negative = re.match(r"^([A-Za-z]+)(?:\([^()]*\))?@-\d+(?:\.\d+)?$", text.replace(" ", ""))
    if negative and negative.group(1).lower() in _FAMILY_ALIASES:  # P@-1: a known measure, a cutoff below 1
        return _bad(text, "the cutoff must be at least 1")
    guess = _guess(text)
    if guess:
        return InputError("measure", f"{text!r}: unknown measure; did you mean {guess}? "
                          "(`rankgate docs measures` lists them)")
    return InputError("measure", f"{text!r}: unknown measure; rankgate computes {', '.join(FAMILIES)} "
                      "(ir_measures notation, e.g. nDCG(judged_only=True)@10) and trec_eval's names")


def _guess(text: str) -> str | None:
    """The measure a misspelt name most likely meant: `nDGC@10` -> nDCG@10, `recip_rnak` -> recip_rank,
    trec_eval's `-m ndcg_cut.10` -> ndcg_cut_10; None when nothing is close."""
    import difflib

    cut = re.match(r"^(.*@)([\dOoIl.]+)$", text)
    if cut and re.search(r"[OoIl]", cut[2]):  # nDCG@1O: a letter O (or l, I) typed for a digit
        fixed = cut[1] + cut[2].translate(str.maketrans("OoIl", "0011"))
        head = re.split(r"[@(]", fixed, maxsplit=1)[0].lower()
        if _IR.match(fixed.replace(" ", "")) and head in _FAMILY_ALIASES:
            return fixed
        return _guess(fixed)
    dotted = re.match(r"^([a-zA-Z_]+)\.(\d+)$", text)
    if dotted and _trec_cut(f"{dotted[1]}_{dotted[2]}"):
        return f"{dotted[1]}_{dotted[2]}"
    head = re.split(r"[@(]", text, maxsplit=1)[0]
    if "_" in head:  # a trec_eval name
        close = difflib.get_close_matches(text.lower(), list(_TREC_FIXED), n=1, cutoff=0.75)
        return close[0] if close else None
    close = difflib.get_close_matches(head.lower(), list(_FAMILY_ALIASES), n=1, cutoff=0.6)
    guess = _FAMILY_ALIASES[close[0]] + text[len(head):] if close and len(head) >= 4 else None
    return guess if guess and _IR.match(guess.replace(" ", "")) else None


class ByMeasure(dict):
    """{Measure: value}, also looked up by the name a user writes: `d["nDCG@10"]`, `d["ndcg_cut_10"]`,
    `"RR@10" in d`, `d.get("AP")` (any spelling `-m` accepts; the keys stay Measure objects)."""

    def _key(self, key):
        if isinstance(key, str):
            try:
                return parse_measure(key)
            except InputError:
                raise KeyError(key) from None
        return key

    def __getitem__(self, key):
        try:
            return super().__getitem__(self._key(key))
        except KeyError:
            have = ", ".join(m.name for m in self)
            raise KeyError(f"{key!r}: not among these measures ({have})") from None

    def __contains__(self, key) -> bool:
        try:
            return super().__contains__(self._key(key))
        except KeyError:
            return False

    def get(self, key, default=None):
        return self[key] if key in self else default


def parse_measure(text: str) -> Measure:
    found = parse_measures(text)
    if len(found) != 1:
        raise _bad(text, "names a group of measures, expected one")
    return found[0]


def parse_measures(text: str) -> list[Measure]:
    """One name, or a comma-separated list; trec_eval family names expand to their cutoffs."""
    if (dotted := _trec_dotted(str(text).strip())) is not None:  # `P.5,10`: trec_eval's list of cutoffs
        return list(dict.fromkeys(dotted))
    out: list[Measure] = []
    for part in (p.strip() for p in _split_list(str(text))):
        if not part:
            continue
        if part.isdecimal() and out:  # `P@5,10`: a list of cut-offs is trec_eval's notation, P.5,10
            raise _bad(text, f"'{part}' is a cut-off alone; name each measure whole (P@5,P@10), or use "
                       "trec_eval's P.5,10")
        out.extend(_parse_one(part))
    if not out:
        raise _bad(text, "no measure named")
    return list(dict.fromkeys(out))


_TREC_DOTTED = r"^([A-Za-z_]+)\.(.+)$"


def _trec_dotted(text: str) -> list[Measure] | None:
    """trec_eval's own -m notation, parameters after a dot: `ndcg_cut.10`, `P.5,10`, `recall.1000`,
    `iprec_at_recall.0.5`: the measures ndcg_cut_10, P_5 and P_10 ... name. None: not such a name."""
    m = re.match(_TREC_DOTTED, text.replace(" ", "")) if "." in text else None
    if not m:
        return None
    name, values = m.groups()
    level_fam = _TREC_LEVEL_FAMILY.get(name.lower() + "_")
    if name not in _TREC_CUT_FAMILY and level_fam is None:
        return None
    out = []
    for value in values.split(","):
        if level_fam is not None:
            try:
                out.append(Measure(level_fam, _level(float(value), text, FAMILIES[level_fam].level_max)))
            except ValueError:
                raise _bad(text, "the recall level is not a number") from None
        elif re.fullmatch(r"[+-]?\d+", value):
            out.append(Measure(_TREC_CUT_FAMILY[name], _positive(int(value), text)))
        else:
            raise _bad(text, "the cutoff must be a whole number")
    return out


def _parse_one(text: str) -> list[Measure]:
    low = text.lower()
    if (dotted := _trec_dotted(text)) is not None:
        return dotted
    if low == "all_trec":
        return list(_group("ALL_TREC"))
    if low == "official":
        return list(_group("OFFICIAL"))
    if low in _TREC_FIXED:
        return [Measure(_TREC_FIXED[low])]
    if text in _TREC_GROUPS:
        f = _TREC_GROUPS[text]
        return [Measure(f.name, k) for k in f.trec_group]
    m = _trec_cut(text)
    if m:
        return [Measure(_TREC_CUT_FAMILY[m.group(1)], _positive(int(m.group(2)), text))]
    for prefix, fam in _TREC_LEVEL_FAMILY.items():
        if low.startswith(prefix):
            try:
                level = float(text[len(prefix):])
            except ValueError:
                raise _bad(text, "the recall level is not a number") from None
            return [Measure(fam, _level(level, text, FAMILIES[fam].level_max))]
    m = _IR.match(text.replace(" ", ""))
    if not m:
        neg = re.match(r"^([A-Za-z]+)(?:\([^()]*\))?@-\d+$", text.replace(" ", ""))  # P@-1: a cutoff below 1
        if neg and neg.group(1).lower() in _FAMILY_ALIASES:
            raise _bad(text, "the cutoff must be at least 1")
        raise _unknown(text)
    fam = _FAMILY_ALIASES.get(m.group("fam").lower())
    if fam is None:
        raise _unknown(text)
    fam, rel, params, judged_only = _arguments(text, fam, m.group("args"))
    spec = FAMILIES[fam]
    cut_text = m.group("cut")
    cutoff: int | float | None = None
    if cut_text is not None:
        if spec.level:
            cutoff = _level(float(cut_text), text, spec.level_max)
        elif "." in cut_text:
            raise _bad(text, "the cutoff must be a whole number")
        else:
            cutoff = _positive(int(cut_text), text)
    if spec.cutoff == "required" and cutoff is None:
        raise _bad(text, f"{fam} needs a cutoff")
    if spec.cutoff == "none" and cutoff is not None:
        raise _bad(text, f"{fam} takes no cutoff")
    return [Measure(fam, cutoff, rel, params, judged_only)]


def _split_list(text: str) -> list[str]:
    """Split a list at the commas outside parentheses, brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


# ir_measures' parameters rankgate computes, per family (`rel` and `judged_only` fit every family but these).
_NO_REL = frozenset({"Judged", "Unjudged", "NumRet"})
_NO_JUDGED_ONLY = frozenset({"Judged", "Unjudged", "NumRel"})
_EXTRA_ARGS = {"nDCG": ("dcg", "gains"), "RBP": ("p",), "SetF": ("beta",), "SetP": ("relative",),
               "NumRet": ("rel",)}


def _arguments(text: str, fam: str, args: str | None) -> tuple[str, int | None, str, bool]:
    """ir_measures' parameters in parentheses: `rel=2`, `judged_only=True`, `gains={0:0,1:1}` ...
    Returns the family (SetP(relative=True) is SetRelP, NumRet(rel=2) NumRelRet), the level,
    trec_eval's parameter text for the engine, and judged_only."""
    rel, params, judged_only = None, "", False
    given = {}
    for part in filter(None, _split_list(args or "")):
        key, eq, value = part.partition("=")
        if not eq or key in given:
            raise _bad(text, f"expected name=value parameters, found {part!r}")
        given[key] = value.strip("'\"")
    allowed = ([] if fam in _NO_REL else ["rel"]) + ([] if fam in _NO_JUDGED_ONLY else ["judged_only"])
    allowed += _EXTRA_ARGS.get(fam, ())
    for key in given:
        if key not in allowed:
            raise _bad(text, f"{fam} takes {', '.join(allowed) or 'no parameter'} here, not {key!r}")
    if "rel" in given:
        try:
            rel = int(given["rel"])
        except ValueError:
            raise _bad(text, "rel must be a whole number") from None
    if "judged_only" in given:
        if given["judged_only"] not in ("True", "False"):
            raise _bad(text, "judged_only must be True or False")
        judged_only = given["judged_only"] == "True"
    if given.get("dcg", "log2") != "log2":
        raise _bad(text, "rankgate's nDCG is trec_eval's linear-gain log2 DCG (dcg='log2'); for exponential "
                   "gains name them: nDCG(gains={1:1,2:3,3:7})")
    if "gains" in given:
        if rel is not None:
            raise _bad(text, "nDCG takes gains or rel, not both")
        params = _gain_params(text, given["gains"])
    if "p" in given:
        params = f"p={_number(text, 'p', given['p'])}"
    if "beta" in given:
        params = _number(text, "beta", given["beta"])
    if given.get("relative") == "True":
        fam = "SetRelP"
    elif given.get("relative", "False") != "False":
        raise _bad(text, "relative must be True or False")
    if fam == "NumRet" and rel is not None:  # ir_measures: NumRet(rel=N) counts the relevant retrieved
        fam = "NumRelRet"
    return fam, rel, params, judged_only


def _gain_params(text: str, gains: str) -> str:
    """ir_measures' `gains={0:0,1:1,2:3}` as trec_eval's `0=0,1=1,2=3` (a grade not named keeps its grade)."""
    if not (gains.startswith("{") and gains.endswith("}")):
        raise _bad(text, "gains must be a mapping such as {0:0,1:1,2:3}")
    out = []
    for pair in filter(None, gains[1:-1].split(",")):
        grade, colon, gain = pair.partition(":")
        try:
            out.append(f"{int(grade)}={float(gain):g}")
        except ValueError:
            raise _bad(text, "gains must map whole grades to numbers, e.g. {0:0,1:1,2:3}") from None
        if not colon:
            raise _bad(text, "gains must be a mapping such as {0:0,1:1,2:3}")
    return ",".join(out)


def _number(text: str, key: str, value: str) -> str:
    try:
        return f"{float(value):g}"
    except ValueError:
        raise _bad(text, f"{key} must be a number") from None


def _positive(k: int, text: str) -> int:
    if k < 1:
        raise _bad(text, "the cutoff must be at least 1")
    return k


def _level(x: float, text: str, top: float = 1.0) -> float:
    if not 0.0 <= x <= top:
        raise _bad(text, "the recall level must be between 0 and 1" if top == 1.0 else "the level must be 0 or more")
    return round(x, 4)


_GROUPS = {"ALL_TREC": ALL_TREC_NAMES, "OFFICIAL": OFFICIAL_NAMES}


def _group(name: str) -> list[Measure]:
    """ALL_TREC or OFFICIAL: trec_eval's all_trec and official measures, parsed when first asked for (a hundred
    measures: not at import, which every command pays)."""
    found = globals().get(name)
    if found is None:
        found = globals()[name] = [m for text in _GROUPS[name] for m in _parse_one(text)]
    return found


def __getattr__(name: str):  # `from rankgate.core.measures import ALL_TREC`
    if name in _GROUPS:
        return _group(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
