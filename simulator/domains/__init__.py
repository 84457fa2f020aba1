"""The domain registry: the seven built-in domains, plus any custom ones registered.

Everything else (the engine, the renderers, the studio's pages) looks a domain up
here by name, so a domain registered from its own module is served everywhere.
"""

from __future__ import annotations

from simulator.domains.android import AndroidDomain
from simulator.domains.base import Action, Domain, ReadAction
from simulator.domains.mcp import McpDomain
from simulator.domains.os import OsDomain
from simulator.domains.search import SearchDomain
from simulator.domains.swe import SweDomain
from simulator.domains.terminal import TerminalDomain
from simulator.domains.web import WebDomain

_REGISTRY: dict[str, Domain] = {}


def register(domain: Domain) -> None:
    """Add (or replace) a domain under ``domain.name``."""
    _REGISTRY[domain.name] = domain


def unregister(name: str) -> None:
    """Remove the domain called ``name`` (a custom domain's tests register and remove it)."""
    _REGISTRY.pop(name, None)


def get_domain(name: str) -> Domain:
    """The domain called ``name``; raises KeyError for an unknown name."""
    return _REGISTRY[name]


def domain_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def is_gui(name: str) -> bool:
    """Whether ``name``'s observations are screens shown rendered (False for an unknown name)."""
    domain = _REGISTRY.get(name)
    return domain is not None and domain.gui


for _domain in (
    McpDomain(),
    SearchDomain(),
    TerminalDomain(),
    SweDomain(),
    WebDomain(),
    OsDomain(),
    AndroidDomain(),
):
    register(_domain)

__all__ = [
    "Action",
    "Domain",
    "ReadAction",
    "domain_names",
    "get_domain",
    "is_gui",
    "register",
    "unregister",
]
