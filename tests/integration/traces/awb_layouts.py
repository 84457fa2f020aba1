"""AgentWorldBench rows in the seven domains' real layouts, and eval.py's request for a row.

Each trajectory is written the way the benchmark writes rows: row t holds the
turn prompts 1..t (the last with the row's instruction appended) and the
observations 1..t (the last is the ground truth). The actions are what real
agents send: keystroke arrays, string tool arguments, unknown tools, search
``queries``, Playwright-MCP calls, free-form desktop Python, and Android actions
in DroidBot, ``<invoke>`` and JSON styles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MARKER = "**Environment Observation:**"
USUAL = (
    "\n\nPlease analyze the input above and predict the realistic output/response that the "
    "environment would produce.\n\nFirst, think step by step. Then, provide the simulated "
    "environment observation wrapped strictly within the "
    "<predicted_observation></predicted_observation> tags."
)
OTHER = "\n\nPredict the environment's next observation inside <predicted_observation> tags."


@dataclass(frozen=True)
class Trajectory:
    task: str
    id: Any
    system: str
    turns: list[tuple[str, str]]  # (turn prompt without instruction, observation)
    instruction: str = USUAL
    only_last: bool = False
    ascii_json: bool = False

    def rows(self) -> list[dict[str, Any]]:
        texts = [text for text, _ in self.turns]
        responses = [f"{MARKER}\n{observation}" for _, observation in self.turns]
        return [
            {
                "task": self.task,
                "id": self.id,
                "prompt": [*texts[: t - 1], texts[t - 1] + self.instruction],
                "response": responses[:t],
                "current_prompt": texts[t - 1],
                "system_str": self.system,
                "turn_idx": t,
                "total_turns": len(self.turns),
            }
            for t in range(1, len(self.turns) + 1)
        ]

    def lines(self) -> list[str]:
        rows = self.rows()[-1:] if self.only_last else self.rows()
        return [json.dumps(row, ensure_ascii=self.ascii_json) for row in rows]


def turn(n: int, action: str, fence: str | None = "json", **sections: str) -> str:
    heads = {"task": "Task Instruction", "state": "Current State", "phone": "Current Phone State"}
    parts = [f"**{heads[key]}:**\n{body}" for key, body in sections.items()]
    fenced = action if fence is None else f"```{fence}\n{action}\n```"
    return f"### Turn {n}\n" + "\n\n".join([*parts, f"**Action:**\n{fenced}"])


def keystrokes(text: str) -> str:
    return json.dumps([{"keystrokes": text, "duration": 0.1}], indent=2)


TREE = "[1] RootWebArea 'Shop', focused, url='http://shop.test/'\n\t[46] button 'Add to cart'"
DESKTOP = "window 'Settings'\n  button 'Privacy' (120, 45)"

TRAJECTORIES = [
    Trajectory(
        "terminal",
        101,
        "You simulate a Linux terminal. (test prompt)",
        [
            (turn(1, keystrokes("pwd\n"), state="root@box:/app#"), "root@box:/app# pwd\n/app"),
            (turn(2, keystrokes("ls -a\n")), "root@box:/app# ls -a\n.  ..  main.py"),
        ],
    ),
    Trajectory(
        "swe",
        "swe-7",
        "You simulate a coding sandbox. (test prompt)",
        [
            (
                turn(1, '{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\"}"}'),
                "README.md\nsrc",
            ),
            (
                turn(2, '{"name": "TodoWrite", "arguments": "{\\"todos\\": []}"}'),
                "Todos have been modified successfully.",
            ),
        ],
        instruction=OTHER,
    ),
    Trajectory(
        "search",
        3,
        "You simulate a web search engine. (test prompt)",
        [
            (
                turn(1, '{"name": "search", "arguments": {"queries": ["otters", "río"]}}'),
                '{"results": [{"title": "Otters", "url": "https://otters.test"}]}',
            ),
        ],
        ascii_json=True,
    ),
    Trajectory(
        "mcp",
        4,
        "You simulate an MCP server. (test prompt)",
        [
            (
                turn(1, '{"name": "get_user_details", "arguments": {"user_id": "mia_li_3668"}}'),
                '{"type":"text","text":"{\\"name\\": \\"Mia Li\\"}"}',
            ),
            (
                turn(2, '{"name": "book_reservation", "arguments": {"flight": "HAT136"}}'),
                '{"type":"text","text":"Error: payment method not found"}',
            ),
        ],
        only_last=True,
    ),
    Trajectory(
        "web",
        5,
        "You simulate a web browser. (test prompt)",
        [
            (turn(1, "click('46')", "python", state=TREE), TREE + "\n\t[50] alert 'Added'"),
            (
                turn(2, 'browser_navigate(url="https://shop.test/cart")', "python"),
                "[1] RootWebArea 'Cart', focused, url='https://shop.test/cart'",
            ),
        ],
    ),
    Trajectory(
        "os",
        6,
        "You simulate a desktop. (test prompt)",
        [
            (
                turn(
                    1,
                    "BrowserTools.open_privacy_settings()",
                    "python",
                    task="Turn off cookies",
                    state=DESKTOP,
                ),
                DESKTOP + "\n  checkbox 'Cookies' checked",
            ),
            (
                turn(
                    2,
                    "import pyautogui\nAgent.click(coordinates=[120, 45])\npyautogui.press('enter')",
                    "python",
                ),
                DESKTOP + "\n  checkbox 'Cookies'",
            ),
        ],
        instruction=OTHER,
    ),
    Trajectory(
        "android",
        7,
        "You simulate an Android phone. (test prompt)",
        [
            (
                turn(
                    1,
                    "touch <button id=3 bound_box=0,100,200,300>OK</button>",
                    None,
                    phone="Home screen, Settings app icon visible",
                ),
                '<hierarchy rotation="0"><node text="Settings" bounds="[0,0][10,10]"/></hierarchy>',
            ),
            (
                turn(
                    2,
                    '<invoke name="phone"><parameter name="action">click</parameter>'
                    '<parameter name="index">46</parameter></invoke>',
                    "xml",
                ),
                '<hierarchy rotation="0"><node text="Wi-Fi" bounds="[0,0][10,10]"/></hierarchy>',
            ),
            (
                turn(3, '{"action_type": "click", "index": 46}'),
                '<hierarchy rotation="0"><node text="Wi-Fi on" bounds="[0,0][10,10]"/></hierarchy>',
            ),
        ],
    ),
]


def file_text() -> str:
    return "".join(line + "\n" for t in TRAJECTORIES for line in t.lines())


def eval_messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """eval.py infer's request for ``row``, written out from its documented algorithm."""
    turn_idx = row["turn_idx"] - 1
    messages = []
    if row.get("system_str"):
        messages.append({"role": "system", "content": row["system_str"]})
    for prompt, response in zip(row["prompt"][:turn_idx], row["response"][:turn_idx], strict=False):
        messages += [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": response},
        ]
    messages.append({"role": "user", "content": row["prompt"][turn_idx]})
    return messages
