"""A dataset's settings file, ``checks/<dataset>.yaml``: a check document (``kind:
DatasetChecks``), which owns the dataset's owners, tier, monitor and gate settings, or a plain
file of the monitor's settings with an optional ``gate:`` section. Either way the monitor gets
its settings as one value (:class:`assay.monitor.DatasetConfig`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from assay.errors import ConfigError
from assay.gate.config import GateConfig
from assay.monitor.settings import DatasetConfig, from_document


def load_config(path: Path) -> DatasetConfig:
    """Read a dataset's settings file; a mistake is a ConfigError naming the file and field.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "trades.yaml"
    >>> _ = path.write_text("window: weekday:4\\ngate: {key: id, order: day}\\n")
    >>> config = load_config(path)
    >>> config.window, config.gate
    ('weekday:4', {'key': 'id', 'order': 'day'})
    """
    # here: a dataset without a file (the common case of `assay profile`) never needs YAML
    from assay.lang import yamlsafe

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {' '.join(str(error).split())}") from None
    document = yamlsafe.load(text, filename=str(path)) or {}
    if isinstance(document, dict) and document.get("kind") == "DatasetChecks":
        # A check document is the dataset's home: the monitor reads its monitor: and gate:
        # sections, owners and tier (docs/checks.md).
        from assay.platform.checks.document import load_document

        config: DatasetConfig = load_document(path).monitor_config()
        return config
    config = from_document(document, path)
    if config.gate is not None:  # the gate's section, validated by the gate's own model
        try:
            GateConfig.model_validate(config.gate)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, ('gate', *e['loc'])))}: {e['msg']}" for e in error.errors()
            )
            raise ConfigError(f"{path}: {problems}") from None
    return config
