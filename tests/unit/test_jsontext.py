"""core/jsontext.dumps writes what json.dumps(indent=...) writes, on every kind of value."""

import enum
import json
import math
import random

import numpy as np
import pytest

from rankgate.core import jsontext

class _Level(enum.IntEnum):
    TWO = 2


class _Text(str):
    pass


SCALARS = [0, -3, 2**70, 1.5, -0.0, 1e-05, 1e300, math.nan, math.inf, -math.inf, np.float64(0.1), True, False,
           None, "", "plain", "é \u2028 \U0001f600 \x00 \"q\" \\ \n\t", "doc_0012345", _Level.TWO, _Text("s\n")]


def random_value(rng: random.Random, depth: int):
    kind = rng.random()
    if depth > 4 or kind < 0.4:
        return rng.choice(SCALARS)
    if kind < 0.7:
        keys = [rng.choice(["a", "b", "query", "é", "", "x y", 3, 2.5, True, None]) for _ in range(rng.randint(0, 5))]
        return {k: random_value(rng, depth + 1) for k in keys}
    items = [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return tuple(items) if rng.random() < 0.2 else items


@pytest.mark.parametrize("seed", range(200))
def test_the_same_text_as_json_dumps(seed):
    value = random_value(random.Random(seed), 0)
    for indent in (2, 4):
        assert jsontext.dumps(value, indent) == json.dumps(value, indent=indent)


def test_a_compare_results_shape():
    row = {"query": "q1", "tags": [], "weight": 1.0, "status": "newly_failed",
           "measures": {"P@10": {"baseline": 0.6, "candidate": 0.0, "delta": -0.6}},
           "movement": [{"doc": "d1", "grade": 1, "baseline_rank": 17, "candidate_rank": 11, "move": 6}]}
    data = {"baseline": "b", "candidates": [{"candidate": "c", "queries": [row, row], "slices": {}}]}
    assert jsontext.dumps(data) == json.dumps(data, indent=2)


def test_what_json_refuses_is_refused():
    for bad in ({(1, 2): 1}, {"a": object()}, [np.int64(3)]):
        with pytest.raises(TypeError):
            json.dumps(bad, indent=2)
        with pytest.raises(TypeError):
            jsontext.dumps(bad)


def test_lists_and_dicts_of_flat_dicts_in_one_call():
    """A query's movements (a list of flat dicts) and its measures (a dict of flat dicts) take one call of the C
    encoder with marker separators: strings that hold the markers, braces or quotes stay strings."""
    tricky = ["}\x00{", "\x01{", "a}", "{b", '"}', "\\", "é", ""]
    movements = [{"doc": t, "grade": i, "baseline_rank": None, "candidate_rank": 3.5, "move": True}
                 for i, t in enumerate(tricky)]
    measures = {t: {"baseline": 0.1, "candidate": t, "delta": None} for t in tricky}
    mixed = [{"a": 1}, {}, {"b": [1]}]  # an empty dict or a container inside: the general path
    for value in (movements, measures, {"movement": movements, "measures": measures}, [measures], mixed,
                  [{"x": np.float64(0.1), 2: 1, None: 2, 1.5: math.nan}]):
        for indent in (2, 4):
            assert jsontext.dumps(value, indent) == json.dumps(value, indent=indent)
