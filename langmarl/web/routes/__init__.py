"""The API's routes, one module per area; each defines ``router`` (mounted under ``/api``)."""
