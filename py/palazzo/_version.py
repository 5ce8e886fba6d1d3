"""The package version, alone so that any module can read it without importing the package
face (which imports the operations, which import almost everything)."""

__version__ = "0.1.0"
