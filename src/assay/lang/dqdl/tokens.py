"""The DQDL lexer: text in, a list of positioned tokens out.

Follows the public ANTLR lexer of awslabs/dqdl (``CommonLexerRules.g4``) with two documented
leniencies: CRLF line endings are accepted, and a final ``#`` comment needs no newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, auto

from assay.lang.dqdl.errors import DQDLSyntaxError


class T(Enum):
    """Token types."""

    LBRACKET = auto()
    RBRACKET = auto()
    LBRACE = auto()
    RBRACE = auto()
    LPAREN = auto()
    RPAREN = auto()
    COMMA = auto()
    COLON = auto()
    EQ = auto()
    BANG = auto()
    GT = auto()
    GE = auto()
    LT = auto()
    LE = auto()
    PLUS = auto()
    MINUS = auto()
    STAR = auto()
    SLASH = auto()
    STRING = auto()  # "..." (raw text between the quotes, escapes kept)
    DATE = auto()  # "YYYY-MM-DD"
    TIME = auto()  # "9:30 AM" / "21:45"
    NUMBER = auto()  # 12 or 12.5 (the sign is a separate MINUS token)
    IDENT = auto()  # [A-Za-z0-9_.]+ that is not a keyword
    KEYWORD = auto()  # a reserved word, in its canonical spelling
    NOW = auto()  # now()
    VARIABLE = auto()  # $name
    EOF = auto()


# Reserved words, as spelled in the grammar. Where two spellings are allowed, both map to one
# canonical word. Everything else that looks like an identifier is an IDENT.
KEYWORDS: dict[str, str] = {
    "Rules": "Rules",
    "Analyzers": "Analyzers",
    "Metadata": "Metadata",
    "DataSources": "DataSources",
    "DefaultLabels": "DefaultLabels",
    "between": "between",
    "in": "in",
    "not": "not",
    "matches": "matches",
    "with": "with",
    "where": "where",
    "labels": "labels",
    "and": "and",
    "AND": "and",
    "or": "or",
    "OR": "or",
    "of": "of",
    "OF": "of",
    "null": "NULL",
    "NULL": "NULL",
    "empty": "EMPTY",
    "EMPTY": "EMPTY",
    "whitespaces_only": "WHITESPACES_ONLY",
    "WHITESPACES_ONLY": "WHITESPACES_ONLY",
    "days": "days",
    "hours": "hours",
    "minutes": "minutes",
    "B": "B",
    "KB": "KB",
    "MB": "MB",
    "GB": "GB",
    "TB": "TB",
}

_PUNCT: dict[str, T] = {
    "[": T.LBRACKET,
    "]": T.RBRACKET,
    "{": T.LBRACE,
    "}": T.RBRACE,
    "(": T.LPAREN,
    ")": T.RPAREN,
    ",": T.COMMA,
    ":": T.COLON,
    "=": T.EQ,
    "!": T.BANG,
    "+": T.PLUS,
    "-": T.MINUS,
    "*": T.STAR,
    "/": T.SLASH,
}

_WORD = re.compile(r"[A-Za-z0-9_.]+")
_INT = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+\.[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME_12 = re.compile(r"([0-9]{1,2}):([0-9]{2}) (AM|PM)")
_TIME_24 = re.compile(r"([0-9]{2}):([0-9]{2})")


@dataclass(frozen=True)
class Token:
    """One token. ``text`` is the token's value: for strings, the raw text between the quotes."""

    type: T
    text: str
    line: int
    column: int
    start: int  # offsets of the token in the normalised source
    end: int

    def is_keyword(self, *words: str) -> bool:
        return self.type is T.KEYWORD and self.text in words

    def describe(self) -> str:
        if self.type is T.EOF:
            return "end of input"
        if self.type in (T.STRING, T.DATE, T.TIME):
            return f'"{self.text}"'
        if self.type is T.VARIABLE:
            return f"${self.text}"
        return f"'{self.text}'"


def normalise(text: str) -> str:
    """Line endings as LF: the reference lexer rejects CR, we accept Windows files (DQDL.md §1)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class Lexer:
    """Turn DQDL text into tokens.

    >>> [t.type.name for t in Lexer('Rules = [ RowCount > 0 ]').tokens()]
    ['KEYWORD', 'EQ', 'LBRACKET', 'IDENT', 'GT', 'NUMBER', 'RBRACKET', 'EOF']
    """

    def __init__(self, text: str) -> None:
        self.source = normalise(text)
        self._pos = 0
        self._line = 1
        self._line_start = 0

    def error(self, message: str, offset: int) -> DQDLSyntaxError:
        line = self.source.count("\n", 0, offset) + 1
        column = offset - (self.source.rfind("\n", 0, offset) + 1) + 1
        return DQDLSyntaxError(message, line, column, source=self.source)

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        src = self.source
        n = len(src)
        while True:
            self._skip_blank()
            if self._pos >= n:
                out.append(self._token(T.EOF, "", self._pos, self._pos))
                return out
            ch = src[self._pos]
            start = self._pos
            if ch == '"':
                out.append(self._quoted())
            elif ch == "$":
                match = _WORD.match(src, start + 1)
                if not match:
                    raise self.error("'$' must be followed by a constant name", start)
                self._pos = match.end()
                out.append(self._token(T.VARIABLE, match.group(), start, self._pos))
            elif ch in "><":
                if src.startswith("=", start + 1):
                    self._pos += 2
                    out.append(self._token(T.GE if ch == ">" else T.LE, ch + "=", start, self._pos))
                else:
                    self._pos += 1
                    out.append(self._token(T.GT if ch == ">" else T.LT, ch, start, self._pos))
            elif src.startswith("now()", start) and not _is_word_char(src, start - 1):
                self._pos += 5
                out.append(self._token(T.NOW, "now()", start, self._pos))
            elif ch in _PUNCT:
                self._pos += 1
                out.append(self._token(_PUNCT[ch], ch, start, self._pos))
            elif _WORD.match(src, start):
                out.append(self._word())
            elif ch == "'":
                raise self.error(
                    "DQDL strings use double quotes; single quotes do not delimit strings", start
                )
            else:
                raise self.error(f"unexpected character {ch!r}", start)

    def _token(self, type_: T, text: str, start: int, end: int) -> Token:
        line = self.source.count("\n", 0, start) + 1
        column = start - (self.source.rfind("\n", 0, start) + 1) + 1
        return Token(type_, text, line, column, start, end)

    def _skip_blank(self) -> None:
        src = self.source
        n = len(src)
        while self._pos < n:
            ch = src[self._pos]
            if ch in " \t\n":
                self._pos += 1
            elif ch == "#":
                newline = src.find("\n", self._pos)
                self._pos = n if newline < 0 else newline + 1
            else:
                return

    def _quoted(self) -> Token:
        src = self.source
        start = self._pos
        i = start + 1
        n = len(src)
        while i < n:
            ch = src[i]
            if ch == "\\" and i + 1 < n and src[i + 1] in '"\\':
                i += 2
                continue
            if ch == '"':
                break
            i += 1
        else:
            raise self.error("string is never closed: a closing '\"' is missing", start)
        raw = src[start + 1 : i]
        self._pos = i + 1
        if _DATE.fullmatch(raw):
            return self._token(T.DATE, raw, start, self._pos)
        if _TIME_12.fullmatch(raw) or _TIME_24.fullmatch(raw):
            return self._token(T.TIME, raw, start, self._pos)
        return self._token(T.STRING, raw, start, self._pos)

    def _word(self) -> Token:
        start = self._pos
        match = _WORD.match(self.source, start)
        assert match is not None
        word = match.group()
        self._pos = match.end()
        if _INT.fullmatch(word) or _DECIMAL.fullmatch(word):
            return self._token(T.NUMBER, word, start, self._pos)
        if word in KEYWORDS:
            return self._token(T.KEYWORD, KEYWORDS[word], start, self._pos)
        return self._token(T.IDENT, word, start, self._pos)


def _is_word_char(src: str, index: int) -> bool:
    return index >= 0 and (src[index].isalnum() or src[index] in "_.")


def unescape(raw: str) -> str:
    r"""Remove DQDL's two escapes, ``\"`` and ``\\`` (used for ``in`` lists and constant arrays).

    >>> unescape(r'a\"b\\c')
    'a"b\\c'
    """
    return re.sub(r'\\(["\\])', r"\1", raw)


def time_parts(text: str) -> tuple[int, int] | None:
    """Hour (0-23) and minute of a TIME token, or None when the clock reading is impossible.

    >>> time_parts("9:30 PM"), time_parts("25:00")
    ((21, 30), None)
    """
    match = _TIME_12.fullmatch(text)
    if match:
        hour, minute, half = int(match.group(1)), int(match.group(2)), match.group(3)
        if not 1 <= hour <= 12 or minute > 59:
            return None
        return (hour % 12 + (12 if half == "PM" else 0), minute)
    match = _TIME_24.fullmatch(text)
    if match:
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            return None
        return (hour, minute)
    return None
