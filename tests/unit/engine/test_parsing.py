from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from simulator.parsing import StreamSplitter, parse_output


def test_it_splits_reasoning_from_a_tagged_observation():
    out = parse_output(
        "<think>plan it</think>\n<predicted_observation>\n/app\n</predicted_observation>"
    )
    assert (out.reasoning, out.observation, out.complete, out.notes) == (
        "plan it",
        "/app",
        True,
        (),
    )


def test_it_takes_the_last_complete_block():
    out = parse_output(
        "<predicted_observation>a</predicted_observation> <predicted_observation>b</predicted_observation>"
    )
    assert out.observation == "b" and "2 observation blocks: took the last" in out.notes


def test_an_unclosed_block_takes_the_rest():
    out = parse_output("<think>x</think><predicted_observation>partial output")
    assert out.observation == "partial output" and not out.complete
    assert "unclosed <predicted_observation>" in out.notes


def test_a_missing_tag_falls_back_to_text_outside_reasoning():
    out = parse_output("<think>hmm</think>\nplain answer\n")
    assert out.observation == "plain answer" and out.complete
    assert any("no <predicted_observation>" in n for n in out.notes)


def test_an_orphan_close_makes_everything_before_it_reasoning():
    out = parse_output(
        "I think the file exists.</think><predicted_observation>ok</predicted_observation>"
    )
    assert out.reasoning == "I think the file exists." and out.observation == "ok"


def test_nested_think_blocks_stay_reasoning():
    out = parse_output("<think>a<think>b</think>c</think>obs")
    assert out.reasoning == "a<think>b</think>c" and out.observation == "obs"


def test_an_unclosed_think_is_incomplete_and_yields_no_observation():
    out = parse_output("<think>still thinking")
    assert out.observation == "" and not out.complete and out.reasoning == "still thinking"


def test_an_observation_only_inside_reasoning_is_recovered():
    out = parse_output("<think>draft <predicted_observation>x</predicted_observation>")
    assert out.observation == "x"
    assert "observation recovered from inside the reasoning" in out.notes


def test_a_stray_close_after_a_block_is_ignored():
    out = parse_output("<think>a</think>b</think>c")
    assert out.observation == "bc" and "stray </think> ignored" in out.notes


def test_it_strips_the_environment_observation_marker_and_keeps_trailing_prompt_space():
    out = parse_output(
        "<predicted_observation>**Environment Observation:**\nroot@host:/app# </predicted_observation>"
    )
    assert out.observation == "root@host:/app# "


@given(st.text())
def test_parse_output_never_raises(raw):
    out = parse_output(raw)
    assert isinstance(out.observation, str) and isinstance(out.reasoning, str)


tags = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<predicted_observation>",
        "</predicted_observation>",
        "<",
        "x",
        "\n",
        "**Environment Observation:**",
    ]
)


@given(st.lists(tags | st.text(max_size=5), max_size=30))
def test_parse_output_never_raises_on_tag_soup(parts):
    parse_output("".join(parts))


def split_all(chunks, outside="observation"):
    splitter = StreamSplitter(outside)
    reasoning, observation = [], []
    for chunk in chunks:
        r, o = splitter.feed(chunk)
        reasoning.append(r)
        observation.append(o)
    r, o = splitter.finish()
    return "".join(reasoning) + r, "".join(observation) + o


def test_the_streaming_splitter_routes_think_content_and_holds_split_tags():
    raw = "<think>plan</think><predicted_observation>hello <b> world</predicted_observation>"
    chunks = [raw[i : i + 3] for i in range(0, len(raw), 3)]
    assert split_all(chunks) == ("plan", "hello <b> world")


def test_the_streaming_splitter_flushes_a_held_partial_tag_at_the_end():
    assert split_all(["abc<thi"]) == ("", "abc<thi")


def test_told_to_think_first_untagged_text_streams_as_reasoning():
    # A server without a reasoning parser: the chat template opened <think> in the prompt.
    raw = "the agent ran ls</think>\n\n<predicted_observation>a.txt</predicted_observation>\n"
    chunks = [raw[i : i + 4] for i in range(0, len(raw), 4)]
    assert split_all(chunks, "reasoning") == ("the agent ran ls\n\n\n", "a.txt")
    assert split_all(chunks) == ("", "the agent ran ls\n\na.txt\n")


@given(
    st.lists(tags | st.text(max_size=5), max_size=30),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(["reasoning", "observation"]),
)
def test_streaming_split_is_independent_of_chunking(parts, size, outside):
    raw = "".join(parts)
    whole = split_all([raw], outside)
    pieces = split_all([raw[i : i + size] for i in range(0, len(raw), size)], outside)
    assert whole == pieces
