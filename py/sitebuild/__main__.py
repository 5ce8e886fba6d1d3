import sys

from sitebuild.cli import main

sys.exit(main(sys.argv[1:]))
