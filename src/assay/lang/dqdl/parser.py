"""The DQDL parser: tokens in, a :class:`~assay.lang.dqdl.ast.Ruleset` out.

A hand-written recursive-descent parser for the grammar of DQDL.md §1-§5. Every error carries
the line and column of the token that caused it. Semantic checks that the reference parser
makes (rule-type arity, condition kinds, labels, constants) are made here too, so a ruleset
that parses is one that Glue would accept.
"""

from __future__ import annotations

import difflib
import re
import zoneinfo
from dataclasses import replace

from assay.lang.dqdl import arithmetic, ast
from assay.lang.dqdl.ast import CondKind, Op
from assay.lang.dqdl.catalog import RULE_TYPES, RuleType, lookup
from assay.lang.dqdl.errors import DQDLSyntaxError, DQDLWarning
from assay.lang.dqdl.tokens import Lexer, T, Token, time_parts, unescape

MAX_LABELS = 10
MAX_LABEL_KEY = 128
MAX_LABEL_VALUE = 256
MAX_WINDOW = 10_000
"""``last(k)`` reads at most this many earlier loads: 27 years of daily loads, read from the store
in milliseconds. A larger k is a typo (``last(99999999999999999999999)`` passed validation, then
failed every run as a system error: no store takes an integer that large)."""
MAX_DAYS = 36_525
"""A duration (``<= 6 hours``, ``now() - 3 days``) spans at most 100 years in its unit: beyond,
Python's dates overflowed in the run (a system error) for what is a typo."""
_UNIT_DAYS = {"days": 1, "hours": 24, "minutes": 24 * 60}

_SECTIONS = ("Metadata", "DataSources", "DefaultLabels", "Rules", "Analyzers")
_DICT_KEYS = {"Metadata": ("Version",), "DataSources": ("Primary", "AdditionalDataSources")}
_TIME_UNITS = ("days", "hours", "minutes")
_SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
_WORDS = {w.value: w for w in ast.Word}
_COMPARISONS = {T.EQ: Op.EQ, T.GT: Op.GT, T.GE: Op.GE, T.LT: Op.LT, T.LE: Op.LE}
_ARITHMETIC = {T.PLUS: "+", T.MINUS: "-", T.STAR: "*", T.SLASH: "/"}
_VARIABLE_IN_TEXT = re.compile(r"\$([A-Za-z0-9_.]+)")


class ParseResult:
    """A parsed ruleset plus what the parser wants the author to know."""

    def __init__(self, ruleset: ast.Ruleset, warnings: list[DQDLWarning]) -> None:
        self.ruleset = ruleset
        self.warnings = warnings


def parse_text(text: str, *, filename: str = "<ruleset>") -> ParseResult:
    """Parse DQDL text.

    >>> parse_text('Rules = [ RowCount > 0 ]').ruleset.rules[0].type
    'RowCount'
    """
    try:
        return _Parser(text).document()
    except DQDLSyntaxError as error:
        raise error.with_filename(filename) from None


def parse_condition(text: str, kind: CondKind = CondKind.NUMBER) -> ast.Condition:
    """Parse a condition on its own, as it follows a rule's name: ``> 5``, ``between 1 and 2``,
    ``<= avg(last(7)) * 1.3``, or for ``CondKind.DURATION`` ``<= 6 hours``. Raises
    :class:`DQDLSyntaxError` (its column counts from the condition's first character).

    >>> parse_condition("between 1 and avg(last(3))").op
    <Op.BETWEEN: 'between'>
    """
    parser = _Parser(text)
    condition = parser.condition((kind,))
    if parser.tok.type is not T.EOF:
        raise parser.error(f"unexpected {parser.tok.describe()} after the condition")
    return condition


class _Parser:
    def __init__(self, text: str) -> None:
        lexer = Lexer(text)
        self.source = lexer.source
        self.tokens = lexer.tokens()
        self.i = 0
        self.constants: dict[str, ast.Constant] = {}
        self.warnings: list[DQDLWarning] = []

    # --- token helpers -----------------------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def at(self, type_: T) -> bool:
        """Whether the current token has ``type_`` (a method, so type checkers do not narrow it)."""
        return self.tok.type is type_

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        if token.type is not T.EOF:
            self.i += 1
        return token

    def error(self, message: str, token: Token | None = None) -> DQDLSyntaxError:
        token = token or self.tok
        return DQDLSyntaxError(message, token.line, token.column, source=self.source)

    def expect(self, type_: T, what: str) -> Token:
        if self.tok.type is not type_:
            raise self.error(f"expected {what}, found {self.tok.describe()}")
        return self.advance()

    def close(self, opening: Token, what: str = "") -> Token:
        """The ')' matching ``opening``. A missing one is reported where it is missing, just after
        the last token before it, not at whatever follows (often ']' on a later line)."""
        if self.tok.type is T.RPAREN:
            return self.advance()
        previous = self.tokens[self.i - 1] if self.i > 0 else self.tok
        offset = previous.end if self.i > 0 else previous.start
        line = self.source.count("\n", 0, offset) + 1
        column = offset - (self.source.rfind("\n", 0, offset) + 1) + 1
        found = self.tok.describe()
        purpose = f" {what}" if what else ""
        raise DQDLSyntaxError(
            f"missing ')'{purpose}: the '(' at {opening.line}:{opening.column} is never closed "
            f"(found {found} after this point)",
            line,
            column,
            source=self.source,
        )

    def expect_keyword(self, word: str) -> Token:
        if not self.tok.is_keyword(word):
            raise self.error(f"expected '{word}', found {self.tok.describe()}")
        return self.advance()

    def raw(self, token: Token) -> str:
        return self.source[token.start : token.end]

    @staticmethod
    def span(token: Token) -> ast.Span:
        return ast.Span(token.line, token.column)

    # --- document ----------------------------------------------------------------------------

    def document(self) -> ParseResult:
        start = self.tok
        metadata = self.dictionary("Metadata") if self.tok.is_keyword("Metadata") else None
        sources = self.dictionary("DataSources") if self.tok.is_keyword("DataSources") else None
        constants = []
        while self.tok.type is T.IDENT and self.peek().type is T.EQ:
            constants.append(self.constant())
        default_labels = None
        if self.tok.is_keyword("DefaultLabels"):
            self.advance()
            self.expect(T.EQ, "'=' after DefaultLabels")
            default_labels = self.labels()
        rules = analyzers = None
        if self.tok.is_keyword("Rules"):
            rules = self.rules_section()
        if self.tok.is_keyword("Analyzers"):
            analyzers = self.analyzers_section()
        if rules is None and analyzers is None:
            if self.tok.type is T.EOF:
                what = "an empty ruleset" if start.type is T.EOF else "a ruleset without a Rules section"
                raise self.error(f"No rules or analyzers provided: {what}; write Rules = [ ... ]")
            raise self.error(self._unexpected_at_top())
        if not rules and not analyzers:
            raise self.error("No rules or analyzers provided: the Rules list is empty", start)
        for node in rules or ():
            self.check_label_count(default_labels, node)
        if self.tok.type is not T.EOF:
            if self.tok.type is T.KEYWORD and self.tok.text in _SECTIONS:
                raise self.error(
                    f"section '{self.tok.text}' is repeated or out of order: the order is "
                    "Metadata, DataSources, constants, DefaultLabels, Rules, Analyzers"
                )
            # The reference parser stops after the last section and ignores what follows
            # (its conformance suite has `Rules = [ ... ]]`); we accept it, but say so.
            self.warnings.append(
                DQDLWarning(
                    f"ignored text after the ruleset: {self.tok.describe()}", self.tok.line, self.tok.column
                )
            )
        ruleset = ast.Ruleset(
            metadata=metadata,  # type: ignore[arg-type]
            data_sources=sources,
            constants=tuple(constants),
            default_labels=default_labels,
            rules=rules,
            analyzers=analyzers,
        )
        return ParseResult(ruleset, self.warnings)

    def check_section_case(self, token: Token) -> None:
        """``rules = [`` is a constant named rules to the grammar; say what the author meant."""
        for section in _SECTIONS:
            if token.text != section and token.text.lower() == section.lower():
                raise self.error(
                    f"unknown section '{token.text}': section names are case-sensitive, write '{section}'",
                    token,
                )

    def _unexpected_at_top(self) -> str:
        token = self.tok
        if token.type is T.IDENT:
            self.check_section_case(token)
        if token.type is T.IDENT and token.text.startswith("Rules"):
            return f"unknown section '{token.text}': did you mean 'Rules'?"
        if token.type is T.IDENT:
            return (
                f"expected a section (Rules = [ ... ]) or a constant (name = \"value\"), found '{token.text}'"
            )
        return f"expected a section such as Rules = [ ... ], found {token.describe()}"

    def dictionary(self, section: str) -> tuple[tuple[str, str | tuple[str, ...]], ...]:
        self.advance()
        self.expect(T.EQ, f"'=' after {section}")
        opening = self.expect(T.LBRACE, "'{'")
        if self.tok.type is T.RBRACE:
            raise self.error(f"{section} cannot be an empty dictionary", opening)
        pairs: list[tuple[str, str | tuple[str, ...]]] = []
        while True:
            key_token = self.expect(T.STRING, "a quoted key")
            key = key_token.text
            if key not in _DICT_KEYS[section]:
                allowed = ", ".join(_DICT_KEYS[section])
                raise self.error(
                    f"Unsupported key '{key}' in {section}: allowed keys are {allowed}", key_token
                )
            if any(existing == key for existing, _ in pairs):
                raise self.error(f"key '{key}' appears twice in {section}", key_token)
            self.expect(T.COLON, "':'")
            value: str | tuple[str, ...]
            if key == "AdditionalDataSources":
                value = tuple(s.value for s in self.string_array())
            else:
                value = self.expect(T.STRING, f"a quoted value for '{key}'").text
            pairs.append((key, value))
            if self.tok.type is T.COMMA:
                self.advance()
                continue
            self.expect(T.RBRACE, "',' or '}'")
            return tuple(pairs)

    def string_array(self) -> tuple[ast.StringLit, ...]:
        opening = self.expect(T.LBRACKET, "'['")
        items: list[ast.StringLit] = []
        if self.tok.type is T.RBRACKET:
            raise self.error("an array needs at least one value", opening)
        while True:
            token = self.tok
            if token.type not in (T.STRING, T.DATE, T.TIME):
                raise self.error(f"expected a quoted string, found {token.describe()}")
            self.advance()
            items.append(ast.StringLit(token.text, unescape(token.text), self.span(token)))
            if self.tok.type is T.COMMA:
                self.advance()
                continue
            self.expect(T.RBRACKET, "',' or ']'")
            return tuple(items)

    def constant(self) -> ast.Constant:
        name_token = self.advance()
        name = name_token.text
        opening, first = self.peek(), self.peek(2)  # the token after '=', and the one after that
        if opening.type is T.LBRACE or (
            opening.type is T.LBRACKET and first.type not in (T.STRING, T.DATE, T.TIME)
        ):
            # `rules = [ RowCount > 0 ]` reads as a constant; a string constant may be named rules.
            self.check_section_case(name_token)
        if name[0] in "._":
            raise self.error(f"constant name '{name}' cannot start with '{name[0]}'", name_token)
        if name in self.constants:
            raise self.error(f"constant '{name}' is defined twice", name_token)
        if lookup(name):
            raise self.error(f"'{name}' is a rule type and cannot be a constant name", name_token)
        self.advance()  # '='
        value: ast.StringLit | tuple[ast.StringLit, ...]
        token = self.tok
        if token.type in (T.STRING, T.DATE, T.TIME):
            self.advance()
            value = ast.StringLit(token.text, token.text, self.span(token))
            texts = [token.text]
        elif token.type is T.LBRACKET:
            value = self.string_array()
            texts = [item.raw for item in value]
        else:
            raise self.error(
                f"constant '{name}' must be a quoted string or an array of quoted strings, "
                f"found {token.describe()}"
            )
        for text in texts:
            for ref in _VARIABLE_IN_TEXT.findall(text):
                if ref in self.constants:
                    raise self.error(
                        f"constant '{name}' refers to constant '${ref}': constants cannot nest", token
                    )
        constant = ast.Constant(name, value, self.span(name_token))
        self.constants[name] = constant
        return constant

    def variable(self, token: Token) -> ast.Constant:
        constant = self.constants.get(token.text)
        if constant is None:
            raise self.error(f"Variable not found: {token.text}", token)
        return constant

    # --- labels ------------------------------------------------------------------------------

    def labels(self) -> tuple[ast.Label, ...]:
        opening = self.expect(T.LBRACKET, "'[' to open the labels")
        if self.tok.type is T.RBRACKET:
            raise self.error("Labels must have at least one label", opening)
        items: list[ast.Label] = []
        while True:
            key_token = self.tok
            if key_token.type not in (T.STRING, T.DATE, T.TIME):
                raise self.error(f'labels are written "key"="value"; found {key_token.describe()}')
            self.advance()
            self.expect(T.EQ, "'=' between a label's key and value")
            value_token = self.tok
            if value_token.type not in (T.STRING, T.DATE, T.TIME):
                raise self.error(f'labels are written "key"="value"; found {value_token.describe()}')
            self.advance()
            key, value = key_token.text, value_token.text
            if not key or not value:
                raise self.error("Label key or value cannot be empty", key_token if not key else value_token)
            if len(key) > MAX_LABEL_KEY:
                raise self.error(
                    f"Label key has length {len(key)} exceeding the maximum length of "
                    f"{MAX_LABEL_KEY} characters",
                    key_token,
                )
            if len(value) > MAX_LABEL_VALUE:
                raise self.error(
                    f"Label value has length {len(value)} exceeding the maximum length of "
                    f"{MAX_LABEL_VALUE} characters",
                    value_token,
                )
            if any(item.key == key for item in items):
                raise self.error(f"Duplicate label key. Key must be unique. ('{key}')", key_token)
            items.append(ast.Label(key, value))
            if len(items) > MAX_LABELS:
                raise self.error(f"Number of labels exceed maximum allowed (MAX: {MAX_LABELS})", key_token)
            if self.tok.type is T.COMMA:
                self.advance()
                continue
            self.expect(T.RBRACKET, "',' or ']' in the labels")
            return tuple(items)

    def check_label_count(self, defaults: tuple[ast.Label, ...] | None, node: ast.RuleNode) -> None:
        merged = {label.key for label in defaults or ()} | {label.key for label in node.labels or ()}
        if len(merged) > MAX_LABELS:
            raise DQDLSyntaxError(
                f"Number of labels exceed maximum allowed (MAX: {MAX_LABELS}) once DefaultLabels are added",
                node.span.line,
                node.span.column,
                source=self.source,
            )
        if isinstance(node, ast.Composite):
            for child in node.children:
                self.check_label_count(defaults, child)

    # --- rules -------------------------------------------------------------------------------

    def rules_section(self) -> tuple[ast.RuleNode, ...]:
        self.advance()
        self.expect(T.EQ, "'=' after Rules")
        self.expect(T.LBRACKET, "'[' to open the rules list")
        rules: list[ast.RuleNode] = []
        if self.at(T.RBRACKET):
            self.advance()
            return ()
        while True:
            rules.append(self.rule_or())
            if self.at(T.COMMA):
                comma = self.advance()
                if self.at(T.RBRACKET):
                    raise self.error("trailing comma: remove the ',' before ']'", comma)
                continue
            if self.at(T.RBRACKET):
                self.advance()
                return tuple(rules)
            raise self.error(
                f"expected ',' between rules or ']' to close the list, found {self.tok.describe()}"
            )

    def rule_or(self) -> ast.RuleNode:
        first = self.tok
        left = self.rule_and()
        if not self.tok.is_keyword("or"):
            return left
        op_text = self.raw(self.tok)
        children = [left]
        while self.tok.is_keyword("or"):
            self.advance()
            children.append(self.rule_and())
        return ast.Composite("or", op_text, tuple(children), span=self.span(first))

    def rule_and(self) -> ast.RuleNode:
        first = self.tok
        left = self.rule_primary()
        if not self.tok.is_keyword("and"):
            return left
        op_text = self.raw(self.tok)
        children = [left]
        while self.tok.is_keyword("and"):
            self.advance()
            children.append(self.rule_primary())
        return ast.Composite("and", op_text, tuple(children), span=self.span(first))

    def rule_primary(self) -> ast.RuleNode:
        if self.tok.type is not T.LPAREN:
            return self.rule()
        opening = self.advance()
        inner = self.rule_or()
        self.close(opening, "to close the parenthesised rule")
        if self.tok.is_keyword("labels"):
            label_token = self.advance()
            self.expect(T.EQ, "'=' after labels")
            labels = self.labels()
            if inner.labels is not None:
                raise self.error("this rule already has labels inside the parentheses", label_token)
            return replace(inner, labels=labels, span=self.span(opening))
        return inner

    def rule(self) -> ast.Rule:
        token = self.tok
        if token.type is not T.IDENT:
            raise self.error(f"expected a rule such as RowCount > 0, found {token.describe()}")
        spec = self.rule_type(token)
        if spec.analyzer_only:
            raise self.error(f"{spec.name} can only be used in the Analyzers section", token)
        self.advance()
        params = self.params(spec)
        self.check_arity(spec, params, token)
        condition = None
        if self.starts_condition():
            if spec.forbids_condition(len(params)):
                raise self.error(f"{spec.name} does not take a condition")
            condition = self.condition(spec.returns.kinds)
        elif spec.needs_condition(len(params)):
            raise self.error(f"{spec.name} needs a condition, found {self.tok.describe()}")
        where = None
        if self.tok.is_keyword("where"):
            where_token = self.advance()
            if not spec.where:
                raise self.error(f"{spec.name} does not support a where clause", where_token)
            string = self.expect(T.STRING, "a quoted SQL predicate after where")
            if not string.text.strip():
                raise self.error("the where clause is empty", string)
            where = ast.StringLit(string.text, string.text, self.span(string))
        tags: list[ast.Tag] = []
        labels = None
        labels_first = False
        while self.tok.is_keyword("with", "labels"):
            if self.tok.is_keyword("labels"):
                if labels is not None:
                    raise self.error("a rule can have only one labels list")
                self.advance()
                self.expect(T.EQ, "'=' after labels")
                labels = self.labels()
                labels_first = not tags
            else:
                tags.append(self.tag(spec, tags))
        if self.tok.is_keyword("where"):
            raise self.error("write the where clause before 'with' and 'labels'")
        return ast.Rule(
            spec.name,
            tuple(params),
            condition,
            where,
            tuple(tags),
            labels,
            labels_first and bool(tags),
            span=self.span(token),
        )

    def rule_type(self, token: Token) -> RuleType:
        spec = lookup(token.text)
        if spec is None:
            close = difflib.get_close_matches(token.text, [t.name for t in RULE_TYPES], n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise self.error(f"Rule Type: {token.text} is not valid{hint}", token)
        return spec

    def check_arity(self, spec: RuleType, params: list[ast.Param], token: Token) -> None:
        if spec.accepts(len(params)):
            return
        if spec.max_params is None:
            wanted = f"at least {spec.min_params}"
        elif spec.min_params == spec.max_params:
            wanted = "no" if spec.max_params == 0 else str(spec.max_params)
        else:
            wanted = f"{spec.min_params} to {spec.max_params}"
        noun = "parameter" if spec.max_params == 1 and spec.min_params == 1 else "parameters"
        raise self.error(f"{spec.name} takes {wanted} {noun}, found {len(params)}", token)

    def params(self, spec: RuleType) -> list[ast.Param]:
        params: list[ast.Param] = []
        while True:
            full = spec.max_params is not None and len(params) >= spec.max_params
            connector = ""
            ahead = 0
            if self.tok.is_keyword("of"):
                connector, ahead = "of", 1
            elif self.tok.is_keyword("and") and params:
                following = self.peek()
                if full or (following.type is T.IDENT and lookup(following.text)):
                    return params  # a composite's 'and'
                connector, ahead = "and", 1
            token = self.peek(ahead)
            if token.type not in (T.STRING, T.IDENT, T.VARIABLE):
                if connector:
                    raise self.error(
                        f"expected a parameter after '{connector}', found {token.describe()}", token
                    )
                if token.type in (T.DATE, T.TIME):
                    raise self.error(
                        f'"{token.text}" is read as a date or time, so it cannot be a parameter', token
                    )
                return params
            if full:
                raise self.error(
                    f"{spec.name} takes {spec.max_params} parameter(s); unexpected {token.describe()}", token
                )
            self.i += ahead
            self.advance()
            if token.type is T.VARIABLE:
                constant = self.variable(token)
                if not isinstance(constant.value, ast.StringLit):
                    raise self.error(
                        f"Invalid variable type for '{token.text}': a parameter needs a string constant",
                        token,
                    )
                params.append(ast.Param(constant.value.raw, True, connector, token.text, self.span(token)))
            else:
                params.append(ast.Param(token.text, token.type is T.STRING, connector, span=self.span(token)))

    def tag(self, spec: RuleType, tags: list[ast.Tag]) -> ast.Tag:
        self.advance()  # with
        name_token = self.tok
        if name_token.type is not T.IDENT:
            raise self.error(
                f"expected a tag name after 'with' (such as threshold), found {name_token.describe()}"
            )
        self.advance()
        if name_token.text.lower() == "threshold":
            if not spec.threshold:
                raise self.error(f"{spec.name} does not support 'with threshold'", name_token)
            if any(t.is_threshold for t in tags):
                raise self.error("a rule can have only one threshold", name_token)
            if not self.starts_condition():
                raise self.error(f"expected a condition after 'with threshold', found {self.tok.describe()}")
            return ast.Tag(name_token.text, self.condition((CondKind.NUMBER,)), self.span(name_token))
        if self.tok.type is not T.EQ:
            raise self.error(
                f"tags are written 'with {name_token.text} = value', found {self.tok.describe()}"
            )
        self.advance()
        value_token = self.tok
        value = self.tag_value()
        if name_token.text == "timeZone" and isinstance(value, ast.StringLit):
            try:
                zoneinfo.ZoneInfo(value.value)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise self.error(f"unknown time zone '{value.value}'", value_token) from None
        return ast.Tag(name_token.text, value, self.span(name_token))

    def tag_value(self, *, bare: bool = False) -> ast.TagValue:
        """A quoted string, a number, a list of quoted strings (``["a","b"]``, Glue's
        ``filterOrder``) or, where ``bare``, an unquoted true or false (``rebin = false``)."""
        token = self.tok
        if token.type in (T.STRING, T.DATE, T.TIME):
            self.advance()
            return ast.StringLit(token.text, token.text, self.span(token))
        if token.type is T.NUMBER or (token.type is T.MINUS and self.peek().type is T.NUMBER):
            return self.number()
        if token.type is T.LBRACKET:
            return ast.StringList(self.string_array(), self.span(token))
        if bare and token.type is T.IDENT and token.text.lower() in ("true", "false"):
            self.advance()
            return ast.Bare(token.text, self.span(token))
        what = "a quoted string, a number, true or false" if bare else "a quoted string, a number or a list"
        raise self.error(f"a tag's value is {what}, found {token.describe()}")

    def analyzer_tags(self, spec: RuleType) -> tuple[ast.Tag, ...]:
        """``with bins = 10, rebin = false`` (or ``with bins = 10 with rebin = false``): the tags
        an analyzer type declares in the catalog, each at most once."""
        tags: list[ast.Tag] = []
        while self.tok.is_keyword("with") or (
            tags
            and self.at(T.COMMA)
            and self.peek().type is T.IDENT
            and self.peek().text in spec.analyzer_tags
            and self.peek(2).type is T.EQ
        ):
            self.advance()  # 'with' or ','
            name = self.expect(T.IDENT, "a tag name")
            if name.text not in spec.analyzer_tags:
                allowed = ", ".join(spec.analyzer_tags) or "none"
                raise self.error(f"{spec.name} has no tag '{name.text}' (its tags: {allowed})", name)
            if any(tag.name == name.text for tag in tags):
                raise self.error(f"tag '{name.text}' is given twice", name)
            self.expect(T.EQ, f"'=' after {name.text}")
            value_token = self.tok
            value = self.tag_value(bare=True)
            problem = spec.tag_problem(name.text, value)
            if problem:
                raise self.error(problem, value_token)
            tags.append(ast.Tag(name.text, value, self.span(name)))
        return tuple(tags)

    # --- analyzers ---------------------------------------------------------------------------

    def analyzers_section(self) -> tuple[ast.Analyzer, ...]:
        self.advance()
        self.expect(T.EQ, "'=' after Analyzers")
        self.expect(T.LBRACKET, "'[' to open the analyzers list")
        if self.tok.type is T.RBRACKET:
            self.advance()
            return ()
        analyzers: list[ast.Analyzer] = []
        while True:
            token = self.tok
            if token.type is not T.IDENT:
                raise self.error(f'expected an analyzer such as Completeness "col", found {token.describe()}')
            spec = self.rule_type(token)
            if not spec.analyzer:
                raise self.error(f"{spec.name} cannot be used as an analyzer", token)
            self.advance()
            params = self.params(spec)
            self.check_arity(spec, params, token)
            tags = self.analyzer_tags(spec) if spec.analyzer_tags else ()
            if self.starts_condition() or self.tok.is_keyword("where", "with", "labels"):
                raise self.error("analyzers take no condition, where clause, tags or labels")
            analyzers.append(ast.Analyzer(spec.name, tuple(params), self.span(token), tags))
            if self.tok.type is T.COMMA:
                comma = self.advance()
                if self.at(T.RBRACKET):
                    raise self.error("trailing comma: remove the ',' before ']'", comma)
                continue
            self.expect(T.RBRACKET, "',' between analyzers or ']'")
            return tuple(analyzers)

    # --- conditions --------------------------------------------------------------------------

    def starts_condition(self) -> bool:
        token = self.tok
        return token.type in (T.EQ, T.BANG, T.GT, T.GE, T.LT, T.LE) or token.is_keyword(
            "between", "in", "not", "matches"
        )

    def operator(self) -> Op:
        token = self.tok
        if not self.starts_condition():
            raise self.error(
                "a condition such as '> 0', 'between 10 and 20' or 'in [1, 2]' starts with "
                f"=, !=, >, >=, <, <=, between, in, not or matches; found {token.describe()}"
            )
        self.advance()
        if token.type in _COMPARISONS:
            return _COMPARISONS[token.type]
        if token.type is T.BANG:
            self.expect(T.EQ, "'=' after '!'")
            return Op.NE
        if token.is_keyword("not"):
            negated = self.tok
            if not negated.is_keyword("between", "in", "matches"):
                raise self.error(f"expected between, in or matches after 'not', found {negated.describe()}")
            self.advance()
            return {"between": Op.NOT_BETWEEN, "in": Op.NOT_IN, "matches": Op.NOT_MATCHES}[negated.text]
        return {"between": Op.BETWEEN, "in": Op.IN, "matches": Op.MATCHES}[token.text]

    def condition(self, kinds: tuple[CondKind, ...]) -> ast.Condition:
        start = self.tok
        op = self.operator()
        kind = kinds[0] if len(kinds) == 1 else self.guess_kind(op, kinds)
        if op in (Op.MATCHES, Op.NOT_MATCHES):
            if kind is not CondKind.STRING:
                raise self.error(f"'{op.value}' needs a string condition", start)
            token = self.tok
            if token.type is T.VARIABLE:
                raise self.error("constants cannot be used with matches: write the pattern in quotes")
            if token.type not in (T.STRING, T.DATE, T.TIME):
                raise self.error(f"expected a quoted pattern after '{op.value}', found {token.describe()}")
            self.advance()
            return ast.Condition(
                kind, op, (ast.StringLit(token.text, token.text, self.span(token)),), span=self.span(start)
            )
        if op in (Op.IN, Op.NOT_IN):
            if kind is CondKind.STRING and self.tok.type is T.VARIABLE:
                token = self.advance()
                if not isinstance(self.variable(token).value, tuple):
                    raise self.error(
                        f"Invalid variable type for '{token.text}': 'in' needs an array constant", token
                    )
                return ast.Condition(
                    kind, op, (ast.VarRef(token.text, self.span(token)),), False, self.span(start)
                )
            opening = self.expect(T.LBRACKET, f"'[' after '{op.value}'")
            items = []
            if self.tok.type is T.RBRACKET:
                raise self.error("an 'in' list needs at least one value", opening)
            while True:
                items.append(self.operand(kind, listed=True))
                if self.tok.type is T.COMMA:
                    self.advance()
                    continue
                self.expect(T.RBRACKET, "',' or ']' in the list")
                return ast.Condition(kind, op, tuple(items), span=self.span(start))
        if op in (Op.BETWEEN, Op.NOT_BETWEEN):
            if kind is CondKind.STRING:
                raise self.error(f"'{op.value}' does not apply to strings", start)
            low = self.operand(kind)
            self.expect_keyword("and")
            high = self.operand(kind)
            return ast.Condition(kind, op, (low, high), span=self.span(start))
        if kind is CondKind.STRING and op not in (Op.EQ, Op.NE):
            raise self.error(f"'{op.value}' does not apply to strings: use =, !=, in or matches", start)
        return ast.Condition(kind, op, (self.operand(kind),), span=self.span(start))

    def guess_kind(self, op: Op, kinds: tuple[CondKind, ...]) -> CondKind:
        """ColumnValues: string, number or date, decided by the operands (DQDL.md §2)."""
        if op in (Op.MATCHES, Op.NOT_MATCHES):
            return CondKind.STRING
        seen: set[CondKind] = set()
        if op in (Op.IN, Op.NOT_IN):
            if self.tok.type is T.VARIABLE:
                return CondKind.STRING
            depth, parens, j = 0, 0, self.i
            while j < len(self.tokens):
                token = self.tokens[j]
                if token.type is T.LBRACKET:
                    depth += 1
                elif token.type is T.RBRACKET:
                    depth -= 1
                    if depth <= 0:
                        break
                elif token.type is T.EOF:
                    break
                elif depth == 1 and parens == 0:
                    kind = self.token_kind(j)
                    if kind is not None:
                        seen.add(kind)
                if token.type is T.LPAREN:
                    parens += 1
                elif token.type is T.RPAREN:
                    parens -= 1
                j += 1
        else:
            kind = self.token_kind(self.i)
            if kind is not None:
                seen.add(kind)
        if CondKind.NUMBER in seen and CondKind.STRING in seen:
            raise self.error("a list cannot mix quoted strings and numbers")
        if CondKind.NUMBER in seen and CondKind.DATE in seen:
            raise self.error("a list cannot mix dates and numbers")
        if CondKind.STRING in seen:
            return CondKind.STRING
        for kind in kinds:
            if kind in seen:
                return kind
        return CondKind.STRING if CondKind.STRING in kinds else kinds[0]

    def token_kind(self, index: int) -> CondKind | None:
        token = self.tokens[index]
        if token.type in (T.STRING, T.VARIABLE) or token.is_keyword("EMPTY", "WHITESPACES_ONLY"):
            return CondKind.STRING
        if token.type in (T.DATE, T.TIME, T.NOW):
            return CondKind.DATE
        if token.type is T.LPAREN:
            return CondKind.DATE if self.tokens[index + 1].type is T.NOW else CondKind.NUMBER
        if token.type in (T.NUMBER, T.MINUS, T.IDENT):
            return CondKind.NUMBER
        return None

    def operand(self, kind: CondKind, listed: bool = False) -> ast.Operand:
        if kind is CondKind.NUMBER:
            return self.numexpr()
        if kind is CondKind.STRING:
            return self.string_operand(listed)
        if kind is CondKind.DATE:
            return self.date_operand()
        if kind is CondKind.DURATION:
            return self.duration()
        return self.size()

    def string_operand(self, listed: bool) -> ast.Operand:
        token = self.tok
        if token.type in (T.STRING, T.DATE, T.TIME):
            self.advance()
            # DQDL removes \" and \\ escapes in 'in' lists only (DQDL.md §1, Strings).
            value = unescape(token.text) if listed else token.text
            return ast.StringLit(token.text, value, self.span(token))
        if token.type is T.KEYWORD and token.text in _WORDS:
            self.advance()
            return ast.KeywordLit(_WORDS[token.text], self.span(token))
        if token.type is T.VARIABLE:
            self.advance()
            if not isinstance(self.variable(token).value, ast.StringLit):
                raise self.error(
                    f"Invalid variable type for '{token.text}': expected a string constant", token
                )
            return ast.VarRef(token.text, self.span(token))
        raise self.error(
            f"expected a quoted string, NULL, EMPTY or WHITESPACES_ONLY, found {token.describe()}"
        )

    def date_operand(self) -> ast.Operand:
        token = self.tok
        if token.type is T.DATE:
            self.advance()
            return ast.DateLit(token.text, self.span(token))
        if token.type is T.TIME:
            if time_parts(token.text) is None:
                raise self.error(f'"{token.text}" is not a valid time of day', token)
            self.advance()
            return ast.TimeLit(token.text, self.span(token))
        if token.is_keyword("NULL"):
            self.advance()
            return ast.Null(self.span(token))
        if token.type is T.NOW:
            self.advance()
            if self.tok.type in (T.PLUS, T.MINUS):
                raise self.error("arithmetic on now() needs parentheses, such as (now() - 3 days)")
            return ast.Now(span=self.span(token))
        if token.type is T.LPAREN and self.peek().type is T.NOW:
            self.advance()
            self.advance()
            sign_token = self.tok
            if sign_token.type not in (T.PLUS, T.MINUS):
                raise self.error(f"expected '+' or '-' after now(), found {sign_token.describe()}")
            self.advance()
            amount = self.expect(T.NUMBER, "a whole number of days, hours or minutes")
            if not amount.text.isdigit():
                raise self.error("the amount added to now() must be a whole number", amount)
            unit = self.time_unit()
            self.check_span(amount, unit)
            self.close(token)
            return ast.Now(sign_token.text, int(amount.text), unit, self.span(token))
        raise self.error(
            f'expected a date such as "2024-01-31", now() or (now() - 1 days), found {token.describe()}'
        )

    def time_unit(self) -> str:
        token = self.tok
        if not token.is_keyword(*_TIME_UNITS):
            raise self.error(f"expected a time unit (days, hours or minutes), found {token.describe()}")
        self.advance()
        return token.text

    def duration(self) -> ast.Duration:
        token = self.expect(T.NUMBER, "a duration such as 24 hours")
        if not token.text.isdigit():
            raise self.error("a duration is a whole number of days, hours or minutes", token)
        unit = self.time_unit()
        self.check_span(token, unit)
        return ast.Duration(int(token.text), unit, self.span(token))

    def check_span(self, amount: Token, unit: str) -> None:
        most = MAX_DAYS * _UNIT_DAYS[unit]
        if int(amount.text) > most:
            reason = f"a duration spans at most 100 years ({most:,} {unit}), not {amount.text}"
            raise self.error(reason, amount)

    def size(self) -> ast.Size:
        token = self.expect(T.NUMBER, "a size such as 5 MB")
        if not token.text.isdigit():
            raise self.error("a size is a whole number of B, KB, MB, GB or TB", token)
        unit = ""
        if self.tok.is_keyword(*_SIZE_UNITS):
            unit = self.advance().text
        elif self.tok.type is T.IDENT and re.fullmatch(r"[A-Za-z]B", self.tok.text):
            raise self.error(f"unknown size unit '{self.tok.text}': use B, KB, MB, GB or TB")
        return ast.Size(int(token.text), unit, self.span(token))

    # --- numeric expressions -----------------------------------------------------------------

    def numexpr(self) -> ast.NumExpr:
        left = self.atom()
        while self.tok.type in _ARITHMETIC:
            op_token = self.advance()
            right = self.atom()
            left = ast.BinOp(_ARITHMETIC[op_token.type], left, right, left.span)
        return left

    def check_window(self, k: ast.NumExpr, token: Token) -> None:
        """``last(k)`` with k a whole number from 1 to :data:`MAX_WINDOW`, when k is a constant
        (a k read from history is judged when the run knows it)."""
        try:
            value = arithmetic.evaluate(k, call=lambda _: None)
        except ZeroDivisionError:
            value = None  # the run reports it, as it does in any condition
        if value is None or (value == int(value) and 1 <= value <= MAX_WINDOW):
            return
        shown = k.text if isinstance(k, ast.Number) else f"{value:g}"
        raise self.error(f"last(k) reads 1 to {MAX_WINDOW:,} earlier loads, not {shown}", token)

    def number(self) -> ast.Number:
        token = self.tok
        if token.type is T.MINUS:
            self.advance()
            digits = self.expect(T.NUMBER, "a number after '-'")
            return ast.Number("-" + digits.text, self.span(token))
        self.expect(T.NUMBER, "a number")
        return ast.Number(token.text, self.span(token))

    def atom(self) -> ast.NumExpr:
        token = self.tok
        if token.type in (T.NUMBER, T.MINUS):
            return self.number()
        if token.is_keyword("NULL"):
            self.advance()
            return ast.Null(self.span(token))
        if token.type is T.LPAREN:
            self.advance()
            inner = self.numexpr()
            self.close(token)
            return ast.Paren(inner, self.span(token))
        if token.type is T.IDENT and self.peek().type is T.LPAREN:
            self.advance()
            opening = self.advance()
            first = self.tok
            args: list[ast.NumExpr] = []
            if self.tok.type is not T.RPAREN:
                while True:
                    args.append(self.numexpr())
                    if self.tok.type is T.COMMA:
                        self.advance()
                        continue
                    break
            self.close(opening, f"to close {token.text}(")
            if token.text == "last" and args:
                self.check_window(args[0], first)
            return ast.Call(token.text, tuple(args), self.span(token))
        if token.type is T.VARIABLE:
            raise self.error("constants hold strings and cannot be used in a numeric condition", token)
        raise self.error(f"expected a number, found {token.describe()}")
