"""`@dataclass` as the standard library makes it, at a fraction of its import cost.

Python 3.11's `dataclasses.dataclass` compiles every method of a class (__init__, __repr__, __eq__, the
frozen __setattr__/__delattr__, __hash__) from generated source when its module is imported: about 6 million
instructions a class, and `rankgate gate` imports 32 of them (a third of its start-up, more than numpy's import
costs over Python's own start). Here the same methods are shared functions that read the class's fields, and
__init__ is a shared loop for a class's first instances, compiled from the standard library's own source text
only once the class has made COMPILE_AFTER of them: a command that makes a few costs no compile.

The class is a dataclass to the standard library: `dataclasses.fields`, `replace`, `asdict` and `is_dataclass`
work on it, and its fields, defaults, repr, equality, hash, frozen errors, __match_args__ and __doc__ are the
standard library's (tests/unit/test_fastclass.py compares every rankgate class that uses this with what the
standard library makes of it). One difference shows: until __init__ is compiled, `inspect.signature(cls)` reads
`(*args, **kwargs)`; the class's __doc__ gives the fields' signature from the start, as the standard one does. What this does not handle (order, slots, kw_only, unsafe_hash, eq=False,
InitVar, ClassVar, KW_ONLY, field(init=False / compare=False / hash=...), a mutable default, a non-default
field after a default one, a class without `from __future__ import annotations`) goes to the standard
library's decorator unchanged.
"""

from __future__ import annotations

import abc
import dataclasses
import sys
from operator import attrgetter

__all__ = ["dataclass"]

_MISSING = dataclasses.MISSING
_UNHANDLED = ("order", "unsafe_hash", "kw_only", "slots", "weakref_slot")


def dataclass(cls=None, /, *, init=True, repr=True, eq=True, frozen=False, match_args=True, **more):
    """As `dataclasses.dataclass` (same arguments, same result); see the module's docstring."""

    def wrap(cls):
        fields = None if (not eq or any(more.get(k) for k in _UNHANDLED)) else _own_fields(cls, frozen)
        if fields is None:
            return dataclasses.dataclass(cls, init=init, repr=repr, eq=eq, frozen=frozen, match_args=match_args,
                                         **more)
        return _process(cls, fields, init, repr, frozen, match_args)

    return wrap if cls is None else wrap(cls)


class _Params:
    """What `__dataclass_params__` tells the standard library (a dataclass based on this one reads `frozen`)."""

    __slots__ = ("init", "repr", "eq", "order", "unsafe_hash", "frozen", "match_args", "kw_only", "slots",
                 "weakref_slot")

    def __init__(self, init: bool, repr: bool, frozen: bool, match_args: bool):
        self.init, self.repr, self.eq, self.order, self.unsafe_hash = init, repr, True, False, False
        self.frozen, self.match_args, self.kw_only, self.slots, self.weakref_slot = frozen, match_args, False, False, False

    def __repr__(self) -> str:
        return "_DataclassParams(" + ",".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


def _own_fields(cls, frozen: bool) -> dict | None:
    """The class's fields, its bases' first, as the standard library finds them; None: leave it to that."""
    fields: dict[str, dataclasses.Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = base.__dict__.get("__dataclass_fields__")
        if base_fields is not None:
            if base.__dict__["__dataclass_params__"].frozen != frozen or len(base_fields) != len(dataclasses.fields(base)):
                return None  # the standard library's errors; a ClassVar or InitVar pseudo-field
            fields.update(base_fields)
    seen_default = any(f.default is not _MISSING or f.default_factory is not _MISSING for f in fields.values())
    annotations = cls.__dict__.get("__annotations__", {})
    for name, kind in annotations.items():
        if not isinstance(kind, str) or "ClassVar" in kind or "InitVar" in kind or "KW_ONLY" in kind or name == "self":
            return None
        default = cls.__dict__.get(name, _MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
            if not (f.init and f.compare and f.hash is None and f.kw_only is _MISSING):
                return None
        else:
            f = dataclasses.field(default=default)
        if f.default is not _MISSING and f.default.__class__.__hash__ is None:
            return None  # a mutable default: the standard library's ValueError
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            return None  # the standard library's TypeError
        seen_default = seen_default or has_default
        f.name, f.type, f.kw_only, f._field_type = name, kind, False, dataclasses._FIELD
        fields[name] = f
    if any(isinstance(v, dataclasses.Field) and k not in annotations for k, v in cls.__dict__.items()):
        return None  # a field with no annotation: the standard library's TypeError
    return fields


def _process(cls, fields: dict, init: bool, repr: bool, frozen: bool, match_args: bool):
    own = cls.__dict__
    for name in own.get("__annotations__", {}):  # a Field as a class attribute becomes its default, or goes
        if isinstance(own.get(name), dataclasses.Field):
            if fields[name].default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, fields[name].default)
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    cls.__dataclass_params__ = _Params(init, repr, frozen, match_args)
    cls.__dataclass_fields__ = fields
    names = tuple(fields)
    values = _getter(names)
    if init:
        _set_new(cls, "__init__", _lazy_init(cls, fields, frozen))
    if repr:
        _set_new(cls, "__repr__", _repr(cls, tuple(n for n, f in fields.items() if f.repr)))
    _set_new(cls, "__eq__", _eq(cls, values))
    if frozen:
        for fn in _frozen(cls, names):
            if _set_new(cls, fn.__name__, fn):
                raise TypeError(f"Cannot overwrite attribute {fn.__name__} in class {cls.__name__}")
    if not explicit_hash:
        cls.__hash__ = _hash(cls, values) if frozen else None
    if not getattr(cls, "__doc__"):
        cls.__doc__ = cls.__name__ + _signature(fields)
    if match_args:
        _set_new(cls, "__match_args__", names)
    abc.update_abstractmethods(cls)
    return cls


def _set_new(cls, name: str, value) -> bool:
    """As the standard library: a method the class defines itself is kept (True)."""
    if name in cls.__dict__:
        return True
    if callable(value) and hasattr(value, "__qualname__"):
        value.__qualname__ = f"{cls.__qualname__}.{value.__name__}"
    setattr(cls, name, value)
    return False


def _getter(names: tuple[str, ...]):
    """obj -> the tuple of its fields' values (attrgetter gives a bare value for one name)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _eq(cls, values):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    return __eq__


def _hash(cls, values):
    def __hash__(self):
        return hash(values(self))
    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


def _repr(cls, names: tuple[str, ...]):
    import _thread

    running: set = set()

    def __repr__(self):
        key = id(self), _thread.get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
        finally:
            running.discard(key)
    return __repr__


def _frozen(cls, names: tuple[str, ...]):
    FrozenInstanceError = dataclasses.FrozenInstanceError

    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"


_HAS_DEFAULT_FACTORY = _Factory()


COMPILE_AFTER = 64  # instances made by the shared __init__ before the class's own is compiled


def _lazy_init(cls, fields: dict, frozen: bool):
    """An __init__ that sets the fields from a shared loop for the class's first COMPILE_AFTER instances (a
    compile costs as much as a hundred of those), then compiles the standard library's own (the same source
    text) and puts it in its place. A call the loop does not bind plainly (a missing or unknown argument) goes
    to the compiled one at once, so its error is the standard library's, word for word."""
    names = tuple(fields)
    given = frozenset(names)
    later = [(n, f.default, f.default_factory) for n, f in fields.items()]
    post_init = hasattr(cls, "__post_init__")
    made = 0

    def __init__(self, *args, **kwargs):
        nonlocal made
        made += 1
        if (made <= COMPILE_AFTER and len(args) <= len(names) and not (kwargs.keys() - given)
                and (not kwargs or kwargs.keys().isdisjoint(names[:len(args)]))):  # (no field given twice)
            values = list(args)
            for name, default, factory in later[len(args):]:
                if name in kwargs:
                    values.append(kwargs[name])
                elif default is not _MISSING:
                    values.append(default)
                elif factory is not _MISSING:
                    values.append(factory())
                else:
                    break  # a missing argument: the compiled __init__ says so
            else:
                _set_all(self, names, values, frozen)
                if post_init:
                    self.__post_init__()
                return
        real = _compile_init(cls, fields, frozen)
        if cls.__dict__.get("__init__") is __init__:
            type.__setattr__(cls, "__init__", real)
        real(self, *args, **kwargs)
    return __init__


def _set_all(obj, names: tuple[str, ...], values: list, frozen: bool) -> None:
    if frozen:
        for name, value in zip(names, values):
            object.__setattr__(obj, name, value)
    else:
        for name, value in zip(names, values):
            setattr(obj, name, value)


def _compile_init(cls, fields: dict, frozen: bool):
    module = sys.modules.get(cls.__module__)
    scope = {"__dataclass_builtins_object__": object, "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
             "_return_type": None, **{f"_type_{n}": f.type for n, f in fields.items()}}
    params, body = ["self"], []
    for name, f in fields.items():
        value = name
        if f.default_factory is not _MISSING:
            scope[f"_dflt_{name}"] = f.default_factory
            params.append(f"{name}:_type_{name}=_HAS_DEFAULT_FACTORY")
            value = f"_dflt_{name}() if {name} is _HAS_DEFAULT_FACTORY else {name}"
        elif f.default is not _MISSING:
            scope[f"_dflt_{name}"] = f.default
            params.append(f"{name}:_type_{name}=_dflt_{name}")
        else:
            params.append(f"{name}:_type_{name}")
        body.append(f"__dataclass_builtins_object__.__setattr__(self,{name!r},{value})" if frozen
                    else f"self.{name}={value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    text = (f"def __create_fn__({', '.join(scope)}):\n def __init__({','.join(params)})->_return_type:\n"
            + "\n".join(f"  {line}" for line in body or ["pass"]) + "\n return __init__")
    ns: dict = {}
    code = compile(text, "<string>", "exec", dont_inherit=True)  # annotations as objects, not this module's strings
    exec(code, module.__dict__ if module else {}, ns)
    fn = ns["__create_fn__"](**scope)
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    return fn


def _signature(fields: dict) -> str:
    """The text `str(inspect.signature(cls))` gives for the standard library's __init__ (its class __doc__),
    without importing inspect: annotations are strings (from __future__ import annotations)."""
    parts = []
    for name, f in fields.items():
        text = f"{name}: {f.type!r}"
        if f.default_factory is not _MISSING:
            text += " = <factory>"
        elif f.default is not _MISSING:
            text += f" = {f.default!r}"
        parts.append(text)
    return f"({', '.join(parts)})"
