"""DQDL text from a syntax tree.

:func:`rule_text` gives a rule's canonical text, the string Glue reports in its outcomes
(``Rule``) and row-level lists; it matches the reference implementation's ``toString`` on the
public test vectors. :func:`ruleset_text` prints a whole document; parsing it gives back an
equal tree.
"""

from __future__ import annotations

from functools import singledispatch

from assay.lang.dqdl import ast


@singledispatch
def operand_text(node: object) -> str:
    raise TypeError(f"cannot print {type(node).__name__}")


@operand_text.register
def _number(node: ast.Number) -> str:
    return node.text


@operand_text.register
def _null(node: ast.Null) -> str:
    return "NULL"


@operand_text.register
def _call(node: ast.Call) -> str:
    return f"{node.name}({','.join(operand_text(arg) for arg in node.args)})"


@operand_text.register
def _binop(node: ast.BinOp) -> str:
    return f"{operand_text(node.left)} {node.op} {operand_text(node.right)}"


@operand_text.register
def _paren(node: ast.Paren) -> str:
    return f"({operand_text(node.inner)})"


@operand_text.register
def _string(node: ast.StringLit) -> str:
    return f'"{node.raw}"'


@operand_text.register
def _keyword(node: ast.KeywordLit) -> str:
    return node.word.value


@operand_text.register
def _var(node: ast.VarRef) -> str:
    return f"${node.name}"


@operand_text.register
def _date(node: ast.DateLit) -> str:
    return f'"{node.text}"'


@operand_text.register
def _time(node: ast.TimeLit) -> str:
    return f'"{node.text}"'


@operand_text.register
def _now(node: ast.Now) -> str:
    if not node.sign:
        return "now()"
    return f"(now() {node.sign} {node.amount} {node.unit})"


@operand_text.register
def _duration(node: ast.Duration) -> str:
    return f"{node.amount} {node.unit}"


@operand_text.register
def _size(node: ast.Size) -> str:
    return f"{node.amount} {node.unit}" if node.unit else str(node.amount)


def condition_text(cond: ast.Condition) -> str:
    """``> 5``, ``between 1 and 2``, ``in ["a","b"]``.

    >>> from assay.dqdl import parse
    >>> condition_text(parse('Rules = [ RowCount between 1 and 5 ]').rules[0].condition)
    'between 1 and 5'
    """
    op = cond.op.value
    parts = [operand_text(o) for o in cond.operands]
    if cond.op in (ast.Op.BETWEEN, ast.Op.NOT_BETWEEN):
        return f"{op} {parts[0]} and {parts[1]}"
    if cond.op in (ast.Op.IN, ast.Op.NOT_IN) and cond.listed:
        return f"{op} [{','.join(parts)}]"
    return f"{op} {parts[0]}"


def labels_text(labels: tuple[ast.Label, ...]) -> str:
    return "labels=[" + ", ".join(f'"{label.key}"="{label.value}"' for label in labels) + "]"


def _param_text(param: ast.Param) -> str:
    value = f"${param.variable}" if param.variable else (f'"{param.text}"' if param.quoted else param.text)
    return f"{param.connector} {value}" if param.connector else value


@operand_text.register
def _bare(node: ast.Bare) -> str:
    return node.text


@operand_text.register
def _string_list(node: ast.StringList) -> str:
    return "[" + ",".join(_string(item) for item in node.items) + "]"


def _tag_text(tag: ast.Tag) -> str:
    if isinstance(tag.value, ast.Condition):
        return f"with {tag.name} {condition_text(tag.value)}"
    return f"with {tag.name} = {operand_text(tag.value)}"


def _analyzer_tag_text(tag: ast.Tag) -> str:
    assert not isinstance(tag.value, ast.Condition)
    return f"{tag.name} = {operand_text(tag.value)}"


def rule_text(node: ast.RuleNode, *, with_labels: bool = True) -> str:
    """The canonical text of a rule.

    >>> from assay.dqdl import parse
    >>> rule_text(parse('Rules = [ (IsComplete "a")  and  (ColumnValues "b" in [ 1, 2 ]) ]').rules[0])
    '(IsComplete "a") and (ColumnValues "b" in [1,2])'
    """
    if isinstance(node, ast.Composite):
        joined = f" {node.op_text} ".join(_child_text(child) for child in node.children)
        if with_labels and node.labels:
            return f"({joined}) {labels_text(node.labels)}"
        return joined
    parts = [node.type, *(_param_text(p) for p in node.params)]
    if node.condition is not None:
        parts.append(condition_text(node.condition))
    if node.where is not None:
        parts.append(f'where "{node.where.raw}"')
    tags = [_tag_text(tag) for tag in node.tags]
    if with_labels and node.labels:
        if node.labels_first:
            tags.insert(0, labels_text(node.labels))
        else:
            tags.append(labels_text(node.labels))
    return " ".join(parts + tags)


def _child_text(child: ast.RuleNode) -> str:
    if isinstance(child, ast.Composite):
        inner = rule_text(child, with_labels=False)
        return f"({inner}) {labels_text(child.labels)}" if child.labels else f"({inner})"
    return f"({rule_text(child)})"


def analyzer_text(node: ast.Analyzer) -> str:
    """An analyzer's canonical text; tags are written as Glue's documentation writes them.

    >>> from assay.dqdl import parse
    >>> (node,) = parse('Analyzers = [ Distribution "age" with bins = 10 with rebin = false ]').analyzers
    >>> analyzer_text(node)
    'Distribution "age" with bins = 10, rebin = false'
    """
    text = " ".join([node.type, *(_param_text(p) for p in node.params)])
    if node.tags:
        text += " with " + ", ".join(_analyzer_tag_text(tag) for tag in node.tags)
    return text


def ruleset_text(ruleset: ast.Ruleset) -> str:
    """A whole DQDL document, one rule per line.

    >>> from assay.dqdl import parse
    >>> print(ruleset_text(parse('Rules=[RowCount>0,IsComplete "id"]')))
    Rules = [
        RowCount > 0,
        IsComplete "id"
    ]
    """
    lines: list[str] = []
    if ruleset.metadata is not None:
        lines.append("Metadata = " + _dict_text(ruleset.metadata))
    if ruleset.data_sources is not None:
        lines.append("DataSources = " + _dict_text(ruleset.data_sources))
    for constant in ruleset.constants:
        if isinstance(constant.value, ast.StringLit):
            lines.append(f'{constant.name} = "{constant.value.raw}"')
        else:
            lines.append(f"{constant.name} = [" + ", ".join(f'"{s.raw}"' for s in constant.value) + "]")
    if ruleset.default_labels is not None:
        lines.append("DefaultLabels = " + labels_text(ruleset.default_labels).removeprefix("labels="))
    if ruleset.rules is not None:
        lines.append(_list_text("Rules", [rule_text(rule) for rule in ruleset.rules]))
    if ruleset.analyzers is not None:
        lines.append(_list_text("Analyzers", [analyzer_text(a) for a in ruleset.analyzers]))
    return "\n".join(lines)


def _list_text(section: str, items: list[str]) -> str:
    if not items:
        return f"{section} = []"
    return f"{section} = [\n" + ",\n".join(f"    {item}" for item in items) + "\n]"


def _dict_text(pairs: tuple[tuple[str, str | tuple[str, ...]], ...]) -> str:
    rendered = []
    for key, value in pairs:
        if isinstance(value, tuple):
            rendered.append(f'"{key}": [' + ", ".join(f'"{v}"' for v in value) + "]")
        else:
            rendered.append(f'"{key}": "{value}"')
    return "{ " + ", ".join(rendered) + " }"
