"""Hosts: the edges that drive the engine (browser worker, Panel UI; later CLI and MCP).

Only modules in this package may import ``js``, ``pyodide`` or ``panel``; the engine around
it stays pure Python + NumPy. Hosts reach the palace through :class:`palazzo.hosts.bridge.Bridge`,
that is, through the operations registry.
"""
