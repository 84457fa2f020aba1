"""Parsing untrusted XML: declarations refused up front, so no entity tricks (XXE, expansion)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

DECLARATIONS = re.compile(r"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
REFUSED_NOTE = "XML with a DOCTYPE or entity declarations is shown as text, never parsed"


def parse_xml(text: str) -> ET.Element:
    """The document's root; ValueError when it has declarations or is not well-formed."""
    if DECLARATIONS.search(text):
        raise ValueError(REFUSED_NOTE)
    try:
        return ET.fromstring(text.strip())
    except ET.ParseError as error:
        raise ValueError(f"XML does not parse: {error}") from None
