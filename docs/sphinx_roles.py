"""A griffe extension: the docstrings' Sphinx roles become cross-references in the site.

ai_chat's docstrings name other objects the Sphinx way (``:class:`~ai_chat.ChatStream```,
``:meth:`aclose```), which Markdown would show as literal text. This extension rewrites
each role, once the package is loaded, into an optional autorefs link around inline code:
a target the site documents becomes a link, any other stays plain code (``optional``
keeps an unknown target from failing ``mkdocs build --strict``; the names in the docs
pages themselves are checked strictly). A reStructuredText ``text::`` that opens a
literal block becomes ``text:``, since Markdown already shows the indented block as code.

Loaded by mkdocs.yml (``extensions`` of the mkdocstrings Python handler); not part of
the library.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import AliasResolutionError, CyclicAliasError, Extension, GriffeLoader, Object

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj):`(?P<target>[^`]+)`")
LITERAL_BLOCK = re.compile(r"(?<=\S)::[ \t]*$", re.M)


class SphinxRoles(Extension):
    """Rewrite ``:role:`target``` into an optional cross-reference, for every object."""

    def on_object(self, *, obj: Object, loader: GriffeLoader, **kwargs: Any) -> None:
        _rewrite(obj, loader)

    def on_package(self, *, pkg: Object, loader: GriffeLoader, **kwargs: Any) -> None:
        # griffe calls on_object for the package's members, not for the package itself.
        _rewrite(pkg, loader)


def _rewrite(obj: Object, loader: GriffeLoader) -> None:
    docstring = obj.docstring
    if docstring is None:
        return
    text = ROLE.sub(lambda match: _reference(obj, loader, match["target"]), docstring.value)
    docstring.value = LITERAL_BLOCK.sub(":", text)


def _reference(obj: Object, loader: GriffeLoader, written: str) -> str:
    """The HTML of one role: ``<autoref optional>`` around the name as the docs show it."""
    target = written.lstrip("~!.")
    title = target.rsplit(".", 1)[-1] if written.startswith("~") else target
    identifier = _resolve(obj, loader, target)
    code = f"<code>{html.escape(title)}</code>"
    return f'<autoref identifier="{html.escape(identifier)}" optional>{code}</autoref>'


def _resolve(obj: Object, loader: GriffeLoader, target: str) -> str:
    """The full path of ``target`` as Sphinx would find it from ``obj``.

    An absolute path is kept; a relative one is looked up in the object (a class's own
    methods), then in each enclosing scope up to the package, as Python's own scoping
    would find the name. A name found nowhere is returned as written: the reference stays
    optional, so it renders as code.
    """
    if target.startswith("ai_chat"):
        return target
    scope: Object | None = obj if obj.is_class or obj.is_module else obj.parent
    while scope is not None:
        path = f"{scope.path}.{target}"
        try:
            loader.modules_collection[path]
        except (KeyError, AliasResolutionError, CyclicAliasError):
            scope = scope.parent
            continue
        return path
    return target
