package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.secs;

/** A run of IDs of a batch a stub handed out: asked for at {@code askedNanos}, handed out by {@code handedNanos}. */
record ServedRun(int client, long askedNanos, long handedNanos, long first, long count, long stride) {
  String describe() {
    return "client-" + client + " stub batch run first=" + first + " count=" + count + " stride=" + stride
        + " asked " + secs(askedNanos) + " handed " + secs(handedNanos);
  }
}
