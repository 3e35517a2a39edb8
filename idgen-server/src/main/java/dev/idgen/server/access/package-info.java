/**
 * Access control ({@code idgen.access}): who a caller is (the identities of its verified client
 * certificate and of its bearer token, {@link dev.idgen.server.access.BearerTokens}, whose files are
 * reloaded when they change) and what it may do ({@link dev.idgen.server.access.AccessInterceptor}, which
 * applies the configured rules to each call's sequence). {@link dev.idgen.server.access.AccessModule}
 * binds them.
 *
 * <p>Uses {@code config} (the rules and tokens as plain values), {@code status} (the refusals' details) and
 * {@code lifecycle}; not {@code api}:
 * the interceptor knows the services by their generated names and request messages, not by the
 * implementations. Public: the interceptor (the gRPC module installs it) and the module.
 */
package dev.idgen.server.access;
