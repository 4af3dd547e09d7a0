"""The sink conformance kit: checks for a Python streaming sink (a ``DataSource`` with a stream writer, or a
``foreachBatch`` function). A sink check runs, in order:

1. ``checks``: the writer protocol, with Spark's side simulated in process (``task_sim``): writes, replays,
   retries and aborts;
2. ``campaign`` (``crash-points``): one harness run with a kill at each crash point, the sink wrapped as a
   scenario (``scenario``);
3. ``steps`` (``crash-anywhere``): a kill at each effect boundary of the sink's own code.

``suite`` runs them and judges the declared guarantee, behind ``check-sink`` and the pytest kit.
"""
