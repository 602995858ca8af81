"""Property tests for the DQDL front end: generated rulesets round-trip through the printer, and
no text makes the parser fail with anything but a positioned DQDLSyntaxError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.lang.dqdl import DQDLSyntaxError, parse_text, ruleset_text
from assay.lang.dqdl.tokens import KEYWORDS

names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in KEYWORDS)
quoted = st.text(st.characters(codec="ascii", exclude_characters='"\\\r\n'), max_size=12).map(
    lambda s: f'"{s}"'
)
column = st.one_of(quoted.filter(lambda q: not q[1:-1].replace("-", "").isdigit()), names)
number = st.one_of(
    st.integers(-10_000, 10_000).map(str),
    st.decimals(-1000, 1000, places=3, allow_nan=False, allow_infinity=False).map(str),
)
atom = st.one_of(number, st.builds(lambda k: f"avg(last({k}))", st.integers(1, 9)), st.just("last()"))
numexpr = st.recursive(
    atom,
    lambda inner: st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from("+-*/"), inner),
    max_leaves=4,
)
num_condition = st.one_of(
    st.builds(lambda op, x: f"{op} {x}", st.sampled_from(["=", "!=", ">", ">=", "<", "<="]), numexpr),
    st.builds(
        lambda a, b, neg: f"{'not ' if neg else ''}between {a} and {b}", numexpr, numexpr, st.booleans()
    ),
    st.builds(
        lambda xs, neg: f"{'not ' if neg else ''}in [{','.join(xs)}]",
        st.lists(number, min_size=1, max_size=4),
        st.booleans(),
    ),
)
str_condition = st.one_of(
    st.builds(
        lambda op, x: f"{op} {x}",
        st.sampled_from(["=", "!="]),
        st.one_of(quoted, st.sampled_from(["NULL", "EMPTY"])),
    ),
    st.builds(lambda xs: f"in [{','.join(xs)}]", st.lists(quoted, min_size=1, max_size=4)),
    st.builds(lambda x: f"matches {x}", quoted),
)
date = st.one_of(
    st.dates().map(lambda d: f'"{d.isoformat()}"'),
    st.just("now()"),
    st.builds(
        lambda s, n, u: f"(now() {s} {n} {u})",
        st.sampled_from("+-"),
        st.integers(0, 99),
        st.sampled_from(["days", "hours", "minutes"]),
    ),
)
labels = st.dictionaries(names, names, min_size=1, max_size=3).map(
    lambda d: " labels=[" + ", ".join(f'"{k}"="{v}"' for k, v in d.items()) + "]"
)
where = st.sampled_from(["", ' where "x > 1"', ' where "y is not null"'])

simple_rule = st.one_of(
    st.builds(lambda c, w: f"RowCount {c}{w}", num_condition, where),
    st.builds(lambda col, c, w: f"Completeness {col} {c}{w}", column, num_condition, where),
    st.builds(lambda cols: "IsUnique " + " ".join(cols), st.lists(column, min_size=1, max_size=3)),
    st.builds(lambda col, c: f"ColumnValues {col} {c}", column, st.one_of(num_condition, str_condition)),
    st.builds(lambda col, d: f"ColumnValues {col} > {d}", column, date),
    st.builds(
        lambda col, c, t: f"ColumnValues {col} {c} with threshold > {t}", column, str_condition, number
    ),
    st.builds(
        lambda col, n, u: f"DataFreshness {col} <= {n} {u}",
        column,
        st.integers(0, 999),
        st.sampled_from(["days", "hours"]),
    ),
    st.builds(lambda n, u: f"FileSize < {n} {u}", st.integers(0, 999), st.sampled_from(["B", "KB", "GB"])),
    st.builds(lambda q: f"CustomSql {q}", quoted),
)
rule = st.builds(lambda r, lab: r + lab, simple_rule, st.one_of(st.just(""), labels))
composite = st.builds(
    lambda rs, op: f" {op} ".join(f"({r})" for r in rs),
    st.lists(simple_rule, min_size=2, max_size=3),
    st.sampled_from(["and", "OR"]),
)
ruleset = st.lists(st.one_of(rule, composite), min_size=1, max_size=5).map(
    lambda rs: "Rules = [\n  " + ",\n  ".join(rs) + "\n]"
)


@settings(max_examples=300, deadline=None)
@given(ruleset)
def test_generated_rulesets_round_trip(text: str) -> None:
    parsed = parse_text(text).ruleset
    printed = ruleset_text(parsed)
    assert parse_text(printed).ruleset == parsed
    assert ruleset_text(parse_text(printed).ruleset) == printed


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80) | st.builds(lambda a, b: a + b, ruleset, st.text(max_size=10)))
def test_any_text_parses_or_fails_with_a_position(text: str) -> None:
    try:
        parse_text(text)
    except DQDLSyntaxError as error:
        assert error.line >= 1 and error.column >= 1
