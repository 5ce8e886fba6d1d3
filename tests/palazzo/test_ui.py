import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace  # noqa: E402
from palazzo.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402


def _html(layout) -> str:
    return "\n".join(str(obj.object) for obj in layout.select(pn.pane.HTML))


def test_app_shows_the_palace_status():
    text = _html(build_app(Bridge(Palace(name="atrium"))))
    assert "atrium" in text
    assert "No wings yet" in text


def test_palace_names_are_escaped_not_rendered_as_markup():
    text = _html(build_app(Bridge(Palace(name='<img src=x onerror="alert(1)">'))))
    assert "<img" not in text
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in text
