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
