"""core/fastclass.py's `dataclass` makes what the standard library's makes: every rankgate class that uses it is
compared with the same class body made by `dataclasses.dataclass` (its module loaded a second time with the
standard decorator in fastclass's place): fields, defaults, __doc__, __match_args__, __init__'s signature, repr,
equality, hash, frozen errors, replace and asdict."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import pkgutil
import sys
import types

import pytest

import rankgate
from rankgate.core import fastclass
from rankgate.core.fastclass import dataclass


def _modules_using_fastclass() -> list[str]:
    out = []
    for info in pkgutil.walk_packages(rankgate.__path__, "rankgate."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and spec.origin.endswith(".py"):
            with open(spec.origin, encoding="utf-8") as f:
                if "from rankgate.core.fastclass import dataclass" in f.read():
                    out.append(info.name)
    return out


MODULES = _modules_using_fastclass()


def _with_the_standard_decorator(name: str) -> types.ModuleType:
    """The module loaded again under another name, `fastclass.dataclass` being the standard library's meanwhile."""
    spec = importlib.util.find_spec(name)
    twin = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name + "_std", spec.origin))
    sys.modules[twin.__name__] = twin
    saved = fastclass.dataclass
    fastclass.dataclass = dataclasses.dataclass
    try:
        twin.__spec__.loader.exec_module(twin)
    finally:
        fastclass.dataclass = saved
        del sys.modules[twin.__name__]
    return twin


def _field_facts(cls) -> list[tuple]:
    return [(f.name, f.type, f.default, getattr(f.default_factory, "__qualname__", f.default_factory), f.init,
             f.repr, f.compare, f.hash, f.kw_only) for f in dataclasses.fields(cls)]


def _values(cls, tag: str) -> list:
    return [f"{tag}{i}" for i, _ in enumerate(dataclasses.fields(cls))]


def _compare(ours, theirs) -> None:
    assert dataclasses.is_dataclass(ours) and ours.__dataclass_params__.frozen == theirs.__dataclass_params__.frozen
    assert _field_facts(ours) == _field_facts(theirs)
    assert ours.__doc__ == theirs.__doc__ and ours.__match_args__ == theirs.__match_args__
    assert (ours.__hash__ is None) == (theirs.__hash__ is None)
    a, b = ours(*_values(ours, "a")), theirs(*_values(theirs, "a"))
    for _ in range(fastclass.COMPILE_AFTER):
        assert ours(*_values(ours, "a")) == a  # the shared loop, then the compiled __init__
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    if hasattr(theirs.__repr__, "__wrapped__"):  # the standard library's repr, not the class's own
        assert repr(a).replace(ours.__module__, "") == repr(b).replace(theirs.__module__, "")
    assert a == ours(*_values(ours, "a")) and a != ours(*_values(ours, "z")) and (a == b) is False
    if ours.__hash__ is not None and "__hash__" not in vars(ours).keys() - {"__hash__"}:
        assert hash(a) == hash(b)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    first = dataclasses.fields(ours)[0].name if dataclasses.fields(ours) else None
    if first:
        changed = dataclasses.replace(a, **{first: "new"})
        assert getattr(changed, first) == "new" and type(changed) is ours
        if ours.__dataclass_params__.frozen:
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{first}'"):
                setattr(a, first, 1)
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{first}'"):
                delattr(a, first)
    for f in dataclasses.fields(ours):  # a default stays the class attribute; a factory's field is none
        assert vars(ours).get(f.name, "absent") == vars(theirs).get(f.name, "absent")


def test_the_gate_path_modules_use_it():
    assert {"rankgate.core.model", "rankgate.core.measures", "rankgate.core.policy", "rankgate.core.gate"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_class_is_what_the_standard_library_makes(name):
    module = importlib.import_module(name)
    twin = _with_the_standard_decorator(name)
    classes = [k for k, v in vars(module).items() if isinstance(v, type) and dataclasses.is_dataclass(v)
               and v.__module__ == name and "__dataclass_params__" in vars(v)]  # (decorated here, not a subclass)
    assert classes, name
    for cls_name in classes:
        ours, theirs = getattr(module, cls_name), getattr(twin, cls_name)
        assert isinstance(ours.__dataclass_params__, fastclass._Params), cls_name  # not left to the standard one
        assert not isinstance(theirs.__dataclass_params__, fastclass._Params)
        _compare(ours, theirs)


def test_defaults_factories_frozen_and_inheritance():
    @dataclass(frozen=True)
    class Base:
        a: int
        b: list = dataclasses.field(default_factory=list)

    @dataclass(frozen=True)
    class Child(Base):
        c: str = "x"

    one = Child(1)
    assert (one.a, one.b, one.c) == (1, [], "x") and one.b is not Child(1).b
    assert repr(one) == "test_defaults_factories_frozen_and_inheritance.<locals>.Child(a=1, b=[], c='x')"
    assert Child.__doc__ == "Child(a: 'int', b: 'list' = <factory>, c: 'str' = 'x')"
    assert one == Child(1) and one != Child(2)
    assert Child.c == "x" and "b" not in vars(Base)
    with pytest.raises(TypeError):
        Child()


def test_a_class_keeps_its_own_methods_and_post_init_runs():
    @dataclass
    class Own:
        a: int
        seen: list = dataclasses.field(default_factory=list, repr=False)

        def __repr__(self):
            return "own"

        def __post_init__(self):
            self.seen.append(self.a)

    one = Own(3)
    assert repr(one) == "own" and one.seen == [3] and Own.__hash__ is None


def test_what_it_does_not_handle_goes_to_the_standard_library():
    @dataclass(order=True)
    class Ordered:
        a: int

    @dataclass
    class Mutable:
        a: int = 0

    assert Ordered(1) < Ordered(2)
    assert not isinstance(Ordered.__dataclass_params__, fastclass._Params)
    assert isinstance(Mutable.__dataclass_params__, fastclass._Params)
    with pytest.raises(ValueError, match="mutable default"):
        @dataclass
        class Bad:
            a: list = []
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @dataclass
        class Order:
            a: int = 0
            b: int


def test_the_compiled_init_takes_over_after_the_first_instances_and_errors_are_the_standard_ones():
    @dataclass(frozen=True)
    class Lazy:
        a: int
        b: int = 2
        c: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class Std:
        a: int
        b: int = 2
        c: list = dataclasses.field(default_factory=list)

    stub = vars(Lazy)["__init__"]
    made = [Lazy(1), Lazy(1, b=5), Lazy(a=1, c=[3]), Lazy(1, 2, [4])]
    assert [(x.a, x.b, x.c) for x in made] == [(1, 2, []), (1, 5, []), (1, 2, [3]), (1, 2, [4])]
    assert made[0].c is not Lazy(1).c
    assert vars(Lazy)["__init__"] is stub  # the shared loop still
    for _ in range(fastclass.COMPILE_AFTER):
        Lazy(1)
    assert vars(Lazy)["__init__"] is not stub and Lazy(1, b=5) == Lazy(a=1, b=5) != Lazy(1)
    assert str(inspect.signature(Lazy)) == "(a: 'int', b: 'int' = 2, c: 'list' = <factory>) -> None"


def test_a_call_it_cannot_bind_fails_as_the_standard_one_does():
    def both(frozen):
        @dataclass(frozen=frozen)
        class Lazy:
            a: int
            b: int = 2

        @dataclasses.dataclass(frozen=frozen)
        class Std:
            a: int
            b: int = 2
        return Lazy, Std

    for args, kwargs in [((), {}), ((1, 2, 3), {}), ((1,), {"a": 1}), ((1,), {"d": 1}), ((), {"b": 1})]:
        Lazy, Std = both(True)
        with pytest.raises(TypeError) as ours:
            Lazy(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            Std(*args, **kwargs)
        assert str(ours.value).replace("Lazy", "X") == str(theirs.value).replace("Std", "X")
