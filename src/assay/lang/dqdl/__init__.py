"""AWS Glue's Data Quality Definition Language: lexer, parser, syntax tree, printer."""

from assay.lang.dqdl.errors import DQDLSyntaxError, DQDLWarning
from assay.lang.dqdl.parser import ParseResult, parse_text
from assay.lang.dqdl.printer import rule_text, ruleset_text

__all__ = ["DQDLSyntaxError", "DQDLWarning", "ParseResult", "parse_text", "rule_text", "ruleset_text"]
