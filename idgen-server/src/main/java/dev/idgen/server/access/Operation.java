package dev.idgen.server.access;

/**
 * What a call does to its sequence: {@code idgen.v1.IdGen} allocates, {@code idgen.v1.SequenceAdmin}
 * administers.
 */
enum Operation {
  ALLOCATE("allocate from"),
  ADMIN("administer");

  /** As the refusal's description says it: "identity 'x' may not allocate from sequence 'y'". */
  final String verb;

  Operation(String verb) {
    this.verb = verb;
  }
}
