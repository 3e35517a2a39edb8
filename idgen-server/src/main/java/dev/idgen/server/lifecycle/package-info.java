/**
 * The life cycle of the daemon's parts: {@link dev.idgen.server.lifecycle.ServerComponent}, what the
 * running server starts after the gRPC port and closes after the allocator and the store, and
 * {@link dev.idgen.server.lifecycle.PeriodicTask}, the one daemon-thread schedule that the components'
 * reloaders and monitors run on.
 *
 * <p>The bottom of the server: it uses nothing of the other packages, so that every room (transport,
 * access, metrics) can contribute components, and the wiring on top ({@code dev.idgen.server}) collects
 * them. It holds no wiring itself.
 */
package dev.idgen.server.lifecycle;
