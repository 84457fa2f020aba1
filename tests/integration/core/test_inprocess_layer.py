"""The embedded studio's channel layer: Channels' in-memory semantics, at less CPU per send."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import InMemoryChannelLayer

from studio.lib.layers import InProcessChannelLayer


def test_a_group_send_gives_every_member_its_own_copy() -> None:
    async def scenario() -> tuple[dict[str, object], dict[str, object], bool]:
        layer = InProcessChannelLayer()
        await layer.group_add("episode-1", "page.a")
        await layer.group_add("episode-1", "page.b")
        await layer.group_add("episode-2", "page.c")
        await layer.group_send("episode-1", {"type": "step", "text": ["ls"]})
        first, second = await layer.receive("page.a"), await layer.receive("page.b")
        return first, second, "page.c" in layer.channels

    first, second, other_group_got_it = asyncio.run(scenario())

    assert first == second == {"type": "step", "text": ["ls"]}
    assert first["text"] is not second["text"]
    assert other_group_got_it is False


def test_a_full_member_misses_the_message_and_the_others_still_get_it() -> None:
    async def scenario() -> tuple[int, int]:
        layer = InProcessChannelLayer(capacity=1)
        for channel in ("page.full", "page.free"):
            await layer.group_add("episode-1", channel)
        await layer.send("page.full", {"type": "earlier"})
        await layer.group_send("episode-1", {"type": "step"})
        return layer.channels["page.full"].qsize(), layer.channels["page.free"].qsize()

    assert asyncio.run(scenario()) == (1, 1)


def test_expired_entries_are_looked_for_once_a_second_not_on_every_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked = 0
    clean = InMemoryChannelLayer._clean_expired

    def counted(layer: InMemoryChannelLayer) -> None:
        nonlocal looked
        looked += 1
        clean(layer)

    monkeypatch.setattr(InMemoryChannelLayer, "_clean_expired", counted)

    async def scenario() -> None:
        layer = InProcessChannelLayer()
        await layer.group_add("episode-1", "page.a")
        for index in range(50):
            await layer.group_send("episode-1", {"type": "delta", "seq": index})
            await layer.receive("page.a")

    asyncio.run(scenario())

    assert looked == 1


def test_an_expired_message_still_takes_its_channel_out_of_its_groups() -> None:
    async def scenario() -> dict[str, dict[str, float]]:
        layer = InProcessChannelLayer(expiry=-1)  # every message has expired already
        layer.CLEAN_EVERY_S = 0.0
        await layer.group_add("episode-1", "page.gone")
        await layer.group_add("episode-1", "page.live")
        await layer.send("page.gone", {"type": "never read"})
        await layer.group_send("episode-1", {"type": "step"})
        groups: dict[str, dict[str, float]] = layer.groups
        return groups

    groups = asyncio.run(scenario())

    assert list(groups["episode-1"]) == ["page.live"]
