#!/usr/bin/env bash
#
# give-back-rate.sh - how fast a graceful stop gives reserves back (SCALING.md, "Stop"): one server on the
# embedded store, N sequences created and loaded (one 1-ID Allocate each), then SIGTERM. Prints the server's own
# line "gave back the reserves of N sequence(s), X IDs, in T ms" (idgen.shutdown.give-back-deadline is set to
# 10 minutes here, so that nothing is cut short) and the rate in sequences per second.
#
#   give-back-rate.sh [N]     default: 10000 sequences
#
# Needs the shaded server jar (./mvnw -pl idgen-server -am package -DskipTests; or IDGEN_SERVER_JAR), python3
# and java 17. Everything runs on 127.0.0.1 in a temporary directory and is stopped on exit.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
N="${1:-10000}"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "usage: give-back-rate.sh [N]" >&2; exit 2; }
JAR="${IDGEN_SERVER_JAR:-$(ls "$REPO_ROOT"/idgen-server/target/idgen-server-*-all.jar 2>/dev/null | head -1)}"
[[ -f "$JAR" ]] || { echo "no server jar: ./mvnw -pl idgen-server -am package -DskipTests" >&2; exit 2; }
WORK="$(mktemp -d)"
PID=""
trap '[[ -n "$PID" ]] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

java -Xmx1g -Didgen.store=embedded -Didgen.embedded.dir="$WORK/data" -Didgen.grpc.host=127.0.0.1 \
  -Didgen.grpc.port="$PORT" -Didgen.metrics.enabled=false -Didgen.shutdown.quiet-period=0s \
  -Didgen.shutdown.give-back-deadline=10m -jar "$JAR" >"$WORK/server.log" 2>&1 &
PID=$!

# Creates and loads the sequences, 32 calls at once; waits (at most 2 minutes) for the server to answer first.
cat >"$WORK/Load.java" <<'JAVA'
import dev.idgen.api.v1.*;
import io.grpc.*;
import java.util.concurrent.*;

public class Load {
  public static void main(String[] a) throws Exception {
    ManagedChannel ch = Grpc.newChannelBuilder(a[0], InsecureChannelCredentials.create()).build();
    int n = Integer.parseInt(a[1]);
    long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      try {
        SequenceAdminGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
            .listSequences(ListSequencesRequest.getDefaultInstance());
        break;
      } catch (StatusRuntimeException e) {
        if (System.nanoTime() > until) throw e;
        Thread.sleep(200); // the server is starting: nothing to wait on but its port
      }
    }
    ExecutorService pool = Executors.newFixedThreadPool(32);
    java.util.List<Future<?>> done = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name = "gb-" + i;
      done.add(pool.submit(() -> {
        SequenceAdminGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS)
            .createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
        IdGenGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(name).setCount(1).build()).forEachRemaining(r -> {});
        return null;
      }));
    }
    for (Future<?> f : done) f.get(10, TimeUnit.MINUTES);
    pool.shutdown();
    ch.shutdownNow();
  }
}
JAVA
java -Xmx512m -cp "$JAR" "$WORK/Load.java" "127.0.0.1:$PORT" "$N"
kill -TERM "$PID"
timeout 900 tail --pid="$PID" -f /dev/null
PID=""
line="$(grep -o 'gave back the reserves of .*' "$WORK/server.log")" || { cat "$WORK/server.log" >&2; exit 1; }
echo "$line"
awk -v l="$line" 'BEGIN { split(l, w, " "); printf "%.0f sequences/s\n", w[6] / (w[11] / 1000) }'
