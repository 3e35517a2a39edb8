/**
 * Internal: what every room of the allocator shares, so that none of them imports the allocator
 * ({@link dev.idgen.core.internal.Daemons}: its daemon threads and its log category). No other module uses it;
 * it changes without notice.
 *
 * <p>Threads: stateless.
 */
package dev.idgen.core.internal;
