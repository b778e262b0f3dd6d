"""Several experts on one workspace (`rankgate review --serve`): what the other sessions graded, shown here.

Every browser session writes the benchmark's one workspace (store/durable.py, `share` and `turn`); each
reads the others' edits in a few times a second (`StoreBackend.catch_up`). A pair keeps one judgment per
reviewer and the most recent one is its label, so both grades stay in the history and the later wins; the
reviewer whose grade was overruled is told on their screen.
"""

from __future__ import annotations

from rankgate.core.errors import InputError
from rankgate.core.text import visible


def show_others_edits(app, model, screen) -> None:
    backend = model.labels.backend
    if not hasattr(backend, "catch_up"):
        return
    try:
        touched, reviews = backend.catch_up()
    except InputError as e:  # the lock held too long by another session: the next tick tries again
        app.notify(f"could not read the other reviewers' edits: {e}", severity="warning", markup=False)
        return
    if touched is None:  # another session folded the journal: everything was read again
        touched = set(model.qindex)
    if not touched:
        return
    cache = getattr(model.labels, "_cache", {})
    for qid in touched:
        cache.pop(qid, None)
    for qid in sorted(q for q in touched if q):
        if qid in model.qindex or model.labels.labels(qid):
            model.apply_edit(qid)
            screen.after_edit(qid, screen.doc)
    me = backend.reviewer
    told, said = set(), []  # the pairs I was told were overruled; the other notices, said before them
    for review in reviews:
        who, qid, doc, grade = review.get("reviewer"), review.get("query"), review.get("doc"), review.get("grade")
        if who == me and review.get("removed") is not None:  # another session corrected my grade ("correct theirs")
            by = next((r for r in reviews if r.get("query") == qid and r.get("doc") == doc
                       and r.get("reviewer") != me and r.get("removed") is None), None)
            now = f" {visible(by.get('reviewer'))} graded it {by.get('grade')}" if by else ""
            told.add((qid, doc))
            app.notify(f"your grade {grade} of {visible(qid)} {visible(doc)} was corrected:{now} (both are kept in "
                       "the history)", title="overruled", severity="warning", timeout=15, markup=False)
            continue
        if who == me or review.get("removed") is not None:
            continue
        mine = model.labels.mine(qid, doc)
        pair = f"{visible(qid)} {visible(doc)}"
        if mine is not None and mine.grade != grade:
            told.add((qid, doc))
            app.notify(f"{visible(who)} graded {pair} {grade} after your {mine.grade}: the later grade counts "
                       "(both are kept in the history)", title="overruled", severity="warning", timeout=15,
                       markup=False)
        elif screen.model is not None and screen.qi is not None and model.qids[screen.qi] == qid:
            said.append(f"{visible(who)} graded {pair} {grade}")
    # The notice line shows one notice at a time: a plain "kofi graded ..." must not replace the overruled
    # notice (the served session and the terminal both showed only it), so it is said only when none was.
    if not told:
        for text in said:
            app.notify(text, timeout=6, markup=False)
