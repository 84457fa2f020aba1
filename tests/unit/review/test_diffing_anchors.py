from __future__ import annotations

from pathlib import Path

from simulator.review.anchors import compare_anchors, extract_anchors
from simulator.review.diffing import diff_observations

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_it_diffs_text_by_line_with_words_inside_changed_lines():
    diff = diff_observations(
        "root@host:/app# pwd\n/app\nroot@host:/app#",
        "root@host:/app# pwd\n/srv\nroot@host:/app#\nextra",
    )
    assert diff.mode == "text"
    ops = [line.op for line in diff.lines]
    assert ops == ["equal", "replace", "equal", "insert"]
    replaced = diff.lines[1]
    assert [s.op for s in replaced.real or ()] == ["equal", "delete"]
    assert (replaced.simulated or ())[-1].text == "srv"
    assert not diff.identical


def test_it_diffs_json_structurally():
    diff = diff_observations(
        '{"ok": true, "items": [1, 2], "name": "a"}',
        '```json\n{"ok": "yes", "items": [1], "extra": 1, "name": "b"}\n```',
    )
    assert diff.mode == "json"
    described = [c.describe() for c in diff.changes]
    assert "$.ok: type bool became str" in described
    assert "$.items[1]: missing from simulated (real 2)" in described
    assert '$.name: "a" → "b"' in described
    assert "$.extra: only in simulated (1)" in described


def test_identical_observations_have_no_difference():
    assert diff_observations("a\nb", "a\nb").identical


def test_it_finds_web_anchors_in_an_accessibility_tree():
    tree = (FIXTURES / "web" / "webarena_shopping_step1.axtree.txt").read_text()
    anchors = extract_anchors("web", tree)
    assert anchors["title"] == "One Stop Market"
    assert anchors["url"].startswith("http://ec2-18-223-217-129")
    other = (FIXTURES / "web" / "webarena_shopping_step2.axtree.txt").read_text()
    diffs = {d.name: d for d in compare_anchors("web", tree, other)}
    assert not diffs["title"].match and not diffs["url"].match


def test_it_reads_accessibility_tree_anchors_with_the_verifiers_grammar():
    # Real step 2 has three `checkbox 'Add to Cart', checked='false'`: not checked.
    real = extract_anchors(
        "web", (FIXTURES / "web" / "webarena_shopping_step2.axtree.txt").read_text()
    )
    assert "Add to Cart=" in real["form_values"]
    assert "\ue615 Search=" in real["form_values"]  # the repr escape is decoded
    tree = (
        "RootWebArea \"Emma's Shop\", focused, url='http://shop.example/'\n"
        "\t[a12] textbox 'Email' value='me@shop.example', focused\n"
        "\t[a13] checkbox 'Remember me', checked='true'\n"
        "\t[a14] dialog 'Cookies', modal=True\n"
    )
    anchors = extract_anchors("web", tree)
    assert (anchors["title"], anchors["url"]) == ("Emma's Shop", "http://shop.example/")
    assert anchors["form_values"] == ["Email=me@shop.example", "Remember me= checked"]
    assert anchors["focused"] == ["textbox 'Email'"]
    assert anchors["dialog"] == ["dialog 'Cookies'"]


def test_it_finds_android_texts_and_terminal_cwd():
    xml = (FIXTURES / "android" / "uiautomator_youtube_home.xml").read_text()
    anchors = extract_anchors("android", xml)
    assert anchors["visible_texts"]
    assert anchors["screen"]
    term = extract_anchors(
        "terminal",
        "root@host:/app# cd tests\nroot@host:/app/tests# ls\nx.py\nroot@host:/app/tests#",
    )
    assert term["cwd"] == "/app/tests" and term["output_lines"] == ["x.py"]
    diffs = {
        d.name: d for d in compare_anchors("terminal", "root@host:/a# ls\nb", "root@host:/a# ls\nc")
    }
    assert diffs["cwd"].match and not diffs["output_lines"].match
    assert diffs["output_lines"].missing == ("b",) and diffs["output_lines"].extra == ("c",)


def test_it_compares_json_result_anchors():
    diffs = {d.name: d for d in compare_anchors("mcp", '{"results": [1, 2]}', '{"error": "boom"}')}
    assert not diffs["keys"].match and diffs["error"].simulated is True
