"""The review model's review queue (core/queue.py): built on a snapshot of the labels in a worker, kept until
the pair of runs changes or a batch of edits has gone by. A mixin of ReviewModel (tui/model.py)."""

from __future__ import annotations


class ReviewQueueing:
    """ReviewModel's review queue and the gate's stability the queue last found."""

    REQUEUE_AFTER = 25  # edits after which the queue is ranked again (next() skips what was judged meanwhile)

    def review_queue(self):
        """The review queue (`rankgate.core.queue.build_queue`) for the current baseline and
        candidate and every loaded run, on the current labels. Kept until the pair changes or a batch of
        edits has gone by; `next_to_review` skips what has been judged since it was built."""
        if not self.queue_fresh():
            self.queue_job()()
        return self._queue[2]

    def stability(self):
        """(core.bounds.Stability, edits since) of the gate as the review queue last found it; None
        before the queue is built for this pair of runs."""
        cached = getattr(self, "_queue", None)
        if cached is None or cached[0] != self.pair_version or cached[2].stability is None:
            return None
        return cached[2].stability, self.version - cached[1]

    def queue_fresh(self) -> bool:
        cached = getattr(self, "_queue", None)
        return cached is not None and cached[0] == self.pair_version and \
            self.version - cached[1] < self.REQUEUE_AFTER

    def queue_job(self):
        """Building the queue as a callable for a worker thread: the labels, runs and policy are taken
        now (a snapshot), so edits made while it runs do not disturb it; it stores what it built."""
        import dataclasses

        from rankgate.core.queue import build_queue

        key, version = self.pair_version, self.version
        policy = dataclasses.replace(self.policy, baseline=self.baseline, candidate=self.candidate)
        runs = {name: ri.run for name, ri in self.runs.items()}
        qrels, queries, no_answer = self.labels.to_qrels(), dict(self.queries), set(self.no_answer)
        access, level = self.access, self.level
        blind = self._judge_overlap()

        def build():
            nonlocal qrels, runs, no_answer
            if access is not None:  # the queue and its stability on what the users may see, as the CLI's gate
                from rankgate.core.acl import as_seen

                qrels, seen, no_answer = as_seen(access, qrels, list(runs.values()), level, no_answer)
                runs = dict(zip(runs, seen))
            queue = build_queue(qrels, runs, policy, queries=queries, no_answer=no_answer, stability=True,
                                blind=blind)
            self._queue = (key, version, queue)  # one assignment: atomic for the main thread
            return queue

        return build

    def _judge_overlap(self) -> list[tuple[str, str]]:
        """The judge's overlap beside the workspace (labels overlap): queued first, judged blind."""
        where = getattr(self.labels, "where", "") or ""
        if not where or where.startswith("("):
            return []
        from rankgate.store.suggestions import SuggestionBook, path_beside

        try:
            return SuggestionBook(path_beside(where)).overlap()[0]
        except OSError:
            return []

    def next_to_review(self, after: tuple[str, str] | None = None):
        """The queue's next item after `after` not judged since the queue was built (from the start when
        `after` is not queued); None when every queued document is judged."""
        queue = self.review_queue()
        judged = lambda q, d: d in self.labels.grades(q)  # noqa: E731
        item = queue.next(after=after, judged=judged)
        if item is None and after is not None:
            item = queue.next(judged=judged)  # wrap around
        return item
