"""The Python API refuses odd objects with one clear InputError, never a Python error from inside."""

import pytest

import rankgate
from rankgate.core.errors import InputError

Q, R = {"q": {"d": 1}}, {"q": {"d": 1.0}}


@pytest.mark.parametrize("call, said", [
    (lambda: rankgate.qrels({"q": {"d": 10**30}}), "out of range"),
    (lambda: rankgate.run({"q": {"d": 10**400}}), "not a finite number"),
    (lambda: rankgate.run({"q": {"d": float("nan")}}), "not a finite number"),
    (lambda: rankgate.evaluate(Q, R, None), "expected a measure name"),
    (lambda: rankgate.evaluate(Q, R, 5), "expected a measure name"),
    (lambda: rankgate.evaluate(Q, R, [None]), "expected measure names"),
    (lambda: rankgate.evaluate(Q, R, "P@1", rel_level="2"), "expected a whole number"),
    (lambda: rankgate.evaluate(Q, R, "P@1", rel_level=1.5), "expected a whole number"),
    (lambda: rankgate.evaluate(Q, R, "P@1", missing="x"), "expected 'error' or 'zero'"),
    (lambda: rankgate.to_frame(None), "what rankgate.evaluate returns"),
    (lambda: rankgate.to_frame([]), "what rankgate.evaluate returns"),
    (lambda: rankgate.qrels(None), "found NoneType"),
    (lambda: rankgate.qrels([1, 2]), "found list"),
    (lambda: rankgate.run(b"q Q0 d 1 1 t"), "found bytes"),
    (lambda: rankgate.qrels({1: {"d1": 1}, "1": {"d1": 0}}), "appears twice"),
    (lambda: rankgate.run({1: {"d1": 1.0}, "1": {"d1": 0.5}}), "appears twice"),
])
def test_odd_objects_are_one_clear_error(call, said):
    with pytest.raises(InputError, match=said.replace("(", r"\(")):
        call()


def test_ordinary_objects_still_score():
    assert list(rankgate.evaluate(Q, R, "P@1").summary().values()) == [1.0]
