"""The catalogue: the harness's built-in pipelines, one module each (a module defining ``SCENARIO`` is
registered by existing; :func:`scenarios.all_scenarios` scans this package). "correct" pipelines must pass
every schedule; "broken" ones are known at-least-once and must be flagged under the right fault.

Stateless (map/filter of the replayable source):

- ``file_sink_stateless``: parquet file sink; the baseline. Correct.
- ``file_source_json``: Spark's JSON file source instead of the replayable one, parquet file sink. Correct.
- ``file_source_agg``: the windowed aggregation over Spark's JSON file source (``DEDUP``, ``JOIN``: dedup and
  join twins), the pipelines an older PySpark writes in a Spark upgrade run. Correct.
- ``pandas_state_first_seen``: ``applyInPandasWithState`` flagging each key's first row, its state a row count.
  Correct.
- ``kafka_file_sink``: Spark's Kafka source over a topic of a real broker, parquet file sink. Correct.
- ``kafka_sink``: Spark's Kafka sink, read back ``read_committed``. At-least-once, as documented: duplicates.
- ``foreachbatch_sqlite_upsert``: ``foreachBatch`` insert into SQLite with a batch-id ledger. Correct.
- ``foreachbatch_postgres_upsert``: the same pattern into PostgreSQL (a throw-away cluster). Correct.
- ``foreachbatch_append_naive``: ``foreachBatch`` appending parquet, no batch-id dedup. Broken: duplicates.
- ``python_sink_transactional``: Python ``DataSourceStreamWriter`` staging in ``write()``, publishing in
  ``commit()``. Correct.
- ``python_sink_publish_in_write``: Python sink publishing in ``write()``. Broken: duplicates on replay.

Delta Lake (the set-up's Delta jars; every anomaly names the Delta versions involved):

- ``delta_sink_append``: Spark's Delta streaming sink, append. Correct.
- ``delta_source_stream``: a Delta table read as a stream, one version a batch, into the Delta sink. Correct.
- ``foreachbatch_delta_txn``: ``foreachBatch`` Delta append with ``txnAppId``/``txnVersion``. Correct.
- ``foreachbatch_delta_naive``: the same append without the txn options. Broken: duplicates on replay.
- ``foreachbatch_delta_merge``: ``foreachBatch`` ``MERGE`` adding window totals, with the session txn confs.
  Correct.
- ``foreachbatch_delta_merge_no_txn``: the same ``MERGE`` without the session confs. Broken: over-counts a
  replay.
- ``foreachbatch_delta_upsert``: ``foreachBatch`` ``MERGE`` keyed by the row's identity, session txn confs. Correct.
- ``foreachbatch_delta_upsert_split``: the same merge in two commits under one txn version. Broken: Delta skips
  the second commit, most batches lose rows.
- ``foreachbatch_deltars_txn``: ``foreachBatch`` append through delta-rs, its txn version checked first. Correct.
- ``foreachbatch_deltars_unchecked``: the same, the txn never checked. Broken: duplicates on replay.

Stateful:

- ``agg_watermark_append``: 10-s windowed count/sum with a watermark, append mode, parquet file sink. Correct.
- ``agg_watermark_update``: the same aggregation in update mode, SQLite upsert by group + ledger. Correct.
- ``agg_update_naive``: per-batch aggregates added into SQLite without a ledger. Broken: over-counts a replay.
- ``dedup_stream``: ``dropDuplicates`` with a watermark, parquet file sink. Correct.
- ``dedup_within_watermark``: ``dropDuplicatesWithinWatermark``, parquet file sink. Correct.
- ``delta_sink_complete``: the windowed aggregation in complete mode into the Delta streaming sink. Correct.
- ``stream_stream_join``: inner join of two partitions within 5 s, watermarks on both sides. Correct.
- ``tws_sessions``: ``transformWithStateInPandas`` sessions (value/map/list state, event-time timers),
  ``foreachBatch`` SQLite sink. Correct.
- ``tws_sessions_ttl``: ``tws_sessions`` in processing-time mode with a state TTL, no timers. Correct.
- ``tws_sessions_side_store``: ``tws_sessions`` keeping the open session outside Spark's state. Broken: a
  replayed batch is counted into the sessions twice.

Triggers (continuous processing and Real-time Mode besides micro-batches; ``--trigger``, docs/triggers.md):

- ``kafka_to_kafka``: Spark's Kafka source into Spark's Kafka sink under any trigger. At-least-once, as
  documented: duplicates after a kill between an epoch's writes and its commit.
- ``kafka_foreach``: Kafka source into a Python ``foreach`` appending rows (``UPSERT``: each row written under
  its provenance, correct; ``DEDUP``: ``dropDuplicates`` on RocksDB, checkpoint format 2). Broken: duplicates.
- ``rate_continuous``: the ``rate`` source into the Kafka sink in continuous processing (``FOREACH``: into a
  Python ``foreach``, which PySpark cannot run there). At-least-once.

DStreams (``pyspark.streaming`` applications recovered with ``getOrCreate``, docs/dstreams.md):

- ``dstream_foreach``: ``textFileStream`` -> map/filter -> ``foreachRDD`` writing a file per batch time. Correct.
- ``dstream_foreach_naive``: the same, appending every batch to one file. Broken: duplicates on a re-run batch.
- ``dstream_state``: ``updateStateByKey`` totals by group, checkpointed, written whole each batch. Correct.
- ``dstream_state_outside``: per-batch sums added into totals kept outside Spark. Broken: over-counts.
- ``dstream_save_text``: ``saveAsTextFiles``, a directory per batch time. Exactly-once, as documented (measured).
- ``dstream_migrated``: ``dstream_foreach`` moved to Structured Streaming (file source, ``foreachBatch`` by batch
  id; ``NAIVE``: appending). Correct (``NAIVE``: duplicates, the same rows as ``dstream_foreach_naive``'s).

Upgrades (each names its next version, ``V2`` in the same module, as ``upgrade_to``: ``run`` and ``chaos``
deploy it over the same checkpoint and sink, with faults on both sides):

- ``upgrade_filter``: ``file_sink_stateless`` redeployed with a changed filter (the guide: allowed). Correct:
  exactly-once across the deploy.
- ``upgrade_agg_key``: ``agg_watermark_append`` redeployed with one more grouping key (not allowed). Spark refuses
  it at restart: ``upgrade-refused``, ``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE``.
- ``upgrade_agg_function``: the same aggregation redeployed with ``max`` for ``sum`` (not allowed, same state
  schema). Spark resumes: wrong values in the windows open at the deploy.
- ``upgrade_join_condition``: ``stream_stream_join`` redeployed with a wider time range (the guide: ill-defined).
  Spark resumes: pairs lost across the deploy (measured).

The framework these are built from (``Scenario``, sources, row generation, the tap, presets, the sinks they
share) lives in the parent package :mod:`scenarios`; ``docs/scenarios.md`` describes each pipeline in full.
"""
