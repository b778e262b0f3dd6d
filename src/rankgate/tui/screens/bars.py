"""The review screen's top bar (the decision, the benchmark, the runs) and status bar (progress, the review
queue, what ctrl+z undoes): each piece whole and only while it fits. A mixin of ReviewScreen
(tui/screens/review.py)."""

from __future__ import annotations

from rich.text import Text

from rankgate.tui.safe import excerpt, id_excerpt, literal
from rankgate.tui.queue_order import ORDER_WORDS
from rankgate.tui.widgets.gate_panel import GatePanel, decision_text, refusal_line, unread_line
from rankgate.tui.widgets.gate_reasons import one_line_reason
from rankgate.tui.widgets.text_static import TextStatic


class TopAndStatusBars:
    """The two bars above the panes, drawn from the screen's model and gate."""

    def refresh_top(self) -> None:
        """The decision and its reason (or the mode) lead; then the benchmark, its size, k, the runs and the
        collection version, each whole and only while it fits (never cut mid-word)."""
        m = self.model
        view = self._gate
        t = Text(end="")
        items: list[Text] = [literal(excerpt(m.name, 30), style="bold cyan"), Text(f"{m.nq} queries", style="dim")]
        if self.labels_only:  # no runs: no decision, no measures
            t.append(" LABELS ", style="bold reverse")
            t.append(" labels only: no runs given (--runs FILE adds rankings and the gate)", style="bold")
            items.append(Text(f"{int(m.num_labels.sum())} labels", style="dim"))
        elif self.blind:  # no decision, no run names: B shows them again
            t.append(" BLIND ", style="bold reverse")
            t.append(" runs, decision and measures hidden (B shows them)", style="bold")
            items.append(Text(f"k={m.k}", style="dim"))
        else:
            unread = self.query_one(GatePanel).unread  # a run of the pair left out: no decision
            t.append_text(decision_text(view, unread))  # the decision and its one-line reason lead, on any width
            t.append(" ")
            reason = unread_line(unread) if unread else refusal_line(view.refused) if view.refused else \
                one_line_reason(view.check_details, view.k)
            t.append_text(literal(reason, style="bold"))
            items.append(Text(f"k={m.k}", style="dim"))
            for role, name, style in (("baseline", m.baseline, "bold"), ("candidate", m.candidate, "bold cyan")):
                if role in unread:  # named in the lead as left out: not the run standing in for it
                    continue
                item = Text(f"{role} ", style="dim")
                item.append_text(literal(id_excerpt(name, 24), style=style))
                items.append(item)
        if not m.labels.saved:  # before the rest: it must be seen
            items.insert(0, Text("labels NOT saved (no store)", style="bold red"))
        if m.collection_version:
            item = Text("collection ", style="dim")
            item.append_text(literal(excerpt(m.collection_version, 24), style="bold"))
            items.append(item)
        if self.blind:
            items.append(Text("your labels only, ranks hidden", style="dim"))
        room = self.app.size.width - 2  # the bar's padding
        # Kept by priority (what is saved, the runs, the collection version, k, the name, the size), shown in
        # order; one that does not fit is left out whole.
        used, kept = len(t.plain), set()
        first = ("labels NOT", "k=", "baseline ", "candidate ", "collection ")
        for item in sorted(items, key=lambda i: (not i.plain.startswith(first), items.index(i))):
            if used + 3 + len(item.plain) <= room:
                used += 3 + len(item.plain)
                kept.add(id(item))
        for item in items:
            if id(item) in kept:
                t.append(" · ", style="dim")
                t.append_text(item)
        self.query_one("#top-bar", TextStatic).show(t)
        self.refresh_status()

    def refresh_status(self) -> None:
        """Progress: judged this session and today, unjudged left in the gate's runs' top k, the review
        queue's length, and what ctrl+z would undo."""
        m = self.model
        if m is None:
            return
        book = m.labels
        t = Text(end="")
        t.append("judged ", style="dim")
        session = book.judged_session()
        t.append(f"{len(session)}", style="bold")
        t.append(" this session, ", style="dim")
        t.append(f"{book.judged_today(session)}", style="bold")
        t.append(" today · ", style="dim")
        t = t[:-3] if t.plain.endswith(" · ") else t  # the pieces below bring their own separators
        unexported = getattr(self.app, "unexported", 0)  # not yet in the folder's qrels file (screens/sync.py)
        if unexported:  # early in the line: seen at 80 columns
            t.append(" · ", style="dim")
            t.append(f"{unexported} unexported", style="bold yellow")
        room = self.app.size.width - 2  # the bar's padding
        who = literal(excerpt(self.loaded.reviewer, 16), style="bold") if self.loaded else Text("")
        if room < 98:  # below 100 columns the progress and the queue take the line
            who = Text("")
        last = Text(end="")
        if book.done:
            e = book.done[-1]
            last.append("^z: ", style="dim")
            last.append_text(literal(excerpt(f"{e.what} {e.doc}", 40), style="dim italic"))
        if self.labels_only:
            forms = [[Text(f"{int((m.num_labels > 0).sum())} of {m.nq} queries have labels", style="dim")]]
        else:  # long words when all fit, else short ones (the queue's runs stay in view)
            forms = [self._queue_words(narrow=False), self._queue_words(narrow=True)]
        certain = Text("") if self.labels_only else (self._certain_words(narrow=True) or Text(""))
        for form in forms:  # pieces by priority: the progress, who judges, the queue, what ctrl+z undoes,
            pieces = [form[0], who, *form[1:], last, certain]  # judgments left to a certain decision
            used = len(t.plain)
            kept = []
            for piece in pieces:
                extra = len(piece.plain) + (1 if piece is who else 3)
                if piece.plain and used + extra <= room:
                    kept.append(piece)
                    used += extra
            if all(p in kept for p in form) or form is forms[-1]:
                break
        out = Text(end="")
        if who in kept:
            out.append_text(who)
            out.append(" ")
        out.append_text(t)
        for piece in pieces:
            if piece in kept and piece is not who:
                out.append(" · ", style="dim")
                out.append_text(piece)
        self.query_one("#status-bar", TextStatic).show(out)

    SHORT_ORDER = {"suggested": "suggested first", "disagreement": "disagreements"}

    def _queue_words(self, narrow: bool) -> list[Text]:
        """The unjudged documents in the gate's top k and the review queue, in long or short words."""
        m = self.model
        left = m.unjudged_in_pair()
        unjudged = Text(f"{left}", style="bold magenta" if left else "bold green", end="")
        unjudged.append(f" unjudged{',' if narrow else ' in the'} gate's top {m.k}", style="dim")
        queued = m.queue_left()
        t = Text("queue ", style="dim", end="")
        t.append("?" if queued is None else f"{queued}" if narrow else f"{queued} left", style="bold")
        n = len(m.runs)  # u walks every loaded run's top k; the gate's report counts only its two runs'
        runs = f"{n} run{'s' if n != 1 else ''}"
        t.append((f", {runs}" if narrow else f" in {runs}") + (" (u builds it)" if queued is None else ""),
                 style="dim")
        order = self.queue_order.order
        if order != "decisive":  # U chose another order for u
            t.append(f" ({self.SHORT_ORDER[order] if narrow else ORDER_WORDS[order]})", style="dim")
        return [unjudged, t]

    def _certain_words(self, narrow: bool) -> Text | None:
        """How many more judgments make the gate's decision certain (core/bounds.py, core/budget.py), from the
        review queue's last look; None before it has looked, and once the decision is certain (the gate pane
        says "labels: stable")."""
        got = self.model.stability() if not self.labels_only else None
        if got is None or got[0].stable:
            return None
        st, _ = got
        left = [(q, d) for q, d in st.to_judge if d not in self.model.labels.grades(q)]
        if not st.to_judge:
            return Text("no judgment makes it certain" if narrow else "no judgments can make the decision certain",
                        style="yellow", end="")
        t = Text(f"{len(left)}", style="bold yellow", end="")
        t.append(" more to certain" if narrow else " more judgments make the decision certain", style="dim")
        return t
