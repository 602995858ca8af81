"""Table storage and file reading: data sources for the engine, Iceberg tables, quarantine files."""
