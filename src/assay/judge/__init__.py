"""Judgement: outcomes from measured metrics, stored history and anomaly models."""
