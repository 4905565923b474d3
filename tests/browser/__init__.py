"""The chat page in a real headless Chromium (Debian's), driven by playwright-core."""
