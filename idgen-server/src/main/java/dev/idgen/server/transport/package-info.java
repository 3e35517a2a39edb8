/**
 * How calls reach the services: the Netty server and its connection limits
 * ({@link dev.idgen.server.transport.ServerTransport}; Netty's buffer leak detector off unless asked for,
 * {@link dev.idgen.server.transport.LeakDetection}), the port's credentials
 * ({@link dev.idgen.server.transport.TlsCredentials}, reloaded when the files change), the server-side
 * call deadline ({@link dev.idgen.server.transport.CallDurationLimit}), and the threads: the
 * {@link dev.idgen.server.transport.WorkerPool} for work that may block and the
 * {@link dev.idgen.server.transport.OffloadInterceptor} that moves a service's calls there, and
 * {@link dev.idgen.server.transport.NetworkThreads}, the network thread a call runs on.
 * {@link dev.idgen.server.transport.TransportModule} binds them.
 *
 * <p>Uses {@code config}, {@code status} (the statuses of a refused or overlong call) and {@code lifecycle}
 * only; knows nothing of the services, access rules or
 * meters. Public: what the gRPC module composes (the transport, the credentials, the interceptors, the
 * pool, which {@code api} hands waiting calls to, the network threads, which {@code api} hands answers back to,
 * the leak detector's setting, which the bench's bare server shares) and the module.
 */
package dev.idgen.server.transport;
