"""Real-harness tests: import the helpers beside this file and the repo's provider mocks."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
