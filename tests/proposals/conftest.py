from proposals._history import trades_history, weekly_history

__all__ = ["trades_history", "weekly_history"]
