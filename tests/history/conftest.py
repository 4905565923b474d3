import pytest


def pytest_configure(config: pytest.Config) -> None:
    # The suite-wide marker (DECISIONS.md: over ~2 s); registered here too so that
    # these tests stand on their own. Registering a marker twice is harmless.
    config.addinivalue_line("markers", "slow: takes over ~2 s (deselect with -m 'not slow')")
