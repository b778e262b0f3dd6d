"""The policy file: every key read, every mistake one line naming the file."""

import datetime as dt
import re

import pytest

from rankgate.core.errors import InputError
from rankgate.core.measures import Measure
from rankgate.core.policy import Policy, load_policy
from tests.conftest import ROOT, write


def load(tmp_path, text: str) -> Policy:
    return load_policy(write(tmp_path / "policy.toml", text))


def test_every_key(tmp_path):
    p = load(tmp_path, '''
k = 5
rel_level = 2
short_rankings = "allow"
measures = ["nDCG@5"]
must_pass = ["q1"]
baseline = "a"
candidate = "b"
allow_snapshot_mismatch = true
[significance]
resamples = 500
seed = 9
confidence = 0.9
[[rules]]
measure = "RR@5"
check = "no_significant_regression"
alpha = 0.01
test = "bootstrap"
weighted = true
slice = ["critical", "dns"]
min_queries = 3
[[rules]]
check = "budget"
field = "context_tokens"
stat = "p50"
max_ratio = 1.2
[[rules]]
check = "no_newly_failed"
max = 2
[[rules]]
check = "judged"
min = 0.8
[[waivers]]
query = "q1"
owner = "ana"
reason = "known"
expires = 2026-12-31
[[waivers]]
query = "q2"
owner = "bo"
reason = "known too"
expires = "2027-01-15"
''')
    assert (p.k, p.checks.rel_level, p.checks.short_rankings, p.measures) == (5, 2, "allow", [Measure("nDCG", 5)])
    assert (p.resamples, p.seed, p.confidence, p.allow_snapshot_mismatch) == (500, 9, 0.9, True)
    sig, budget, nnf, judged = p.rules
    assert (sig.name, sig.kind, sig.alpha, sig.test, sig.weighted, sig.slices, sig.min_queries) == (
        "RR@5_weighted_no_significant_regression", "no_significant_regression", 0.01, "bootstrap", True,
        ("critical", "dns"), 3)
    assert (budget.name, budget.field, budget.stat, budget.max, budget.max_ratio) == (
        "context_tokens_p50_budget", "context_tokens", "p50", None, 1.2)
    assert (nnf.name, nnf.max, judged.name, judged.floor) == ("no_newly_failed_queries", 2.0, "judged_share", 0.8)
    assert [w.expires for w in p.waivers] == [dt.date(2026, 12, 31), dt.date(2027, 1, 15)]
    assert p.as_dict()["rules"][0]["slice"] == ["critical", "dns"] and p.sources == [str(tmp_path / "policy.toml")]


@pytest.mark.parametrize("text,needle", [
    ("floor = 1", "unknown policy key 'floor'"),
    ("k = true", "policy key 'k' must be an integer, found a boolean"),
    ("allow_snapshot_mismatch = 1", "policy key 'allow_snapshot_mismatch' must be true or false, found an integer"),
    ("[significance]\nresamples = 10", "significance.resamples must be between 100 and 10000000"),
    ("[significance]\nconfidence = 95", "significance.confidence must be between 0 and 1"),
    ("[significance]\nrounds = 5", "significance: unknown key 'rounds'"),
    ('[[rules]]\nmeasure = "R@5"\ncheck = "floor"', "rules[0]: check 'floor' needs 'min', a number"),
    ('[[rules]]\nmeasure = "R@5"\ncheck = "floor"\nmin = "high"', "rules[0].min must be a number, found a string"),
    ('[[rules]]\nmeasure = "R@5"\nalpha = 0.1', "rules[0]: key 'alpha' does not apply to check 'not_lower'"),
    ('[[rules]]\nmeasure = "R@5"\ncheck = "best"', "rules[0]: 'check' must be one of not_lower, floor"),
    ('[[rules]]\nmeasure = "R@x"', "rules[0].measure"),
    ('[[rules]]\ncheck = "no_significant_regression"', "rules[0]: missing 'measure'"),
    ('[[rules]]\nmeasure = "R@5"\ncheck = "no_significant_regression"\nalpha = 0.9', "'alpha' must be between 0 and 0.5"),
    ('[[rules]]\nmeasure = "R@5"\ncheck = "no_significant_regression"\ntest = "t"', "'test' must be one of randomization"),
    ('[[rules]]\nmeasure = "R@5"\nslice = 3', "'slice' must be a tag, a list of tags"),
    ('[[rules]]\nmeasure = "R@5"\nslice = "x"\nmin_queries = 0', "'min_queries' must be at least 1"),
    ('[[rules]]\nmeasure = "R@5"\nweighted = "yes"', "rules[0].weighted must be true or false"),
    ('[[rules]]\ncheck = "budget"\nfield = "cost"\nmax = 1', "a budget needs 'field', one of latency_ms, context_tokens"),
    ('[[rules]]\ncheck = "budget"\nfield = "latency_ms"', "a budget needs 'max' (absolute) or 'max_ratio'"),
    ('[[rules]]\ncheck = "budget"\nfield = "latency_ms"\nmax = 1\nslice = "a"', "key 'slice' does not apply"),
    ('[[rules]]\ncheck = "judged"\nmin = 80', "'min' must be between 0 and 1"),
    ('[[rules]]\nmeasure = "R@5"\n[[rules]]\nmeasure = "R@5"', "two rules are named 'R@5_not_lower'"),
    ('[[waivers]]\nquery = "q1"\nowner = "a"\nreason = "r"', "waivers[0]: missing 'expires'"),
    ('[[waivers]]\nquery = "q1"\nowner = "a"\nreason = "r"\nexpires = "soon"', "'expires' must be a date"),
    ('[[waivers]]\nquery = "q1"\nowner = " "\nreason = "r"\nexpires = 2026-01-01', "'owner' must not be empty"),
    ('[[waivers]]\nquery = "q1"\nowner = "a"\nreason = "r"\nexpires = 2026-01-01\nteam = "x"', "unknown key 'team'"),
    ("k = [", "invalid TOML"),
])
def test_mistakes_are_one_line_naming_the_file(tmp_path, text, needle):
    with pytest.raises(InputError) as e:
        load(tmp_path, text)
    msg = str(e.value)
    assert needle in msg and msg.startswith(str(tmp_path / "policy.toml")) and "\n" not in msg


def documented_example() -> str:
    doc = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    return re.search(r"## A complete example.*?```toml\n(.*?)```", doc, re.S).group(1)


def test_the_documented_example_parses(tmp_path):
    p = load(tmp_path, documented_example())
    assert [r.kind for r in p.rules] == ["no_significant_regression", "not_lower", "floor", "floor", "judged",
                                        "budget", "budget", "no_newly_failed"]
    assert p.waivers[0].query == "q-leaked-key"


def test_the_sample_policy_parses():
    p = load_policy(ROOT / "sample_benchmarks" / "ops-handbook" / "policy.toml")
    kinds = {r.kind for r in p.rules}
    assert {"no_significant_regression", "floor", "budget"} <= kinds
    assert any(r.slices == ("critical",) for r in p.rules)
