"""Certify: the guarantee each of Spark's built-in sources and sinks (and Delta Lake's writers, ``delta``) shows
under real SIGKILLs, next to the one its documentation states. ``command`` (``python -m harness certify``)
measures each row with ``runs`` (the sinks through the harness runner on ``scenarios`` where none exists
elsewhere, the sources through the source kit's end-to-end runs), compares with ``documented``, and renders
text, JSON or ``html``.
"""
