"""`rankgate gate` says each kind of input problem in one line per file: short rankings and queries with no
relevant document are counted and the first few named (newcomer s9, N14), as extra queries are."""

from rankgate.cli import main
from tests.conftest import write

QRELS = "".join(f"q{i} 0 d{i} {1 if i < 5 else 0}\n" for i in range(1, 9))
RUN = "".join(f"q{i} Q0 d{i} 1 1 r\nq{i} Q0 x{i} 2 0.5 r\n" for i in range(1, 9))


def gate(capsys, *argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err.splitlines()


def test_short_rankings_are_one_line_per_run(tmp_path, capsys):
    qrels = write(tmp_path / "qrels.txt", QRELS.replace(" 0\n", " 1\n"))
    a, b = write(tmp_path / "a.trec", RUN), write(tmp_path / "b.trec", RUN)
    code, lines = gate(capsys, "gate", "--qrels", qrels, "--runs", a, "--runs", b, "--quiet")
    assert code == 2 and len(lines) == 2, lines
    assert lines[0] == (f"error: {a}: run 'a' ranks fewer than k=10 documents for 8 queries: 'q1' (2), 'q2' (2), "
                        "'q3' (2), 'q4' (2), 'q5' (2) and 3 more (use --short-rankings allow to accept them, or a "
                        "smaller --k)")


def test_queries_with_no_relevant_document_are_one_line(tmp_path, capsys):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    a, b = write(tmp_path / "a.trec", RUN), write(tmp_path / "b.trec", RUN)
    code, lines = gate(capsys, "gate", "--qrels", qrels, "--runs", a, "--runs", b, "--k", "2", "--quiet")
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {qrels}: 4 queries have no relevant document (grade >= 1): 'q5', 'q6', "
                               "'q7', 'q8'; declare them no-answer queries or label their evidence")
