/**
 * The daemon, wired: {@link dev.idgen.server.Main} (the {@code idgen-server} command) reads the
 * configuration and builds the object graph of {@code Wiring}, one Guice module per concern: the settings,
 * a store ({@code EmbeddedStoreModule} or {@code CassandraStoreModule}), the allocator over it
 * ({@code AllocatorModule}), what an operator runs it with ({@code OperationsModule}, which installs the
 * rooms' own modules) and the gRPC server ({@code GrpcModule}, which puts the services of {@code api}
 * behind the interceptors of {@code metrics}, {@code access} and {@code transport}). {@code IdGenServer}
 * runs it: start, the steps of a graceful shutdown, and the life cycle of the components.
 * {@link dev.idgen.server.EmbeddedDaemon} starts the same graph in-process for other modules.
 *
 * <p>The design, top down: the services ({@code api}) over the core's allocator over a store; beside
 * them, rooms that know nothing of one another's insides: {@code transport} (Netty, TLS, call limits,
 * threads), {@code access} (identities and rules), {@code metrics} (meters, monitor, endpoint); below all
 * of them, {@code config} (plain settings values), {@code status} (error statuses with their
 * {@code google.rpc} details) and {@code lifecycle} ({@code ServerComponent},
 * {@code PeriodicTask}: in a package of their own, at the bottom, because every room contributes
 * components and this package, which collects them, sits on top).
 *
 * <p>Imports flow downhill only: this package may use every other; {@code api} uses {@code transport},
 * {@code metrics}, {@code config} and {@code status}; {@code transport}, {@code access} and {@code metrics}
 * use {@code config}, {@code status} and {@code lifecycle}; {@code config}, {@code status} and
 * {@code lifecycle} use none. Nothing uses this
 * package. Classes are package-private unless another package needs them.
 */
package dev.idgen.server;
