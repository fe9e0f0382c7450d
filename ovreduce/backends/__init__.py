"""Runtimes behind one interface (:class:`~ovreduce.backends.base.Backend`): the NumPy reference and OpenVINO."""

from __future__ import annotations

from ovreduce.backends.base import Backend, BackendResult, LayerSpec

__all__ = ["Backend", "BackendResult", "LayerSpec"]
