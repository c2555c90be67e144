import sys

from fastisa.cli import main

sys.exit(main())
