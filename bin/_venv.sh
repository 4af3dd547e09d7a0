# Sourced by bin/demo and bin/test: make sure Java 17 is present, .venv is
# created and up to date with pyproject.toml, and `harness setup` has filled the
# user's cache (jars, class-data archive), as a user's own project does it.
# Prints what it does; exits 2 on a set-up problem with a message saying how to fix it.
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
# The jars of the installed PySpark (Spark's Kafka connector, Delta Lake, a test Kafka broker), resolved
# from Maven Central with the Ivy jar PySpark ships (no Maven needed; ~45 s the first time), and the
# driver's class-data archive (~40 s once), into the user's cache ($HARNESS_CACHE_DIR, else ~/.cache):
# the same command a user runs in their own project. A no-op when the cache is complete.
"$VENV/bin/python" -m harness setup
# Bytecode of the checkout's own modules, written even where PYTHONDONTWRITEBYTECODE is set (CI images set it,
# and then no import writes any): every process a run starts imports them (a driver, each query's Python
# source runner, a CLI command), 0.1-0.25 s more a process when compiled from source (measured). About 2 s;
# Python checks each file's mtime, so a stale one is never used. Not fatal: without it imports compile.
if ! compiled="$("$VENV/bin/python" -m compileall -q -j 0 harness scenarios fault_injectors examples tests \
        conftest.py 2>&1)"; then
    echo "set-up: could not write the modules' bytecode (each process compiles them at import):" >&2
    echo "$compiled" | tail -n 5 >&2
fi
