# Sourced by bin/demo and bin/test: make sure Java 17 is present, .venv is
# created and up to date with pyproject.toml, and the Maven jars are in .jars/
# (bin/_jars.sh). Prints what it does; exits 2 on
# a set-up problem with a message saying how to fix it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${HARNESS_PYTHON:-python3}"

if ! command -v java >/dev/null 2>&1; then
    echo "set-up: 'java' not found. PySpark 4.2 needs Java 17:" >&2
    echo "        apt-get update && apt-get install -y openjdk-17-jre-headless" >&2
    exit 2
fi
java_major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
if [ -z "$java_major" ] || [ "$java_major" -lt 17 ]; then
    echo "set-up: found Java '${java_major:-unknown}', PySpark 4.2 needs Java 17 or newer:" >&2
    echo "        apt-get update && apt-get install -y openjdk-17-jre-headless" >&2
    exit 2
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    echo "set-up: '$PY' is not Python >= 3.11; set HARNESS_PYTHON to one." >&2
    exit 2
fi

stamp_want="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
stamp_file="$VENV/.harness-stamp"
if [ ! -x "$VENV/bin/python" ]; then
    echo "set-up: creating $VENV (first time: ~1 min, pyspark is built locally)" >&2
    "$PY" -m venv "$VENV"
fi
if [ "$(cat "$stamp_file" 2>/dev/null || true)" != "$stamp_want" ]; then
    echo "set-up: installing the project and its dependencies into $VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2 || true
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[dev]" >&2
    echo "$stamp_want" > "$stamp_file"
fi
export PATH="$VENV/bin:$PATH"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
export PYSPARK_PYTHON="$VENV/bin/python"
export PYSPARK_DRIVER_PYTHON="$VENV/bin/python"
# Drivers start ~2 s faster from a JVM class-data archive of Spark, built once per
# .venv (~40 s; harness/spark/cds_build.py). Without it everything still works, only slower.
"$VENV/bin/python" -m harness.spark.cds_build || echo "set-up: continuing without the driver class-data archive" >&2
# Jars from Maven (Spark's Kafka connector, Delta Lake, a test Kafka broker) into .jars/, resolved once per
# jars/pom.xml (~30 s the first time; bin/_jars.sh).
source "$ROOT/bin/_jars.sh"
