"""Every command of the review screen, defined once: its key (footer) and its palette entry.

`BINDINGS` and the command palette's provider are both built from `COMMANDS`,
so a new command is one line here plus its `action_*` method on the screen.
Parameterised commands (a run as baseline or candidate, a slice filter) are
generated from the loaded benchmark by the same provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from rankgate.core.text import visible


@dataclass(frozen=True)
class Command:
    action: str  # an action of the review screen, e.g. "grade(2)"
    key: str  # Textual key name(s), comma-separated
    title: str  # the palette's text and the footer's label
    help: str  # one line in the palette (plain words: no markup)
    footer: str = ""  # a shorter footer label; "" keeps the command out of the footer
    key_display: str | None = None


COMMANDS: tuple[Command, ...] = (
    Command("grade(0)", "0", "Grade 0: not relevant", "Label the highlighted document 0 (judged, not relevant)"),
    Command("grade(1)", "1", "Grade 1: partly relevant", "Label the highlighted document 1", "grade",
            key_display="0-3"),
    Command("grade(2)", "2", "Grade 2: relevant", "Label the highlighted document 2"),
    Command("grade(3)", "3", "Grade 3: the answer", "Label the highlighted document 3"),
    Command("edit_reason", "r", "Edit reason", "Write or change the reason of the highlighted label", "reason"),
    Command("remove_label", "x,delete", "Remove label", "Remove the highlighted document's label (kept in history)",
            "remove", key_display="x"),
    Command("add_label", "a", "Add label", "Label any document ID for this query", "add"),
    Command("next_review", "n", "Next query needing review",
            "Jump to the next query with unjudged documents in a run's top k", "next"),
    Command("prev_review", "N", "Previous query needing review", "Jump back to the previous query needing review",
            "prev"),
    Command("next_queued", "u", "Next in the review queue",
            "Jump to the unjudged top-k document whose label could most change the gate or a must-pass query"),
    Command("focus_filter", "slash", "Filter queries", "Filter by words, #slice or is:review, is:must, is:miss ...",
            "filter", key_display="/"),
    Command("filter('is:must')", "m", "Show must-pass queries", "Filter the list to must-pass queries", "must"),
    Command("filter('is:miss')", "f", "Show candidate misses",
            "Filter the list to queries the candidate misses in its top k", "misses"),
    Command("filter('is:review')", "v", "Show queries needing review",
            "Filter the list to queries with unjudged documents in a run's top k", "review"),
    Command("filter('')", "escape", "Clear filter", "Show every query", key_display="esc"),
    Command("cycle_sort", "s", "Cycle sort", "Sort by change (worst first) or in the benchmark's order", "sort"),
    Command("pick_run('baseline')", "b", "Choose baseline run", "Pick the baseline among the loaded runs",
            "base"),
    Command("pick_run('candidate')", "c", "Choose candidate run", "Pick the candidate among the loaded runs",
            "cand"),
    Command("swap_runs", "w", "Swap baseline and candidate", "Exchange the two runs being compared", "swap"),
    Command("compare", "C", "Compare runs",
            "The baseline against every other run: macros with p-value, CI, effect size; per-query changes"),
    Command("adjudicate", "J", "Adjudicate disagreements",
            "Walk the pairs reviewers graded differently and record the final grade with a reason"),
    Command("toggle_blind", "B", "Blind review on/off",
            "Show only your own grades (the gate too) and hide the runs' ranks; again to show everything"),
    Command("export", "e", "Export reviewed qrels", "Write the reviewed labels for CI and say where", "export"),
    Command("history", "h", "Label history", "Every change to this query's labels", "hist"),
    Command("reload", "ctrl+r", "Open again", "Read the benchmark's files again (after fixing one)"),
    Command("zoom", "z", "Zoom pane", "Give the focused pane the whole screen (again to restore)", "zoom"),
    Command("help", "question_mark", "Keys and legend", "What each key does and what each mark means", "help",
            key_display="?"),
    Command("quit", "q", "Quit", "Leave the review (every edit is already saved)", "quit"),
)


def bindings() -> list[Binding]:
    return [Binding(c.key, c.action, c.footer or c.title, show=bool(c.footer), key_display=c.key_display)
            for c in COMMANDS]


def safe_prompt(matcher: Matcher | None, text: str) -> Content:
    """A palette prompt from data, literal (Matcher.highlight would parse it as markup)."""
    text = visible(text, lines="space")
    content = Content(text)
    if matcher is not None:
        score, offsets = matcher.fuzzy_search.match(matcher.query, text)
        for off in offsets:
            if not text[off].isspace():
                content = content.stylize(matcher.match_style, off, off + 1)
    return content


class ReviewCommands(Provider):
    """The review screen's commands in the palette: the fixed ones, then one per run and per slice."""

    def _entries(self) -> list[tuple[str, str, str]]:
        """(title, action, help) for everything the palette offers."""
        out = [(c.title, c.action, c.help) for c in COMMANDS]
        screen = self.screen
        model = getattr(screen, "model", None)
        if model is not None:
            for name in model.run_names:
                out.append((f"Baseline: {name}", f"set_run('baseline', {name!r})", "Compare against this run"))
                out.append((f"Candidate: {name}", f"set_run('candidate', {name!r})", "Gate this run"))
            for tag in model.slices():
                out.append((f"Slice: #{tag}", f"filter({'#' + tag!r})", "Show the queries of this slice"))
        return out

    def _run(self, action: str) -> None:
        self.app.call_later(self.screen.run_action, action)

    async def discover(self) -> Hits:
        if getattr(self.screen, "model", None) is None:
            return
        for title, action, help in self._entries():
            shown = visible(title, lines="space")
            yield DiscoveryHit(safe_prompt(None, title), partial(self._run, action), shown, help=help)

    async def search(self, query: str) -> Hits:
        if getattr(self.screen, "model", None) is None:
            return
        matcher = self.matcher(query)
        for title, action, help in self._entries():
            shown = visible(title, lines="space")
            score = matcher.match(shown)
            if score > 0:
                yield Hit(score, safe_prompt(matcher, title), partial(self._run, action), shown, help=help)
