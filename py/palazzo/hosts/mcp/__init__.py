"""The MCP server for AI assistants: a palace over stdio.

- :mod:`~palazzo.hosts.mcp.server`: the JSON-RPC 2.0 server over stdin/stdout (both protocol
  eras, the reader and worker threads, the limits on what is read).
- :mod:`~palazzo.hosts.mcp.prompt`: the ``palace_protocol`` prompt, the server's
  ``instructions``, and the ``prompts/list`` and ``prompts/get`` answers.

``python -m palazzo.hosts.mcp`` (or ``palazzo mcp``) runs the server.
"""
