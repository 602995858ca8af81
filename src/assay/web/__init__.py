"""The web control plane: ``assay serve``.

A FastAPI application with server-rendered pages and a JSON API under ``/api/v1``. Every page is
drawn from the same read model the API returns (:mod:`assay.web.views`), so a page and its JSON
never disagree. The routes only parse, check the caller's role, call the package and render
(docs/web.md).
"""
