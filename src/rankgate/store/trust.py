"""Which judges from benchmark folders the user trusts to run (as Jupyter trusts a notebook it signed).

A `[judge]` table in a benchmark folder someone else wrote can name any command, or an endpoint and the
environment variable whose value is sent there as the key. rankgate runs it only once the user has said
so (`rankgate labels suggest BENCH --trust-judge`); the answer is remembered for that folder (its resolved
path) and that judge (core/judge.py trust_token: the command with its script's bytes, or the endpoint, its
model, key variable and prompt), in `trusted-judges.json` under the data folder (store/paths.py). A changed
script or command asks again.
"""

from __future__ import annotations

import json
import os

from rankgate.store.paths import trusted_judges_path

MAX_ENTRIES = 10_000  # the oldest are forgotten beyond this


def _read() -> dict[str, list[str]]:
    try:
        with open(trusted_judges_path(create=False), "rb") as f:
            data = json.loads(f.read(4 << 20))
    except (OSError, ValueError):
        return {}  # no file, or an unreadable one: nothing is trusted (never the reverse)
    if not isinstance(data, dict):
        return {}
    return {k: [t for t in v if isinstance(t, str)] for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list)}


def _folder(folder: str | os.PathLike) -> str:
    return os.path.realpath(os.path.abspath(os.fspath(folder)))


def is_trusted(folder: str | os.PathLike, token: str) -> bool:
    """Whether the user trusted this judge (by its token) in this folder."""
    return token in _read().get(_folder(folder), [])


def trust(folder: str | os.PathLike, token: str) -> None:
    """Remember that the user trusts this judge in this folder."""
    from rankgate.store.storage import atomic_write

    data = _read()
    tokens = data.setdefault(_folder(folder), [])
    if token not in tokens:
        tokens.append(token)
    while sum(len(v) for v in data.values()) > MAX_ENTRIES:
        del data[next(iter(data))]
    atomic_write(trusted_judges_path(), (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))
