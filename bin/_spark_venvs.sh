# Sourced with ROOT and PY set (bin/test-spark-upgrade after bin/_venv.sh; bin/test in a background job while
# set-up runs, then again to export the interpreters): builds one virtual environment per older PySpark
# under .venv-spark/<version>/ (pyspark, pyarrow and pandas<3 from PyPI; nothing else), once per version.
# These write the checkpoints the project's PySpark resumes (docs/upgrades.md, "Spark upgrades").
# HARNESS_OLD_SPARKS overrides the versions (space-separated). Exports HARNESS_OLD_SPARK_PYTHONS:
# "version=python ..." for the tests.
OLD_SPARKS="${HARNESS_OLD_SPARKS:-3.5.9 4.0.5}"
HARNESS_OLD_SPARK_PYTHONS=""
for version in $OLD_SPARKS; do
    dir="$ROOT/.venv-spark/$version"
    if [ ! -x "$dir/bin/python" ] || [ "$(cat "$dir/.harness-stamp" 2>/dev/null || true)" != "$version" ]; then
        echo "set-up: building $dir (PySpark $version from PyPI; first time ~1-2 min)" >&2
        rm -rf "$dir"
        "$PY" -m venv "$dir"
        "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
            "pyspark==$version" "pyarrow>=15" "pandas<3" >&2
        echo "$version" > "$dir/.harness-stamp"
    fi
    HARNESS_OLD_SPARK_PYTHONS="$HARNESS_OLD_SPARK_PYTHONS $version=$dir/bin/python"
done
export HARNESS_OLD_SPARK_PYTHONS="${HARNESS_OLD_SPARK_PYTHONS# }"
