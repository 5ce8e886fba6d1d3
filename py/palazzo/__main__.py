import sys

from palazzo.hosts.cli import main

sys.exit(main())
