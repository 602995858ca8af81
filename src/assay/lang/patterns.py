"""Java regular expressions, as DQDL rules write them, translated for the engines that run them.

Glue runs DQDL on Spark, so a rule's pattern (``matches "..."``, ``ColumnNamesMatchPattern``,
``uriRegex``, ``RLIKE`` in SQL) is Java regex syntax. assay runs row patterns in DuckDB, whose
``regexp_matches`` is RE2, and name and path patterns in Python's ``re``. Much of Java's syntax
means the same in all three; what does not is either rewritten (:data:`PROPERTY_CLASSES`,
:data:`ESCAPES`) or refused (:data:`REFUSED`) with a message naming the construct. Nothing is
approximated: a pattern that is accepted matches what it matches on Glue.

>>> to_re2(r"\\p{Alpha}+-\\p{Digit}{2}")
'[a-zA-Z]+-[0-9]{2}'
>>> to_re2(r"(?<year>\\d{4})-\\p{Lu}")
'(?P<year>\\\\d{4})-\\\\p{Lu}'
>>> to_re2(r"(?=a)b")
Traceback (most recent call last):
...
assay.lang.patterns.PatternRefused: Unsupported regex pattern '(?=a)b': it uses a lookahead '(?=', which...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from assay.errors import ConfigError

Flavour = Literal["re2", "python"]


class PatternRefused(ConfigError):
    """A Java regex that assay cannot run with the same meaning; ``reason`` names the construct."""

    def __init__(self, pattern: str, reason: str, *, invalid: bool = False) -> None:
        self.pattern = pattern
        self.reason = reason
        kind = "Invalid" if invalid else "Unsupported"
        super().__init__(f"{kind} regex pattern '{pattern}': {reason}")


# --- translations ---------------------------------------------------------------------------

# \p{Name}: Java's POSIX classes are US-ASCII only (java.util.regex.Pattern, "POSIX character
# classes (US-ASCII only)"), so each is an explicit ASCII set that RE2 and Python read alike.
# The value is the body of a character class, so it also works inside [...].
PROPERTY_CLASSES: Final[Mapping[str, str]] = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
}
# Unicode general categories: RE2 has them under the same names; Java also spells them IsLu,
# gc=Lu and general_category=Lu. Python's re has none of them.
UNICODE_CATEGORIES: Final = frozenset(
    {"L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No"}
    | {"P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So"}
    | {"Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cs"}
)
_CATEGORY_PREFIXES: Final = ("Is", "gc=", "general_category=")
# Unicode scripts, which Java spells IsLatin, sc=Latin or script=Latin and RE2 \p{Latin}.
SCRIPTS: Final = frozenset(
    {"Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Devanagari", "Bengali", "Thai"}
    | {"Georgian", "Hangul", "Hiragana", "Katakana", "Han", "Ethiopic", "Tamil", "Common"}
)
_SCRIPT_PREFIXES: Final = ("Is", "sc=", "script=")

# Escapes that differ: Java spelling -> (RE2, Python). \e is ESC in Java and in neither engine.
ESCAPES: Final[Mapping[str, tuple[str, str]]] = {
    "e": ("\\x1B", "\\x1B"),
}
# Escapes that mean the same everywhere (classes, anchors, control characters).
_SAME_ESCAPES: Final = frozenset("dDsSwWbBAtnrfa")


@dataclass(frozen=True)
class Refusal:
    """A Java construct with no equivalent: ``start`` matches where it begins in the pattern."""

    start: re.Pattern[str]
    construct: str
    hint: str = ""
    python: bool = False  # Python's re runs it as Java does (uriRegex may use a lookahead)


# Java constructs RE2 (and so DuckDB) cannot run; checked in order at every position outside
# a character class. Python's re runs those marked `python` (Python 3.11 has atomic groups and
# possessive quantifiers), so name and path patterns may use them, as Glue's uriRegex examples do.
REFUSED: Final[tuple[Refusal, ...]] = (
    Refusal(re.compile(r"\(\?="), "a lookahead '(?='", python=True),
    Refusal(re.compile(r"\(\?!"), "a negative lookahead '(?!'", python=True),
    Refusal(re.compile(r"\(\?<="), "a lookbehind '(?<='", python=True),
    Refusal(re.compile(r"\(\?<!"), "a negative lookbehind '(?<!'", python=True),
    Refusal(re.compile(r"\(\?>"), "an atomic group '(?>'", python=True),
    Refusal(re.compile(r"\\[1-9]"), "a backreference '\\N'", python=True),
    Refusal(re.compile(r"\\k<"), "a named backreference '\\k<name>'", python=True),
    Refusal(re.compile(r"\\G"), "the end-of-previous-match anchor '\\G'"),
    Refusal(re.compile(r"\\Z"), "the anchor '\\Z'", "; write $ or \\z"),
    Refusal(re.compile(r"\\[RXhHvV]"), "a Java-only escape"),
    Refusal(re.compile(r"\\c"), "a control-character escape '\\cX'", "; write \\xhh"),
    Refusal(re.compile(r"\\0"), "an octal escape '\\0'", "; write \\xhh"),
)
_POSSESSIVE: Final = Refusal(re.compile(r"\+"), "a possessive quantifier (such as '*+' or '++')", python=True)
_FLAGS: Final = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_NAMED_GROUP: Final = re.compile(r"\(\?<([a-zA-Z][a-zA-Z0-9]*)>")
_REPEAT: Final = re.compile(r"\{\d+(?:,\d*)?\}")
_PROPERTY: Final = re.compile(r"\\([pP])(?:\{([^}]*)\}|([A-Za-z]))")
# Inline flags both engines read with Java's meaning. Java's `U` (Unicode classes) is RE2's
# "ungreedy", and `x` (comments), `d` (Unix lines) and `u` (Unicode case) have no RE2 form.
_SAME_FLAGS: Final = frozenset("ims")


def to_re2(pattern: str) -> str:
    """``pattern`` (Java syntax) as an RE2 pattern with the same meaning, for DuckDB.

    >>> to_re2(r"[\\p{Punct}\\s]+"), to_re2(r"\\Qa.b\\E\\u00e9")
    ('[!-/:-@\\\\[-`{-~\\\\s]+', 'a\\\\.b\\\\x{00e9}')
    """
    return _Translation(pattern, "re2").run()


def to_python(pattern: str) -> re.Pattern[str]:
    """``pattern`` (Java syntax) compiled for Python's ``re``, for names and paths.

    >>> bool(to_python(r"\\p{Upper}\\w*").fullmatch("Amount"))
    True
    """
    translated = _Translation(pattern, "python").run()
    try:
        return re.compile(translated)
    except re.error as error:
        raise PatternRefused(pattern, f"{error}", invalid=True) from None


def _unprefixed(name: str, known: frozenset[str], prefixes: tuple[str, ...]) -> str | None:
    """``name`` (``Lu``, ``IsLu``, ``gc=Lu``) as the bare name RE2 knows, or None."""
    if name in known:
        return name
    for prefix in prefixes:
        if name.startswith(prefix) and name[len(prefix) :] in known:
            return name[len(prefix) :]
    return None


class _Translation:
    def __init__(self, pattern: str, flavour: Flavour) -> None:
        self.pattern = pattern
        self.flavour = flavour
        self.out: list[str] = []
        self.i = 0
        self.in_class = False
        self.class_start = 0

    def refuse(self, construct: str, hint: str = "") -> PatternRefused:
        engine = "the engine's regular expressions (RE2)" if self.flavour == "re2" else "Python's re"
        return PatternRefused(self.pattern, f"it uses {construct}, which {engine} cannot run{hint}")

    def run(self) -> str:
        p = self.pattern
        while self.i < len(p):
            if p[self.i] == "\\":
                self.escape()
            elif self.in_class:
                self.class_char()
            else:
                self.plain()
        if self.in_class:
            raise PatternRefused(p, "a '[' is never closed", invalid=True)
        translated = "".join(self.out)
        if self.flavour == "re2":
            self.check_syntax(translated)
        return translated

    def runs(self, refusal: Refusal) -> bool:
        return refusal.python and self.flavour == "python"

    def check_refused(self, i: int) -> None:
        for refusal in REFUSED:
            if refusal.start.match(self.pattern, i) and not self.runs(refusal):
                raise self.refuse(refusal.construct, refusal.hint)

    def plain(self) -> None:
        p, i = self.pattern, self.i
        self.check_refused(i)
        char = p[i]
        if char == "[":
            self.in_class, self.class_start = True, i
            self.out.append("[")
            self.i += 1
            if p.startswith("^", self.i):
                self.out.append("^")
                self.i += 1
            return
        if char == "(":
            self.group()
            return
        if char in "*+?":
            self.out.append(char)
            self.i += 1
            self.quantifier_suffix()
            return
        if char == "{":
            repeat = _REPEAT.match(p, i)
            if repeat:
                self.out.append(repeat.group())
                self.i = repeat.end()
                self.quantifier_suffix()
                return
            # Java refuses a '{' that starts no repetition (RE2 would read it as a literal).
            raise PatternRefused(p, "a '{' starts no repetition; write \\{", invalid=True)
        self.out.append(char)
        self.i += 1

    def quantifier_suffix(self) -> None:
        if self.pattern.startswith("?", self.i):  # lazy: the same in every engine
            self.out.append("?")
            self.i += 1
        elif _POSSESSIVE.start.match(self.pattern, self.i) and not self.runs(_POSSESSIVE):
            raise self.refuse(_POSSESSIVE.construct)

    def group(self) -> None:
        p, i = self.pattern, self.i
        named = _NAMED_GROUP.match(p, i)
        if named:
            self.out.append(f"(?P<{named.group(1)}>")
            self.i = named.end()
            return
        flags = _FLAGS.match(p, i)
        if flags and (flags.group(1) or flags.group(2)):
            unknown = sorted(set(flags.group(1) + (flags.group(2) or "")) - _SAME_FLAGS)
            if unknown:
                raise self.refuse(f"the inline flag '{unknown[0]}'")
        self.out.append("(")
        self.i += 1

    def class_char(self) -> None:
        p, i = self.pattern, self.i
        char = p[i]
        if p.startswith("[:", i):
            name = re.match(r"\[:(\w+):\]", p[i:])
            posix = name.group(1).capitalize() if name else "Alpha"
            raise PatternRefused(
                p,
                f"it uses a POSIX bracket class '{name.group() if name else '[:'}', which Java (and so Glue) "
                f"reads as a set of single characters; write \\p{{{posix}}}",
            )
        if char == "[":
            raise self.refuse("a nested character class (a union such as [a-z[0-9]])")
        if p.startswith("&&", i):
            raise self.refuse("a character class intersection '&&'")
        if char == "]" and i > self.class_start + 1 + (p[self.class_start + 1] == "^"):
            self.in_class = False
        self.out.append(char)
        self.i += 1

    def escape(self) -> None:
        p, i = self.pattern, self.i
        if i + 1 >= len(p):
            raise PatternRefused(p, "it ends with a lone '\\'", invalid=True)
        if not self.in_class:
            named = re.match(r"\\k<([a-zA-Z][a-zA-Z0-9]*)>", p[i:])
            if named and self.flavour == "python":
                self.out.append(f"(?P={named.group(1)})")
                self.i += named.end()
                return
            self.check_refused(i)
        letter = p[i + 1]
        if letter in "pP":
            self.property()
            return
        if letter == "Q":
            end = p.find("\\E", i + 2)
            quoted = p[i + 2 :] if end < 0 else p[i + 2 : end]
            self.out.append("".join(re.escape(c) for c in quoted))
            self.i = len(p) if end < 0 else end + 2
            return
        if letter == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", p[i + 2 : i + 6]):
            code = p[i + 2 : i + 6]
            self.out.append(f"\\x{{{code}}}" if self.flavour == "re2" else f"\\u{code}")
            self.i += 6
            return
        if letter == "x":
            braced = re.match(r"\\x\{([0-9a-fA-F]+)\}", p[i:])
            if braced:
                code = braced.group(1)
                self.out.append(braced.group() if self.flavour == "re2" else f"\\U{int(code, 16):08x}")
                self.i += braced.end()
                return
            if re.fullmatch(r"[0-9a-fA-F]{2}", p[i + 2 : i + 4]):
                self.out.append(p[i : i + 4])
                self.i += 4
                return
            raise PatternRefused(p, "'\\x' needs two hex digits", invalid=True)
        if letter == "z":
            self.out.append("\\z" if self.flavour == "re2" else "\\Z")
            self.i += 2
            return
        if letter in ESCAPES:
            self.out.append(ESCAPES[letter][0 if self.flavour == "re2" else 1])
            self.i += 2
            return
        if letter in _SAME_ESCAPES or not letter.isalnum() or (self.flavour == "python" and letter.isdigit()):
            self.out.append(p[i : i + 2])
            self.i += 2
            return
        raise self.refuse(f"the escape '\\{letter}'")

    def property(self) -> None:
        p, i = self.pattern, self.i
        match = _PROPERTY.match(p, i)
        if match is None:
            raise PatternRefused(p, "'\\p' needs a name such as \\p{L}", invalid=True)
        negated = match.group(1) == "P"
        name = match.group(2) if match.group(2) is not None else match.group(3)
        self.i = match.end()
        if name in PROPERTY_CLASSES:
            body = PROPERTY_CLASSES[name]
            if self.in_class:
                if negated:
                    raise self.refuse(f"'\\P{{{name}}}' inside a character class")
                self.out.append(body)
            else:
                self.out.append(f"[^{body}]" if negated else f"[{body}]")
            return
        # Unicode categories and scripts: RE2 knows them under their bare names; Python does not.
        for kind, known, prefixes in (
            ("category", UNICODE_CATEGORIES, _CATEGORY_PREFIXES),
            ("script", SCRIPTS, _SCRIPT_PREFIXES),
        ):
            bare = _unprefixed(name, known, prefixes)
            if bare is None:
                continue
            if self.flavour == "python":
                raise self.refuse(f"the Unicode {kind} '\\{match.group(1)}{{{name}}}'")
            self.out.append(f"\\{match.group(1)}{{{bare}}}")
            return
        raise self.refuse(f"the character property '\\{match.group(1)}{{{name}}}'")

    def check_syntax(self, translated: str) -> None:
        """RE2 syntax errors (an unbalanced parenthesis, a repetition of nothing), found by
        compiling a stand-in with Python's re: the two agree on everything that is left."""
        stand_in = _PROPERTY.sub(r"\\w", translated)
        stand_in = re.sub(r"\\x\{[0-9a-fA-F]+\}", r"\\x00", stand_in).replace("\\z", "\\Z")
        try:
            re.compile(stand_in)
        except re.error as error:
            raise PatternRefused(self.pattern, f"{error}", invalid=True) from None
