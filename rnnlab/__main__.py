import sys

from rnnlab.cli import main

sys.exit(main())
