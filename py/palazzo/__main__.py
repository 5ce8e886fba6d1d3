import sys

from palazzo.cli import main

sys.exit(main())
