"""The ovreduce REST API: ``create_app()`` in :mod:`api.main`; ``ovreduce serve`` runs it with uvicorn."""
