/**
 * HTTP/JSON on {@code idgen.http.port} (docs/http.md): the {@code google.api.http} routes of
 * {@code idgen.v1.IdGen} and {@code idgen.v1.SequenceAdmin}, transcoded by Armeria to the very service
 * definitions the gRPC port serves ({@link PublicServices}), behind the same interceptors: request parsing,
 * access rules, the call-duration limit, the move to the worker pool, the metrics.
 *
 * <p>{@link HttpServer} runs the port and its life cycle; {@link HttpErrors} writes every error as
 * {@code google.rpc.Status} JSON with the HTTP status of its code; {@link CallAttributes} gives the calls
 * the peer's address and TLS session, as gRPC's transport does; {@link HttpSettings} reads the settings.
 *
 * <p>Threads: Armeria's own Netty event loops (unshaded Netty, apart from grpc-netty-shaded's) read the
 * requests and run the calls, as the gRPC port's event loops do; what may block moves to the worker pool.
 */
package dev.idgen.server.http;
