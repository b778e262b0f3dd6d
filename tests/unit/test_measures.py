"""The measure registry: each family has a kernel, and parses by every name it lists."""

from rankgate.core.engine import KERNELS
from rankgate.core.measures import FAMILIES, Measure, parse_measure


def test_every_family_has_one_kernel():
    assert set(KERNELS) == set(FAMILIES)


def test_every_family_parses_by_its_names():
    for f in FAMILIES.values():
        cut = "" if f.cutoff == "none" else "@0.5" if f.level else "@3"
        for name in (f.name, *f.aliases):
            for spelled in (name, name.lower(), name.upper()):
                assert parse_measure(spelled + cut).family == f.name, spelled
        if f.trec_cut:
            m = Measure(f.name, 0.5 if f.level else 3)
            assert parse_measure(m.trec_name) == m, m.trec_name


def test_trec_names_and_groups_parse_to_their_families_measures():
    from rankgate.core.measures import ALL_TREC, ALL_TREC_NAMES, OFFICIAL, OFFICIAL_NAMES, parse_measures

    for f in FAMILIES.values():
        if f.trec:
            assert parse_measures(f.trec) == parse_measures(f.trec.upper()) == [Measure(f.name)], f.trec
        if f.trec_group:
            assert parse_measures(f.trec_cut) == [Measure(f.name, k) for k in f.trec_group], f.trec_cut
    assert ALL_TREC == [m for name in ALL_TREC_NAMES for m in parse_measures(name)] == parse_measures("all_trec")
    assert OFFICIAL == [m for name in OFFICIAL_NAMES for m in parse_measures(name)] == parse_measures("official")
    assert parse_measures("ALL_TREC") is not ALL_TREC  # a copy each time: the caller may change it


def test_the_measure_groups_are_parsed_when_first_asked_for():
    """A command's start parses none of trec_eval's hundred all_trec and official measures (nor compiles the
    trec_eval name patterns) unless it names them."""
    import subprocess
    import sys

    script = ("import re, sys\nfrom rankgate.core import measures as m\n"
              "print(sorted(n for n in ('ALL_TREC', 'OFFICIAL') if n in vars(m)))\n"
              "m.parse_measures('nDCG@10,RR@3,AP')\nprint(sorted(n for n in ('ALL_TREC', 'OFFICIAL') if n in vars(m)))\n"
              "print(m.parse_measures('map,ndcg_cut_10,P.5') == [m.Measure('AP'), m.Measure('nDCG', 10), m.Measure('P', 5)])\n"
              "from rankgate.core.measures import OFFICIAL\nprint(sorted(n for n in ('ALL_TREC', 'OFFICIAL') if n in vars(m)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "[]", "True", "['OFFICIAL']"]
