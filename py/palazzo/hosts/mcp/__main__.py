"""``python -m palazzo.hosts.mcp [--palace DIR] [--embedder NAME]``: serve a palace over stdio,
as ``palazzo mcp`` and ``python -m palazzo.hosts.mcp.server`` do."""

import sys

from palazzo.hosts.mcp.server import command

if __name__ == "__main__":
    sys.exit(command())
