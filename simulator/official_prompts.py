"""Qwen-AgentWorld's own prompt files, read from a checkout the user points at.

The studio ships its own prompts. To reproduce AgentWorldBench numbers exactly,
a user can point the studio at the ``prompts/`` folder of a Qwen-AgentWorld
checkout (``prompts/<domain>/system_prompt.txt`` and
``prompts/<domain>/judge_system_prompt.txt``); their texts are read at run time
and never copied into this repository. The judge's user-message template is a
string constant (``JUDGE_USER_PROMPT``) in that checkout's
``eval/lwm_eval_utils/task_configs.py``: it is read with :mod:`ast` as a
literal, never imported or executed, so pointing the studio at a folder cannot
run its code. Without that file the studio's own template is used, which has
the same fields and layout.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from simulator.errors import PromptFileError
from simulator.review.judge import STUDIO_JUDGE_USER_TEMPLATE, JudgePrompts

__all__ = ["OfficialPrompts", "PromptFileError"]

#: Where the judge's user-message template lives, relative to the prompts folder.
TASK_CONFIGS = Path("..") / "eval" / "lwm_eval_utils" / "task_configs.py"
TEMPLATE_NAME = "JUDGE_USER_PROMPT"
_DOMAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class OfficialPrompts:
    """The prompt files under ``directory`` (a checkout's ``prompts/`` folder).

    Each text is read once, on first use, exactly as stored (UTF-8, not stripped,
    as eval.py reads it).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise PromptFileError(self.directory, "not a folder")
        self._texts: dict[Path, str] = {}
        self._template: str | None = None

    def system_prompt(self, domain: str) -> str:
        """The world model's system prompt for ``domain``."""
        return self._read(self._domain_file(domain, "system_prompt.txt"))

    def judge_system_prompt(self, domain: str) -> str:
        """The judge's system prompt for ``domain``."""
        return self._read(self._domain_file(domain, "judge_system_prompt.txt"))

    def judge_user_template(self) -> str:
        """The judge's user-message template: the checkout's, else the studio's own.

        The checkout's counts when ``<directory>/../eval/lwm_eval_utils/task_configs.py``
        exists; it must then assign ``JUDGE_USER_PROMPT`` a plain string literal.
        """
        if self._template is None:
            path = self.directory / TASK_CONFIGS
            self._template = (
                _string_constant(path, TEMPLATE_NAME)
                if path.is_file()
                else STUDIO_JUDGE_USER_TEMPLATE
            )
        return self._template

    def judge_prompts(self) -> JudgePrompts:
        """These files as the judge's texts (see :func:`simulator.review.judge.build_judge_messages`)."""
        return JudgePrompts(self.judge_system_prompt, self.judge_user_template())

    def _domain_file(self, domain: str, name: str) -> Path:
        # A domain comes from a data row's "task": keep it to one plain folder name.
        if not _DOMAIN_NAME.fullmatch(domain) or domain in (".", ".."):
            raise PromptFileError(self.directory / domain / name, "not a valid domain name")
        return self.directory / domain / name

    def _read(self, path: Path) -> str:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise PromptFileError(path, "no such file") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise PromptFileError(path, f"unreadable ({exc})") from exc
        return self._texts[path]


def _string_constant(path: Path, name: str) -> str:
    """The string literal a module assigns to ``name`` at top level, read without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise PromptFileError(path, f"unreadable ({exc})") from exc
    found: ast.expr | None = None
    for node in tree.body:  # the last assignment wins, as when the module runs
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            found = value
    if found is None:
        raise PromptFileError(path, f"no {name} assignment")
    if not (isinstance(found, ast.Constant) and isinstance(found.value, str)):
        raise PromptFileError(path, f"{name} is not a plain string literal")
    return found.value
