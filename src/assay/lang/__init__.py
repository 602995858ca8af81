"""The rule languages: DQDL (tokens, parser, tree, printer) and the safe SQL-expression subset."""
