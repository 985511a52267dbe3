import sys

from pardyn.cli import main

sys.exit(main())
