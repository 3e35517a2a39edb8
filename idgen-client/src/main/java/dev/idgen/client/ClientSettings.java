package dev.idgen.client;

/**
 * The validated, immutable settings every source of one client shares (see {@link IdGenClientBuilder}
 * for their meaning and defaults).
 */
record ClientSettings(
    String name,
    long callDeadlineNanos,
    long waitDeadlineNanos,
    long minLeaseSize,
    long maxLeaseSize,
    long leaseLifetimeNanos,
    long initialBackoffNanos,
    long maxBackoffNanos,
    Ticker ticker) {}
