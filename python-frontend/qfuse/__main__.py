"""python3 -m qfuse ..."""
import sys

from .cli import main

sys.exit(main())
