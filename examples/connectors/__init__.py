"""Example connectors for the conformance kit (``python -m harness check-source`` / ``check-sink``).

A small external system (:mod:`examples.connectors._jsonl`: append-only JSON-lines
files per partition, with its external context) and connectors over it:

- :mod:`~examples.connectors.jsonl_source`: correct sources (a partitioned
  ``DataSourceStreamReader`` and a ``SimpleDataSourceStreamReader``) that pass every check;
- :mod:`~examples.connectors.rate_like_source`: a correct source without a context whose data
  arrives by itself (like Spark's ``rate`` source), and its broken twin
  :mod:`~examples.connectors.counts_from_zero` (caught by ``latest-offset-behind-checkpoint``);
- deliberately broken ones, each with one bug and the check that must catch it
  (the module docstring says which): ``overlapping_partitions``, ``unseeded_data``,
  ``latest_offset_from_zero``, ``empty_read_between``, ``hash_ordered_offsets``
  (sources); ``publish_in_write_sink``, ``attempt_keyed_sink``, and two whose bug lies between two
  statements of their own code, caught by ``crash-anywhere`` only: ``two_txn_foreach_batch``,
  ``rename_one_by_one_sink`` (sinks).

The reference source is ``scenarios.replayable_source:ReplayableDataSource``
(context ``harness.sources.contexts:replayable_context``); the reference
sinks are in ``scenarios/sinks``.
"""
