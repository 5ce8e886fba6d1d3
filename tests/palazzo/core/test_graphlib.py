"""NetworkX, imported on first use: a missing package is a one-line PackageMissing."""

import builtins

import pytest

from palazzo.core.graphlib import networkx
from palazzo.errors import PackageMissing


def test_returns_the_module():
    nx = networkx("a test")
    assert nx.Graph().number_of_nodes() == 0


def test_a_missing_package_is_a_clear_error(monkeypatch):
    real = builtins.__import__

    def no_networkx(name, *args, **kwargs):
        if name == "networkx":
            raise ModuleNotFoundError("No module named 'networkx'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_networkx)
    with pytest.raises(PackageMissing) as err:
        networkx("the atlas")
    assert err.value.code == "package_missing" and err.value.package == "networkx"
    assert str(err.value).startswith("the atlas needs the networkx package")
    assert "\n" not in str(err.value)
