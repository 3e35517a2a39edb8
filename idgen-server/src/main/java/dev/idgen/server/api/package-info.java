/**
 * The gRPC API: {@link dev.idgen.server.api.IdGenService} ({@code idgen.v1.IdGen}, allocation) and
 * {@link dev.idgen.server.api.SequenceAdminService} ({@code idgen.v1.SequenceAdmin}), both over the
 * core's {@code Allocator}; and what only they need: the one mapping from exceptions to statuses
 * ({@code StatusMapper}), the conversions between the core's values and the {@code idgen.v1} messages
 * ({@code SequenceMessages}), and the guard that answers requests whose bytes do not parse
 * ({@link dev.idgen.server.api.RequestParsing}).
 *
 * <p>The top room: it may use {@code config} (the wait budget), {@code metrics} (abandoned IDs),
 * {@code status} (the error details) and {@code transport} (the worker pool that waiting calls move to), and nothing of access control or the
 * wiring. Nothing but the wiring ({@code dev.idgen.server}) uses it. Public: the two services and the
 * request guard, which the gRPC module assembles.
 */
package dev.idgen.server.api;
