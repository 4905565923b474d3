"""The ``ai-chat`` command line: stream a chat answer to the terminal, or serve a chat page.

``ai-chat send TEXT`` prints one answer as it streams (:mod:`.send`, printed by
:mod:`.printer`); ``ai-chat serve`` serves the UI message stream endpoint
(``POST /api/chat``) and the chat page (``GET /``), keeping the conversations in a store
(:mod:`.serve`). Both take the same provider options (:mod:`.provider`). ``ai-chat
export`` and ``ai-chat import`` move a conversation between a store and a file
(:mod:`.transfer`). :mod:`.command` parses the command line and turns every failure into
a one-line message.
"""

from .command import main

__all__ = ["main"]
