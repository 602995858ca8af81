"""The server-rendered pages: each one draws the JSON its API route returns (the same read model)
with a Jinja2 template; forms post back here, carry the session's CSRF token, and answer with a
redirect (or, for the check editor, the page with its result). htmx enhances some of them (a
filter that updates as you type, a dry run shown in place); every page works without scripts.
"""

from __future__ import annotations

from fastapi import APIRouter

from assay.web.pages import datasets, editor, operations, session, users
from assay.web.pages.frame import error_page, login_url

__all__ = ["error_page", "login_url", "router"]

router = APIRouter(include_in_schema=False)
for _area in (session, datasets, editor, operations, users):
    router.include_router(_area.router)
