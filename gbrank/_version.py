"""gbrank's one version number (read by the package metadata, ``gbrank.__version__`` and the
benchmark reports)."""

__version__ = "0.1.0"
