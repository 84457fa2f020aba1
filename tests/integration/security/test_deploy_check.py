"""The production configuration in deploy/ passes Django's deployment checks as shipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"


def example_env() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (DEPLOY / ".env.example").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def test_it_passes_check_deploy_with_the_example_environment(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STUDIO_")}
    env.update(example_env())
    # Only the paths are local; the hosts stay "postgres" and "redis", which do not
    # resolve here: the check must not need to connect to either.
    env.update({"STUDIO_VAR_DIR": str(tmp_path), "STUDIO_STATIC_ROOT": str(tmp_path / "s")})
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_it_fails_check_deploy_with_a_short_secret_key(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STUDIO_")}
    env.update({**example_env(), "STUDIO_SECRET_KEY": "short", "STUDIO_VAR_DIR": str(tmp_path)})
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "security.W009" in result.stderr


def test_it_lists_every_setting_the_studio_reads_in_the_example() -> None:
    read = set(re.findall(r"\b(STUDIO_[A-Z0-9_]+)\b", (ROOT / "studio/settings.py").read_text()))
    example = (DEPLOY / ".env.example").read_text()
    listed = set(re.findall(r"^#?\s*(STUDIO_[A-Z0-9_]+)=", example, re.M))
    assert read - listed == set()


def test_it_ships_a_compose_file_with_every_service() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker", "sglang-0", "sglang-1", "router", "proxy"} <= set(
        services
    )
    assert "replicas" in services["worker"]["deploy"]
    assert "celery" in " ".join(services["worker"]["command"])
    assert "uvicorn" in " ".join(services["web"]["command"])
    for name in ("sglang-0", "sglang-1"):
        args = services[name]["command"]
        for flag in ("--reasoning-parser", "--context-length", "--tp", "--enable-cache-report"):
            assert flag in args
        assert args[args.index("--reasoning-parser") + 1] == "qwen3"
        device = services[name]["deploy"]["resources"]["reservations"]["devices"][0]
        assert device["capabilities"] == ["gpu"]
        assert services[name]["image"].startswith("lmsysorg/sglang")
    gpus = [
        services[n]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]
        for n in ("sglang-0", "sglang-1")
    ]
    assert not set(gpus[0]) & set(gpus[1]), "the replicas must not share GPUs"
    router = services["router"]["command"]
    assert "http://sglang-0:30000" in router and "http://sglang-1:30000" in router
    assert example_env()["STUDIO_MODEL_URL"] == "http://router:30000"


def _render_matcher() -> re.Pattern[str]:
    caddyfile = (DEPLOY / "Caddyfile").read_text()
    match = re.search(r"@render path_regexp (\S+)", caddyfile)
    assert match is not None
    return re.compile(match.group(1))


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("episodes:render-step", [3, 7]),
        ("episodes:render-initial", [3]),
        ("worlds:preview", [5]),
        ("worlds:revision-preview", [5, 2]),
        ("traces:render", [9, "sim"]),
    ],
)
def test_it_lets_the_render_host_answer_render_paths(name: str, args: list[object]) -> None:
    assert _render_matcher().match(reverse(name, args=args))


@pytest.mark.parametrize(
    "path",
    ["/", "/login/", "/episodes/3/", "/ws/episodes/3/", "/admin/", "/api/v1/envs", "/static/x.css",
     "/episodes/3/steps/7/retry", "/worlds/5/save", "/episodes/3/steps/7/render/../../close"],
)  # fmt: skip
def test_it_refuses_everything_else_on_the_render_host(path: str) -> None:
    assert not _render_matcher().match(path)
