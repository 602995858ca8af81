"""File rules on local paths and S3 objects: FileFreshness, FileSize, FileUniqueness, FileMatch.

Glue runs these on S3 prefixes; assay runs them on a local file or folder (a folder means
every regular file under it) or on ``s3://`` objects (an object, every object under a prefix, or
a glob): sizes and times from the objects' metadata, checksums streamed
(:mod:`assay.lake.storage`). Without a path, the rule reads the data file being evaluated.
Tags: ``recentFiles = N`` keeps the N most recently modified files, ``uriRegex`` keeps paths
matching a pattern (in that order, unless ``filterOrder = ["uriRegex","recentFiles"]``),
``hashAlgorithm`` is MD5, SHA-1 or SHA-256 (the default), and ``matchFileName = "true"``
makes FileMatch compare two folders file by file, by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError
from assay.lake import storage
from assay.lake.checksum import digest
from assay.lang import patterns
from assay.lang.dqdl import ast
from assay.rules import predicates
from assay.rules.plan import Compliance, Context, Fixed, LeafPlan, MetricSpec, RuleError, constant, judged
from assay.store import MetricKey

_HASHES = {"MD5": "md5", "SHA-1": "sha1", "SHA1": "sha1", "SHA-256": "sha256", "SHA256": "sha256"}


@dataclass(frozen=True)
class FileFacts:
    """A file a rule judges: its path or ``s3://`` URL (what ``uriRegex`` matches), its name, size
    and last-modified time (an object's own metadata: nothing is downloaded for them), and its
    checksum, read when a rule asks (an object's streamed, never kept)."""

    uri: str
    name: str
    size: int
    modified: float

    @classmethod
    def local(cls, path: Path) -> FileFacts:
        stat = path.stat()
        return cls(str(path), path.name, stat.st_size, stat.st_mtime)

    def digest(self, algorithm: str) -> str:
        if storage.is_url(self.uri):
            return storage.digest(self.uri, algorithm)
        return digest(Path(self.uri), algorithm)


def _files(rule: ast.Rule, ctx: Context, param: int = 0) -> list[FileFacts]:
    if len(rule.params) > param:
        text = rule.params[param].text
    elif ctx.data_path is not None:
        text = storage.origin(ctx.data_path)  # an s3:// input is judged as its object
    else:
        raise RuleError(f"{rule.type} needs a path when the data is not read from a file")
    if storage.is_url(text):
        try:
            files = [
                FileFacts(o.url, o.url.rsplit("/", 1)[-1], o.size, o.modified) for o in storage.objects(text)
            ]
        except ConfigError as error:
            raise RuleError(error.message) from None
        if not files:
            raise RuleError(f"'{text}' does not exist")
        root = text
    else:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text) and not text.lower().startswith("file://"):
            raise RuleError(f"'{text}' is a remote path; assay's file rules read local paths and s3:// only")
        path = Path(text.removeprefix("file://"))
        if not path.exists():
            raise RuleError(f"'{path}' does not exist")
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        files, root = [FileFacts.local(p) for p in found], str(path)
    for name in _filter_order(rule):
        files = FILTERS[name](rule, files)
    if not files:
        raise RuleError(f"no files found under '{root}'")
    return files


def _by_pattern(rule: ast.Rule, files: list[FileFacts]) -> list[FileFacts]:
    """``uriRegex``: the files whose path contains a match of the (Java) pattern."""
    pattern = rule.tag("uriRegex")
    if not pattern:
        return files
    try:
        regex = patterns.to_python(pattern)
    except patterns.PatternRefused as error:
        raise RuleError(error.message) from None
    return [f for f in files if regex.search(f.uri)]


def _most_recent(rule: ast.Rule, files: list[FileFacts]) -> list[FileFacts]:
    """``recentFiles = N``: the N most recently modified files."""
    recent = rule.tag("recentFiles")
    if not recent:
        return files
    try:
        count = int(recent)
    except ValueError:
        raise RuleError(f"recentFiles must be a whole number, not '{recent}'") from None
    return sorted(files, key=lambda f: f.modified, reverse=True)[:count]


# The file filters by tag name, and the order Glue applies them in unless `filterOrder` says
# otherwise ("the default order applies recentFiles first, then uriRegex").
FILTERS: dict[str, Callable[[ast.Rule, list[FileFacts]], list[FileFacts]]] = {
    "recentFiles": _most_recent,
    "uriRegex": _by_pattern,
}
DEFAULT_ORDER = ("recentFiles", "uriRegex")


def _filter_order(rule: ast.Rule) -> tuple[str, ...]:
    """``with filterOrder = ["uriRegex","recentFiles"]``; filters it leaves out follow in the
    default order."""
    if rule.tag("filterOrder") is not None:
        raise RuleError('filterOrder is a list of tag names, such as ["uriRegex","recentFiles"]')
    order = rule.tag_list("filterOrder")
    if order is None:
        return DEFAULT_ORDER
    unknown = [name for name in order if name not in FILTERS]
    if unknown:
        raise RuleError(f"filterOrder names unknown filter '{unknown[0]}': use {', '.join(FILTERS)}")
    if len(set(order)) < len(order):
        raise RuleError("filterOrder names a filter twice")
    return tuple(order) + tuple(name for name in DEFAULT_ORDER if name not in order)


def _algorithm(rule: ast.Rule) -> str:
    name = (rule.tag("hashAlgorithm") or "SHA-256").upper()
    if name not in _HASHES:
        raise RuleError(f"unknown hashAlgorithm '{name}': use MD5, SHA-1 or SHA-256")
    return _HASHES[name]


def _share_plan(rule: ast.Rule, files: list[FileFacts], passing: int, name: str) -> LeafPlan:
    key = MetricKey.dataset(name)
    metric = MetricSpec(key.key, key, constant(passing / len(files)))
    plan = LeafPlan(rule, [metric], Compliance(metric.display, "files", rule.threshold, key))
    plan.hidden["files"] = MetricSpec("", MetricKey.dataset("FileCount"), constant(float(len(files))))
    return plan


def file_freshness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``FileFreshness "data/" > (now() - 1 days)``: files modified within the window."""
    files = _files(rule, ctx)
    cond = rule.condition
    assert cond is not None
    bounds = [predicates.static_date(o, ctx.now, rule.tag("timeZone")) for o in cond.operands]
    stamps = [bound.timestamp() if bound else None for bound in bounds]
    passing = sum(predicates.python_compare(f.modified, cond.op, stamps) for f in files)
    return _share_plan(rule, files, passing, "FileFreshness.Compliance")


def file_size(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``FileSize < 5 GB``: the share of files whose size satisfies the condition."""
    files = _files(rule, ctx)
    cond = rule.condition
    assert cond is not None
    sizes = [predicates.size_bytes(o) for o in cond.operands]
    passing = sum(predicates.python_compare(float(f.size), cond.op, list(sizes)) for f in files)
    return _share_plan(rule, files, passing, "FileSize.Compliance")


def file_uniqueness(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``FileUniqueness "data/" > 0.9``: the share of files whose content no other file has."""
    files = _files(rule, ctx)
    algorithm = _algorithm(rule)
    digests = [f.digest(algorithm) for f in files]
    unique = sum(1 for d in digests if digests.count(d) == 1)
    key = MetricKey.dataset("FileUniqueness")
    metric = MetricSpec(key.key, key, constant(unique / len(files)))
    return LeafPlan(rule, [metric], judged(rule, metric))


def file_match(rule: ast.Rule, ctx: Context) -> LeafPlan:
    """``FileMatch "a.csv" "b.csv"`` (same content) or ``FileMatch "a.csv" in ["<hash>"]``."""
    algorithm = _algorithm(rule)
    key = MetricKey.dataset("FileMatch")
    if rule.condition is None:
        left, right = _files(rule, ctx, 0), _files(rule, ctx, 1)
        if (rule.tag("matchFileName") or "").lower() == "true":
            by_name = {f.name: f for f in right}
            pairs = [(f, by_name.get(f.name)) for f in left]
        else:
            pairs = list(zip(left, right, strict=False)) if len(left) == len(right) else [(left[0], None)]
        same = [r is not None and f.digest(algorithm) == r.digest(algorithm) for f, r in pairs]
        value = sum(same) / len(same)
        message = None if all(same) else "the files' contents differ"
    else:
        files = _files(rule, ctx)
        hashes = {
            item.value.lower()
            for item in predicates.string_items(rule.condition, ctx.constants)
            if isinstance(item, ast.StringLit)
        }
        found = [f.digest(algorithm) in hashes for f in files]
        if rule.condition.op is ast.Op.NOT_IN:
            found = [not f for f in found]
        value = sum(found) / len(found)
        message = (
            None
            if all(found)
            else f"{len(found) - sum(found)} of {len(found)} files do not satisfy the hash list"
        )
    metric = MetricSpec(key.key, key, constant(value))
    return LeafPlan(rule, [metric], Fixed(value == 1.0, message))
