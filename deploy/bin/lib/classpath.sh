# Sourced by the deploy/bin/bench-* scripts (needs $root and a die function).
# module_classpath MODULE: builds MODULE and what it depends on (offline first, then online), and
# prints a classpath with its classes, its test classes and every dependency of test scope.
# BENCH_MVN_ARGS: extra Maven arguments (e.g. -Dmaven.repo.local=...).
module_classpath() {
  local m=$1 f="$root/$1/target/bench.classpath"
  # shellcheck disable=SC2086
  (cd "$root" && mvn -q -B -o ${BENCH_MVN_ARGS:-} -pl "$m" -am install -DskipTests dependency:build-classpath \
      -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test) >/dev/null 2>&1 \
    || (cd "$root" && mvn -q -B ${BENCH_MVN_ARGS:-} -pl "$m" -am install -DskipTests dependency:build-classpath \
      -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test) >&2 \
    || die "build of $m failed"
  echo "$root/$m/target/classes:$root/$m/target/test-classes:$(cat "$f")"
}
