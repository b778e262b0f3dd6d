"""Every command of the review screen, defined once: its key (footer) and its palette entry.

`BINDINGS` and the command palette's provider are both built from `COMMANDS`,
so a new command is one line here plus its `action_*` method on the screen.
Parameterised commands (a run as baseline or candidate, a slice filter) are
generated from the loaded benchmark by the same provider.
"""

from __future__ import annotations

from functools import partial

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

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


# the palette's Quit (Textual's own entry, ReviewApp.get_system_commands) and the q key's help
QUIT_HELP = ("Leave the review; label edits not exported yet are offered for export first (every edit is "
             "already saved)")

COMMANDS: tuple[Command, ...] = (
    # The grade keys follow the benchmark's scale: grade_commands() below, bound by bindings().
    Command("pick_grade", "g", "Pick a grade", "Choose the highlighted document's grade from the benchmark's scale",
            "grade"),
    Command("negative_grade", "minus", "Negative grade", "Then a digit: grade -1 to -9 (for scales such as -2..4)",
            key_display="-"),
    Command("edit_reason", "r", "Edit reason", "Write or change the reason of the highlighted label", "reason"),
    Command("remove_label", "x,delete", "Remove my judgment",
            "Remove your own judgment of the highlighted document (kept in history; ctrl+z undoes)", "remove",
            key_display="x"),
    Command("undo", "ctrl+z", "Undo", "Undo this session's last edit (history records the undo)", "undo",
            key_display="^z"),
    Command("redo", "ctrl+y", "Redo", "Redo the edit undone last (history records the redo)", "redo",
            key_display="^y"),
    Command("set_version", "V", "Set collection version",
            "The version of the collection you inspected for the highlighted label", "version"),
    Command("toggle_unsure", "exclamation_mark", "Mark unsure / clear",
            "Mark the highlighted label unsure (needs discussion) with a note; again to clear; an unjudged "
            "document is graded first", "unsure",
            key_display="!"),
    Command("add_label", "a", "Add label", "Label any document ID for this query", "add"),
    Command("accept_suggestion", "A", "Accept suggested grade",
            "Take the judge's suggested grade and reason (labels suggest) as your judgment; a grade key overrides it"),
    Command("ask_judge", "S", "Ask the judge about this query",
            "Suggested grades for this query's unjudged top-k documents from benchmark.toml's [judge]; S again cancels"),
    Command("next_review", "n", "Next unjudged document",
            "The next unjudged document in a top k: in this query, then in the next query needing review", "next"),
    Command("prev_review", "N", "Previous query needing review", "Jump back to the previous query needing review",
            "prev"),
    Command("next_queued", "u", "Next in the review queue",
            "Jump to the unjudged top-k document whose label could most change the gate or a must-pass query",
            "queue"),
    Command("cycle_queue_order", "U", "Review queue order: decisive, suggested, disagreement",
            "What u walks: the most decisive first, then what a judge suggested relevant (unjudged) first, then "
            "judged pairs where the judge's suggestion and the label disagree", "order"),
    Command("focus_filter", "slash", "Filter queries", "Filter by words, #slice or is:review, is:must, is:miss ...",
            "filter", key_display="/"),
    Command("filter('is:must')", "m", "Show must-pass queries", "Filter the list to must-pass queries", "must"),
    Command("filter('is:miss')", "f", "Show candidate misses",
            "Filter the list to queries the candidate misses in its top k", "misses"),
    Command("filter('is:review')", "v", "Show queries needing review",
            "Filter the list to queries with unjudged documents in a run's top k", "review"),
    Command("filter('')", "escape", "Clear filter", "Show every query", key_display="esc"),
    Command("cycle_sort", "s", "Cycle sort", "Sort by change (worst first) or in the benchmark's order (after edits "
            "left the order stale: sort again first)", "sort"),
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
    Command("show_missing", "M", "Missed relevant documents",
            "Every relevant document the baseline and the candidate miss in their top k, for this query"),
    Command("show_funnel", "F", "Stage funnel", "Where the baseline's and the candidate's pipelines (retrieve, "
            "rerank, context) lose relevant documents, for this query and overall"),
    Command("history", "h", "Label history", "Every change to this query's labels", "hist"),
    Command("edit_notes", "o", "Edit query notes", "Write or change the highlighted query's notes (kept in history)",
            "notes"),
    Command("guidelines", "G", "Labelling guidelines", "The benchmark's guidelines for graders", "guide"),
    Command("reload", "ctrl+r", "Open again", "Read the benchmark's files again (after fixing one)"),
    Command("judge", "l", "Judging layout", "One query, one passage and the grade keys: a grade key stores "
            "the grade and shows the next document needing one (Escape: back here)", "judge"),
    Command("show_ids", "i", "Whole IDs", "The highlighted query's and document's IDs, whole, on the notice line"),
    Command("zoom", "z", "Zoom pane", "Give the focused pane the whole screen (again to restore)", "zoom"),
    Command("next_pane", "p", "Next pane", "Go to the next of Query, Rankings, Document (below 120 columns the "
            "bottom row shows one of them)", "pane"),
    Command("help", "question_mark", "Keys and legend", "What each key does and what each mark means", "help",
            key_display="?"),
    Command("quit", "q", "Quit", QUIT_HELP, "quit"),
)


# The judging screen's commands (screens/judging.py); its grade keys are the digits, as here.
JUDGING_COMMANDS: tuple[Command, ...] = (
    Command("undo", "u,ctrl+z", "Undo", "Undo the last judgment and go back to its document", "undo",
            key_display="u"),
    Command("edit_reason", "r", "Reason", "Write the reason of the document graded last", "reason"),
    Command("skip", "s", "Skip", "The next document needing a judgment, this one left as it is", "skip"),
    Command("show_ids", "i", "Whole IDs", "The query's and the document's IDs, whole, on the notice line", "IDs"),
    Command("help", "question_mark", "Keys and legend", "What each key does", "help", key_display="?"),
    Command("close", "escape", "All panes", "Back to the review screen's panes, on this document", "panes",
            key_display="esc"),
    Command("quit", "q", "Quit", QUIT_HELP, "quit"),
)


def judging_bindings() -> list[Binding]:
    digits = [Binding(str(d), f"grade({d})", f"Grade {d}", show=False) for d in DIGITS]
    return digits + [Binding(c.key, c.action, c.footer or c.title, show=False, key_display=c.key_display)
                     for c in JUDGING_COMMANDS]


# Textual's key names for what is typed, as the help screen and docs/review.md show them.
PRESSED = {"minus": "-", "slash": "/", "question_mark": "?", "exclamation_mark": "!", "escape": "esc"}


def pressed(key: str) -> str:
    """A Textual key name as it is pressed: "question_mark" -> "?", "ctrl+z" stays "ctrl+z"."""
    return PRESSED.get(key, key)


def keys_pressed(command: Command) -> str:
    """Every key of a command as pressed, e.g. "x / delete" (the footer's `key_display` shows only one)."""
    return " / ".join(pressed(k.strip()) for k in command.key.split(","))


DIGITS = range(10)  # the keys 0-9: a grade of the scale (after `-`: its negative)


def grade_key(grade: int) -> str | None:
    """What to press for a grade: "2", "-2" (minus, then 2); None for grades only the picker (g) offers."""
    if 0 <= grade <= 9:
        return str(grade)
    if -9 <= grade < 0:
        return f"-{-grade}"
    return None


def grade_commands(scale: dict[int, str]) -> list[Command]:
    """One command per grade of the benchmark's scale (`grades` in benchmark.toml), in order."""
    out = []
    for g in sorted(scale):
        key = grade_key(g)
        out.append(Command(f"grade({g})", key or "g", f"Grade {g}: {scale[g]}",
                           f"Label the highlighted document {g} ({scale[g]})", key_display=key or "g"))
    return out


def bindings() -> list[Binding]:
    digits = [Binding(str(d), f"grade({d})", f"Grade {d}", show=False) for d in DIGITS]
    return digits + [Binding(c.key, c.action, c.footer or c.title, show=bool(c.footer), key_display=c.key_display)
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
        screen = self.screen
        out = [(c.title, c.action, c.help) for c in grade_commands(getattr(screen, "grades", None) or {})]
        fixed = getattr(screen, "COMMAND_LIST", COMMANDS)  # the judging screen has its own
        out += [(c.title, c.action, c.help) for c in fixed if c.action != "quit"]  # Textual's Quit, reworded
        if fixed is not COMMANDS:
            return out
        model = getattr(screen, "model", None)
        if model is not None and not getattr(screen, "blind", False):  # blind review: no run names
            for name in model.run_names:
                out.append((f"Baseline: {name}", f"set_run('baseline', {name!r})", "Compare against this run"))
                out.append((f"Candidate: {name}", f"set_run('candidate', {name!r})", "Gate this run"))
        if model is not None and getattr(screen, "labels_only", False) is False:  # orders of u (queue_order.py)
            from rankgate.tui.queue_order import ORDER_WORDS

            for order, words in ORDER_WORDS.items():
                out.append((f"Review queue order: {words}", f"set_queue_order({order!r})", "What u walks next"))
        if model is not None:
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
