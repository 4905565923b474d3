import pytest
import trio  # noqa: F401  # pyright: ignore[reportUnusedImport] -- fail loudly without trio


@pytest.fixture(params=["asyncio", "trio"], scope="session")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
