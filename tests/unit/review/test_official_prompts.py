from __future__ import annotations

import pytest

from simulator.errors import SimulatorError
from simulator.official_prompts import OfficialPrompts, PromptFileError
from simulator.review.judge import STUDIO_JUDGE_USER_TEMPLATE, build_judge_messages

TEMPLATE = (
    "{context}\n\n{world_model_input}\n\n{predicted_observation}\n\n{ground_truth}\n\nRate it."
)


def checkout(tmp_path, task_configs=None):
    """A folder shaped like a Qwen-AgentWorld checkout, with texts of our own."""
    prompts = tmp_path / "prompts"
    (prompts / "terminal").mkdir(parents=True)
    (prompts / "terminal" / "system_prompt.txt").write_text("Be a shell.\n")
    (prompts / "terminal" / "judge_system_prompt.txt").write_text("Judge the shell.\n")
    if task_configs is not None:
        utils = tmp_path / "eval" / "lwm_eval_utils"
        utils.mkdir(parents=True)
        (utils / "task_configs.py").write_text(task_configs)
    return prompts


def test_it_reads_each_domain_file_as_stored(tmp_path):
    official = OfficialPrompts(checkout(tmp_path))
    assert official.system_prompt("terminal") == "Be a shell.\n"
    assert official.judge_system_prompt("terminal") == "Judge the shell.\n"


def test_a_missing_domain_file_is_a_clear_simulator_error(tmp_path):
    official = OfficialPrompts(checkout(tmp_path))
    with pytest.raises(PromptFileError, match=r"mcp/judge_system_prompt.txt: no such file"):
        official.judge_system_prompt("mcp")
    assert issubclass(PromptFileError, SimulatorError)
    with pytest.raises(PromptFileError, match="not a valid domain name"):
        official.system_prompt("..")
    with pytest.raises(PromptFileError, match="not a folder"):
        OfficialPrompts(tmp_path / "nowhere")


def test_it_reads_the_template_constant_without_running_the_module(tmp_path):
    marker = tmp_path / "ran"
    source = (
        f"open({str(marker)!r}, 'w').close()\n"
        "JUDGE_USER_PROMPT = 'old'\n"
        f"JUDGE_USER_PROMPT = {TEMPLATE!r}\n"
        "raise SystemExit('never imported')\n"
    )
    official = OfficialPrompts(checkout(tmp_path, source))
    assert official.judge_user_template() == TEMPLATE  # the last assignment, as Python's
    assert not marker.exists()
    row = {"task": "terminal", "prompt": ["p"], "response": ["r"], "turn_idx": 1}
    system, user = build_judge_messages(row, "o", official.judge_prompts())
    assert system["content"] == "Judge the shell.\n"
    assert user["content"] == (
        "# Current Turn:\n\np\n\n**World Model Output (Simulated):**\n```\no\n```\n\n"
        "**Ground Truth (Real Output):**\n```\nr\n```\n\nRate it."
    )


def test_without_the_eval_folder_the_studio_template_is_used(tmp_path):
    assert OfficialPrompts(checkout(tmp_path)).judge_user_template() == STUDIO_JUDGE_USER_TEMPLATE


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("OTHER = 'x'\n", "no JUDGE_USER_PROMPT assignment"),
        ("JUDGE_USER_PROMPT = 'a' + 'b'\n", "not a plain string literal"),
        ("JUDGE_USER_PROMPT = (\n", "unreadable"),
    ],
)
def test_an_unusable_template_file_is_an_error(tmp_path, source, reason):
    with pytest.raises(PromptFileError, match=reason):
        OfficialPrompts(checkout(tmp_path, source)).judge_user_template()
