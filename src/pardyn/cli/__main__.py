import sys

from pardyn.cli import console_main

sys.exit(console_main())
