package dev.idgen.core;

/**
 * How the IDs of one sequence are ordered across servers; set at creation, never changed.
 *
 * <p>{@link #PER_SERVER} (the default): every server hands out increasing IDs from the blocks it reserved,
 * with no I/O on the request path; two servers hand out interleaved ranges. {@link #STRICT}: every ID
 * handed out is larger than every ID whose allocation completed before this one started, whichever
 * server either reached; one owner server of the sequence's home datacenter serves it, other servers
 * forward to it ({@link OwnerRecord}).
 */
public enum Ordering {
  PER_SERVER,
  STRICT
}
