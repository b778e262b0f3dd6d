"""A writer for the crash tests: makes planned edits and acknowledges each one on stdout.

    python crash_writer.py DB SEED COUNT FOLD_EVERY

It prints `ready`, then for each planned edit, once the call has returned,
`ack I`. The test kills it with SIGKILL at a random moment (or the store kills
itself at a named crash point) and checks that every acknowledged edit is there.
"""

from __future__ import annotations

import random
import sys

QUERIES = [f"q{i}" for i in range(12)]
DOCS = [f"d{i}" for i in range(40)]


def base_labels() -> list[tuple[str, str, int]]:
    """The labels every trial starts from (imported once, copied per trial)."""
    return [(q, d, (i + j) % 3) for i, q in enumerate(QUERIES) for j, d in enumerate(DOCS[:25])]


def plan(seed: int, count: int) -> list[tuple]:
    """Edits: ("set", q, d, grade, reason) | ("remove", q, d) | ("freeze", name). Always valid in order."""
    rng = random.Random(seed)
    live = {(q, d): g for q, d, g in base_labels()}
    out: list[tuple] = []
    for i in range(count):
        r = rng.random()
        if r < 0.04:
            out.append(("freeze", f"v{i}"))
        elif r < 0.2 and live:
            q, d = rng.choice(sorted(live))
            del live[(q, d)]
            out.append(("remove", q, d))
        else:
            q, d = rng.choice(QUERIES), rng.choice(DOCS)
            g = rng.randint(-1, 3)
            reason = f"edit {i}" + (" long" * rng.randint(0, 40))
            live[(q, d)] = g
            out.append(("set", q, d, g, reason))
    return out


def model(edits: list[tuple]) -> tuple[dict, set, int]:
    """(labels {(q, d): (grade, reason)}, version names, history events) after the edits."""
    labels = {(q, d): (g, "") for q, d, g in base_labels()}
    versions: set = set()
    events = len(QUERIES) + len(base_labels())
    for e in edits:
        if e[0] == "set":
            if labels.get((e[1], e[2])) == (e[3], e[4]):
                continue
            labels[(e[1], e[2])] = (e[3], e[4])
        elif e[0] == "remove":
            del labels[(e[1], e[2])]
        else:
            versions.add(e[1])
        events += 1
    return labels, versions, events


def main(argv: list[str]) -> int:
    from rankgate.store.workspace import Workspace

    db, seed, count, fold_every = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    ws = Workspace.open(db, reviewer="crash", fold_every=fold_every)
    print("ready", flush=True)
    for i, e in enumerate(plan(seed, count)):
        if e[0] == "set":
            ws.set_judgment(e[1], e[2], e[3], reason=e[4])
        elif e[0] == "remove":
            ws.remove_judgment(e[1], e[2])
        else:
            ws.freeze(e[1])
        print(f"ack {i}", flush=True)
    ws.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
