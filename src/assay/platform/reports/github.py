"""GitHub Actions annotations: a document's mistakes as workflow commands, which the runner
turns into annotations on the file and line of a pull request (docs/ci.md).

A command is ``::error file=F,line=L,col=C,title=T::message``. Its message is escaped as the
Actions toolkit escapes data (``%``, carriage return, newline), its properties as it escapes
properties (the same, and ``:`` and ``,``, which end a property): an unescaped newline would end
the command, and a colon in a path would end the property.

>>> print(annotation("error", "a: b\\nc", file="checks/a,b.yaml", line=3, col=5, title="assay"))
::error file=checks/a%2Cb.yaml,line=3,col=5,title=assay::a: b%0Ac
"""

from __future__ import annotations

from typing import Literal

Level = Literal["error", "warning", "notice"]


def escape_data(text: str) -> str:
    """A command's message as the runner reads it back.

    >>> escape_data("100% done\\r\\n")
    '100%25 done%0D%0A'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property's value (a path, a title): data's escapes, and ``:`` and ``,``.

    >>> escape_property("C:/a,b")
    'C%3A/a%2Cb'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: Level,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow command; a property that is None is left out (an annotation without a file
    is shown on the run's summary)."""
    properties = {"file": file, "line": line, "col": col, "title": title}
    given = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{level}{' ' + given if given else ''}::{escape_data(message)}"
