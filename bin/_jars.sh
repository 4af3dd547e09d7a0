# Sourced at the end of bin/_venv.sh (so by bin/demo and bin/test); also runs alone: `bash bin/_jars.sh`.
# Resolves each jar set of jars/pom.xml (one Maven profile = one set) once into .jars/<set>/
# ($HARNESS_JARS_DIR overrides .jars): Spark's Kafka connector, handed to drivers with spark.jars
# (harness/spark/jars.py), and a Kafka broker for tests (scenarios/kafka/broker.py). A set is fetched
# again only when jars/pom.xml changed (a stamp holds its sha256). Maven's local repository stays
# its default (~/.m2). Nothing is downloaded while tests run. Exits 2 with one line on a problem.
set -euo pipefail
jars_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jars_dir="${HARNESS_JARS_DIR:-$jars_root/.jars}"
jars_pom="$jars_root/jars/pom.xml"
jars_py="${VENV:-$jars_root/.venv}/bin/python"

for jars_tool in java mvn; do
    if ! command -v "$jars_tool" >/dev/null 2>&1; then
        jars_pkg=$([ "$jars_tool" = mvn ] && echo maven || echo openjdk-17-jre-headless)
        echo "set-up: '$jars_tool' not found; the Kafka and Delta jars come from Maven: apt-get install -y $jars_pkg" >&2
        exit 2
    fi
done
if [ ! -x "$jars_py" ]; then
    echo "set-up: no $jars_py to compare Spark versions with; run bin/test (it creates .venv) first" >&2
    exit 2
fi

# The connector must be built for the installed Spark: jars/pom.xml's spark.version == pyspark's.
jars_want_spark="$(sed -n 's:.*<spark\.version>\(.*\)</spark\.version>.*:\1:p' "$jars_pom" | head -n1)"
jars_have_spark="$("$jars_py" -c 'import pyspark; print(pyspark.__version__)')"
if [ "$jars_want_spark" != "$jars_have_spark" ]; then
    echo "set-up: jars/pom.xml has spark.version '$jars_want_spark' but .venv has pyspark $jars_have_spark; make them equal" >&2
    exit 2
fi

jars_stamp="$(sha256sum "$jars_pom" | cut -d' ' -f1)"
# The sets are the profile ids of the pom (read with the standard library's XML parser, comments ignored).
jars_sets="$("$jars_py" - "$jars_pom" <<'PY'
import sys
import xml.etree.ElementTree as ET

ns = {"m": "http://maven.apache.org/POM/4.0.0"}
for profile in ET.parse(sys.argv[1]).getroot().findall("m:profiles/m:profile", ns):
    print(profile.findtext("m:id", namespaces=ns))
PY
)"

mkdir -p "$jars_dir"
exec {jars_lock}>"$jars_dir/.lock"
flock "$jars_lock"  # one resolution at a time (two bin/test runs starting together)
for jars_set in $jars_sets; do
    jars_out="$jars_dir/$jars_set"
    if [ "$(cat "$jars_out/.stamp" 2>/dev/null || true)" = "$jars_stamp" ]; then
        continue
    fi
    printf 'set-up: fetching jar set %s from Maven into %s ... ' "$jars_set" "$jars_out" >&2
    jars_t0=$SECONDS
    jars_tmp="$jars_dir/.$jars_set.tmp"
    jars_log="$jars_dir/$jars_set.mvn.log"
    rm -rf "$jars_tmp"
    if ! mvn -B -q -Dstyle.color=never -f "$jars_pom" -P "$jars_set" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$jars_tmp" </dev/null >"$jars_log" 2>&1; then
        # Maven 3.8 writes colour resets even with -B: strip them from the line shown.
        jars_err="$( (grep -m1 '\[ERROR\]' "$jars_log" || tail -n1 "$jars_log") | sed 's/\x1b\[[0-9;]*m//g')"
        echo "failed" >&2
        echo "set-up: Maven could not resolve jar set $jars_set: ${jars_err:0:300} (full output: $jars_log)" >&2
        exit 2
    fi
    echo "$jars_stamp" > "$jars_tmp/.stamp"
    rm -rf "$jars_out"
    mv "$jars_tmp" "$jars_out"
    rm -f "$jars_log"
    echo "$(ls "$jars_out" | grep -c '\.jar$') jars in $((SECONDS - jars_t0)) s" >&2
done
exec {jars_lock}>&-
