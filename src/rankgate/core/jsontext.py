"""`json.dumps(obj, indent=2)`, the same text, faster on large results.

With an indent the json module encodes in Python, a generator step per item: `compare` on 10,000
queries writes 64 MB (every query's measures and document movements) and spent more time there than
scoring. Here a dict or list whose values are all scalars (a movement, a query's measure) is encoded by
the json module's C encoder in one call, with an item separator that puts each item on its own line at
its depth; the containers above it are laid out as json lays them out. tests/unit/test_jsontext.py
compares the text with json.dumps on every kind of value.

A `Laid` value is laid out by its own function: `compare`'s per-query list (core/compare.py writes every
query's text from its fields, without a dict per query and movement); dumps puts its text where json.dumps
would put the value it stands for. `pieces` gives the text in pieces, for a writer that need not join them.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii  # (json.dumps' string encoder)


class Laid:
    """A value dumps does not lay out itself: `parts(depth, indent)` gives json.dumps's text of the value it stands
    for as strings (a list or any iterable, taken in order once), as an item at that depth (its lines after the
    first indented for it)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts


_CONTAINERS = (dict, list, tuple, Laid)
_INF = float("inf")


def _scalar(obj) -> str:
    """json.dumps(obj) for a value that is not a container: the json module's own conversions (its string
    encoder, int's and float's repr, its names for NaN and the infinities) without a call of its encoder for each
    value (the gate's report has some 400 keys and scalars); any other type goes to json.dumps."""
    cls = obj.__class__
    if cls is str:
        return encode_basestring_ascii(obj)
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if cls is int:
        return int.__repr__(obj)
    if cls is float:
        if obj != obj:
            return "NaN"
        if obj == _INF:
            return "Infinity"
        if obj == -_INF:
            return "-Infinity"
        return float.__repr__(obj)
    return json.dumps(obj)


def dumps(obj, indent: int = 2) -> str:
    """json.dumps(obj, indent=indent): the same text."""
    return "".join(pieces(obj, indent))


def pieces(obj, indent: int = 2, out=None) -> list[str]:
    """json.dumps(obj, indent=indent)'s text in pieces, in order (compare's 64 MB written without joining them).
    `out`: where they go instead of a new list, anything with a list's `append` and `+=` (cli.base.JsonOut writes
    them as they come)."""
    out = [] if out is None else out
    _put(obj, 0, indent, out, {})
    return out


def _leaf_encoder(separator: str, key_separator: str = ": "):
    """json's C encoder with these separators (what JSONEncoder.encode makes anew at every call)."""
    from json.encoder import c_make_encoder, encode_basestring_ascii

    encoder = json.JSONEncoder(separators=(separator, key_separator))
    if c_make_encoder is None:  # a Python without json's C speedups
        return encoder.encode
    chunks = c_make_encoder({}, encoder.default, encode_basestring_ascii, None, key_separator, separator, False,
                            False, True)
    return lambda obj: "".join(chunks(obj, 0))


def _key(k) -> str:
    """A key as json writes it (a string; numbers, booleans and None converted as json converts them)."""
    if isinstance(k, str):
        return k
    if k is True or k is False or k is None:
        return json.dumps(k)
    if isinstance(k, (int, float)):
        return json.dumps(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def dumps_at(obj, depth: int, indent: int = 2) -> str:
    """json.dumps(obj, indent=indent)'s text for a value that sits at `depth` (its inner lines indented for it)."""
    out: list[str] = []
    _put(obj, depth, indent, out, {})
    return "".join(out)


def _put(obj, depth: int, indent: int, out: list[str], leaf_encoders: dict) -> None:
    if obj.__class__ is Laid:
        out += obj.parts(depth, indent)
        return
    if isinstance(obj, dict):
        values, opening, closing = obj.values(), "{", "}"
    elif isinstance(obj, (list, tuple)):
        values, opening, closing = obj, "[", "]"
    else:
        out.append(_scalar(obj))
        return
    if not obj:
        out.append(opening + closing)
        return
    inner = "\n" + " " * (indent * (depth + 1))
    for v in values:
        if isinstance(v, _CONTAINERS):
            break
    else:  # a leaf: one call of the C encoder
        encode = leaf_encoders.get(depth)
        if encode is None:
            encode = leaf_encoders[depth] = _leaf_encoder("," + inner)
        out.append(opening + inner + encode(obj)[1:-1] + "\n" + " " * (indent * depth) + closing)
        return
    if _leaf_dicts(values):  # a list (or dict) of flat dicts, as a query's movements: one C call for them all
        out.append(_put_leaf_dicts(obj, opening, closing, depth, indent, leaf_encoders))
        return
    out.append(opening)
    first = True
    for item in obj.items() if opening == "{" else obj:
        out.append(inner if first else "," + inner)
        first = False
        if opening == "{":
            out.append(encode_basestring_ascii(_key(item[0])) + ": ")
            item = item[1]
        _put(item, depth + 1, indent, out, leaf_encoders)
    out.append("\n" + " " * (indent * depth) + closing)


# The C encoder's separators in _put_leaf_dicts: it escapes every control character inside a string, so these
# two appear in its text only where it put them, and are replaced by the indented separators afterwards.
_ITEM, _KEY = "\x00", "\x01"


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _leaf_dicts(values) -> bool:
    """Every value a dict with at least one item and no container among its values."""
    for v in values:
        if v.__class__ is not dict or not v:
            return False
        if not _SCALARS.issuperset(map(type, v.values())):  # (the check in C; other types one by one)
            if any(isinstance(x, _CONTAINERS) for x in v.values()):
                return False
    return True


def _put_leaf_dicts(obj, opening: str, closing: str, depth: int, indent: int, leaf_encoders: dict) -> str:
    """json.dumps(obj, indent)'s text for a list or dict of flat dicts (`_leaf_dicts`), from one call of the C
    encoder with marker separators: a marker right after a "}" ends one of the flat dicts (a scalar never ends
    with "}"; a string ends with a quote), the others separate their items."""
    encode = leaf_encoders.get("markers")
    if encode is None:
        encode = leaf_encoders["markers"] = _leaf_encoder(_ITEM, _KEY)
    outer, inner = "\n" + " " * (indent * (depth + 1)), "\n" + " " * (indent * (depth + 2))
    body = encode(obj)[1:-1]
    if opening == "[":  # {..}<item>{..}: each "{" opens a flat dict
        body = body.replace("}" + _ITEM + "{", outer + "}," + outer + "{" + inner)
        body = "{" + inner + body[1:]
    else:  # "key"<key>{..}<item>"key"<key>{..}
        body = body.replace("}" + _ITEM, outer + "}," + outer).replace(_KEY + "{", ": {" + inner)
    body = body.replace(_ITEM, "," + inner).replace(_KEY, ": ")
    return opening + outer + body[:-1] + outer + "}" + "\n" + " " * (indent * depth) + closing
