from __future__ import annotations

import json

from simulator.render import render_android_elements
from tests.unit.render.parsed import parse, style_of

# AndroidWorld's two shapes: M3A's dict-like description and the UIElement dataclass repr.
ELEMENT_LIST = (
    'UI element 0: {"index": 0, "text": "Settings", "content_description": "Open settings", '
    '"is_clickable": True, "is_checked": False}\n'
    "UI element 1: UIElement(text='Wi-Fi', content_description=None, "
    "class_name='android.widget.Switch', bbox=None, bbox_pixels=BoundingBox(x_min=0, x_max=540, "
    "y_min=200, y_max=300), hint_text=None, is_checked=True, is_clickable=True)\n"
    "UI element 2: UIElement(text=None, content_description='Back', "
    "bbox_pixels=BoundingBox(x_min=0, x_max=1080, y_min=2300, y_max=2400), is_focused=False)\n"
    "UI element 3: UIElement(text='Broken', bbox_pixels=BoundingBox(x_min=9, x_max=1))\n"
)


def test_it_numbers_every_element_and_places_those_with_a_box():
    parsed = parse(render_android_elements(ELEMENT_LIST))

    boxes = parsed.find("div", "box")
    listed = parsed.find("li", "item")
    assert len(boxes) + len(listed) == 4
    assert [box.text for box in boxes] == ["#1 SwitchWi-Fi", "#2Back"]
    assert {"checked", "clickable"} <= boxes[0].classes
    assert style_of(boxes[0]) == {
        "left": "0px",
        "top": "66.7px",
        "width": "180px",
        "height": "33.3px",
    }
    assert [item.text for item in listed] == ["#0SettingsOpen settings", "#3Broken"]
    assert "clickable" not in listed[0].classes  # list items carry no state classes


def test_it_reads_json_element_arrays_with_any_bounds_shape():
    elements = [
        {"text": "A", "bounds": "[0,0][100,100]", "clickable": True},
        {
            "index": 7,
            "content_description": "B",
            "bbox": {"left": 0, "top": 100, "right": 50, "bottom": 150},
        },
        {"text": "C", "bbox_pixels": [0, 150, 200, 200], "class": "android.widget.TextView"},
        {"text": "D", "bbox": {"x_min": "0", "y_min": 0, "x_max": 1, "y_max": 1}},
        {"text": "E", "bbox": [0, 0, True, 1], "is_selected": True},
        {"text": 5, "bbox": 3},
        "not an element",
    ]
    parsed = parse(render_android_elements(json.dumps(elements)))

    assert [box.text for box in parsed.find("div", "box")] == ["#0A", "#7B", "#2 TextViewC"]
    assert [item.text for item in parsed.find("li", "item")] == ["#3D", "#4E", "#5"]
    assert "clickable" in parsed.find("div", "box")[0].classes


def test_it_shows_text_when_there_are_no_elements():
    for text in ("nothing here", "[not json", "[]"):
        parsed = parse(render_android_elements(text))
        assert parsed.find("pre")[0].text == text
