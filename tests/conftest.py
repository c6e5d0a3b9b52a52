"""Shared test settings.

Every async test runs on asyncio (pytest-asyncio, auto mode). Hypothesis has no deadline
(timings on the CI machines are noisy); under CI it is derandomized, so a run is repeatable.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
