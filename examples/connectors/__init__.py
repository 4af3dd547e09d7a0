"""Example connectors for the conformance kit (``python -m harness check-source`` / ``check-sink``).

A small external system (:mod:`examples.connectors._jsonl`: append-only JSON-lines
files per partition, with its external context) and connectors over it:

- :mod:`~examples.connectors.jsonl_source`: correct sources (a partitioned
  ``DataSourceStreamReader`` and a ``SimpleDataSourceStreamReader``) that pass every check;
- :mod:`~examples.connectors.rate_like_source`: a correct source without a context whose data
  arrives by itself (like Spark's ``rate`` source), and its broken twin
  :mod:`~examples.connectors.counts_from_zero` (caught by ``latest-offset-behind-checkpoint``);
- correct and unusual subjects, each of a class the others are not, that pass every check:
  ``per_call_counter`` (a fixed step per ``latestOffset`` call, no context), ``clock_ticks``
  (``initialOffset()`` is the current tick), ``growing_partitions`` (partitions appear over time),
  ``arrow_batches`` (``read()`` yields pyarrow batches), ``capped_batches`` (a ``ReadMaxRows``
  default limit), ``cached_reads`` (a process-wide read cache) (sources);
  ``message_carried_sink`` (rows travel in the commit messages) and ``streamed_staging_sink``
  (rows streamed to staging files, published by name) (sinks);
- deliberately broken ones, each with one bug and the check that must catch it
  (the module docstring says which): ``overlapping_partitions``, ``unseeded_data``,
  ``latest_offset_from_zero``, ``empty_read_between``, ``hash_ordered_offsets``, and one bug away
  from the unusual ones ``per_call_counter_from_zero``, ``int_key_offsets``, ``ignores_read_limit``,
  ``draining_cache`` (sources); ``publish_in_write_sink``, ``attempt_keyed_sink``,
  ``message_append_sink``, ``staging_glob_sink``, and three whose bug lies between two statements
  of their own code, caught by ``crash-anywhere`` only: ``two_txn_foreach_batch``,
  ``two_txn_row_fields`` (200-row batches read field by field) and ``rename_one_by_one_sink`` (sinks).

``tests/example_table.py`` and ``tests/example_table_sinks.py`` list every example with its expected
status per check: a change to a check shows both error rates at once.

The reference source is ``scenarios.replayable_source:ReplayableDataSource``
(context ``harness.sources.contexts:replayable_context``); the reference
sinks are in ``scenarios/sinks``.
"""
