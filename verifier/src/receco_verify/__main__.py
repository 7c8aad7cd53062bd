import sys

from receco_verify.cli import main

sys.exit(main())
