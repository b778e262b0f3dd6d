"""Red team (issue 33, item 7): an export of a qrels file opened on its own leaves every line whose label did
not change byte for byte as the file has it: its spacing, its grade as written, its byte-order mark and a
last line with no newline."""

from __future__ import annotations

from rankgate.store import sync
from tests.store.test_raw_roundtrip import app_open


def export_after(tmp_path, content: bytes, *edits) -> tuple[bytes, bytes]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(content)
    b = app_open(qrels)
    try:
        for q, d, g in edits:
            b.set(q, d, g, "checked")
        _, target, _ = sync.export_reviewed(b.ws, qrels)
    finally:
        b.close()
    assert qrels.read_bytes() == content  # the input as it was
    return content, target.read_bytes()


def test_unchanged_lines_keep_their_spacing_and_grade_as_written(tmp_path):
    old, new = export_after(tmp_path, b"q1 Q0 d3 01  \nq1  Q0 d1 0\nq2 Q0 d9 2\nq2 Q0 d4 0\n", ("q2", "d4", 1))
    assert new == b"q1 Q0 d3 01  \nq1  Q0 d1 0\nq2 Q0 d9 2\nq2 Q0 d4 1\n"


def test_a_last_line_with_no_newline_stays_so(tmp_path):
    old, new = export_after(tmp_path, b"q1 Q0 d3 1\nq1 Q0 d1 0\nq2 Q0 d4 0", ("q1", "d1", 2))
    assert new == b"q1 Q0 d3 1\nq1 Q0 d1 2\nq2 Q0 d4 0"


def test_a_byte_order_mark_stays(tmp_path):
    old, new = export_after(tmp_path, b"\xef\xbb\xbfq1 Q0 d3 1\r\nq1 Q0 d1 0\r\n", ("q1", "d1", 2))
    assert new == b"\xef\xbb\xbfq1 Q0 d3 1\r\nq1 Q0 d1 2\r\n"


def test_comments_and_blank_lines_between_the_labels_stay_in_place(tmp_path):
    text = b"# judged by the TREC assessors\nq1 Q0 d3 1\n# q1 was hard\nq1 Q0 d1 0\n\nq2 Q0 d4 0\n# end\n"
    old, new = export_after(tmp_path, text, ("q1", "d1", 2), ("q1", "dNEW", 1))
    labels = new.split(b"q1 Q0 d3 1\n", 1)[1]  # (rankgate's header goes at the head: the file has comments)
    assert new.startswith(b"# judged by the TREC assessors\n")
    assert labels == b"# q1 was hard\nq1 Q0 d1 2\nq1 Q0 dNEW 1\n\nq2 Q0 d4 0\n# end\n"


def test_the_default_export_name_is_not_written_through_a_link_someone_left_there(tmp_path):
    import pytest

    from rankgate.core.errors import InputError

    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 Q0 d3 1\nq1 Q0 d1 0\n")
    precious = tmp_path / "elsewhere" / "notes.txt"
    precious.parent.mkdir()
    precious.write_text("precious\n")
    (tmp_path / "qrels.reviewed.txt").symlink_to(precious)  # shipped with the qrels file
    b = app_open(qrels)
    try:
        b.set("q1", "d1", 2, "checked")
        with pytest.raises(InputError, match="link"):
            sync.export_reviewed(b.ws, qrels)
        with pytest.raises(InputError, match="link"):  # the app's dialog names the same path
            sync.export_reviewed(b.ws, qrels, tmp_path / "qrels.reviewed.txt")
    finally:
        b.close()
    assert precious.read_text() == "precious\n"


def test_a_gzip_qrels_file_is_exported_in_its_own_layout(tmp_path):
    import gzip

    text = b"q1 Q0 d3 1\r\nq2 Q0 d9 2\r\nq1 Q0 d1 0\r\n"
    qrels = tmp_path / "qrels.txt.gz"
    qrels.write_bytes(gzip.compress(text))
    b = app_open(qrels)
    try:
        b.set("q1", "d1", 2, "checked")
        _, target, _ = sync.export_reviewed(b.ws, qrels)
    finally:
        b.close()
    assert target.name == "qrels.reviewed.txt"
    assert target.read_bytes() == b"q1 Q0 d3 1\r\nq2 Q0 d9 2\r\nq1 Q0 d1 2\r\n"  # Q0, CRLF, the order kept
