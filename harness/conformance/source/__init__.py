"""The source conformance kit: checks for a Python streaming ``DataSource``. A source check runs, in order:

1. ``probe``: plays a short fixed story against fresh readers (``crossproc``: reading in another process, as
   Spark does; ``offsets``: offsets as the JVM sees them) and records what it saw, once per source;
2. ``checks`` (with ``offset_checks``): pure judgements of the probe, no Spark;
3. ``e2e``: the source under real SIGKILLs feeding the parquet file sink (``run`` plays the rounds on the
   engine's driver pool; ``query`` is the handler the child driver opens for such a run directory);
4. ``campaign``: Hypothesis draws schedules of data and kills (``schedule``) and keeps the failing example as a
   replayable ``bundle``.

``suite`` runs steps 1 to 3 behind ``check-source`` and the pytest kit; the campaign is ``chaos --source``.
"""
