package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.secs;

/**
 * A range a client received, as recorded: {@code server} is the slot it came from (-1: not recorded); its call's
 * start decides "after an advance", the time it was read is for people.
 */
record ReceivedRange(int client, int server, long callStartNanos, long receivedNanos, long first, long count,
    long stride) {
  String describe() {
    return "client-" + client + " " + (server < 0 ? "server ?" : "server-" + server) + " range first="
        + first + " count=" + count + " stride=" + stride + " call started " + secs(callStartNanos)
        + " read " + secs(receivedNanos);
  }
}
