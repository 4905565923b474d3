"""Every way to stop early aborts the adapter: a timeout, break, and abort() from a task.

Run: uv run python examples/stop_early.py
"""

import anyio

from ai_chat import StreamClosedError, create_chat_stream
from ai_chat.adapters import ScriptedAdapter

REQUEST = {
    "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Tell me a long story"}]}
    ]
}


async def main() -> None:
    # 1. A timeout around the whole answer.
    stream = create_chat_stream(ScriptedAdapter(delay=0.05), REQUEST)
    with anyio.move_on_after(0.2):
        async for event in stream:
            print("timeout demo:", event["type"])
    print("signal:", stream.signal)
    await stream.aclose()

    # 2. break inside async with.
    async with create_chat_stream(ScriptedAdapter(delay=0.05), REQUEST) as stream:
        async for event in stream:
            if event["type"] == "text-start":
                break
    print("after break, adapter running:", stream.adapter_running)

    # 3. A stop button in another task.
    async with (
        create_chat_stream(ScriptedAdapter(delay=0.05), REQUEST) as stream,
        anyio.create_task_group() as tg,
    ):

        async def stop_button() -> None:
            await anyio.sleep(0.15)
            stream.abort("the user pressed stop")

        tg.start_soon(stop_button)
        try:
            async for event in stream:
                print("stop demo:", event["type"])
        except StreamClosedError as exc:
            print("stopped:", exc.reason)


if __name__ == "__main__":
    anyio.run(main)
