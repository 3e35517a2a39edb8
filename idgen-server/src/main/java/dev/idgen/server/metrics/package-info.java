/**
 * What the daemon reports about itself ({@code idgen.metrics}, {@code idgen.alarms}): the meters of the
 * request path ({@link dev.idgen.server.metrics.IdGenMetrics}; the metrics layer of every gRPC call,
 * {@link dev.idgen.server.metrics.GrpcCallMetrics}: Micrometer's per-RPC meters and the Allocate counters by
 * sequence; the timed reservations of the store the
 * allocator sees), the per-sequence gauges and alarm log lines of the
 * {@link dev.idgen.server.metrics.SequenceMonitor}, and {@code GET /metrics}
 * ({@link dev.idgen.server.metrics.MetricsHttpServer}, the Prometheus client's own HTTP server). {@link dev.idgen.server.metrics.MetricsModule}
 * binds them.
 *
 * <p>Uses the core (the allocator's and the stores' counters), {@code config} and {@code lifecycle};
 * knows nothing of the services, the transport or access control. Public: {@code IdGenMetrics} (the
 * service records abandoned IDs into it; the allocator module meters the store with it), the metrics
 * layer (the gRPC module installs it) and the module.
 */
package dev.idgen.server.metrics;
