/**
 * The test kit for applications that use idgen: {@link dev.idgen.test.InMemoryIdSource} (and
 * {@link dev.idgen.test.InMemoryIdSources} by name) for unit tests without a server, and
 * {@link dev.idgen.test.IdgenDaemonTest} ({@link dev.idgen.test.IdgenDaemonExtension}) for tests against a real
 * daemon in the test's JVM. Add {@code dev.idgen:idgen-test} in test scope; see docs/testing.md.
 *
 * <p>The public surface is those classes and the parameter annotations {@link dev.idgen.test.Sequence} and
 * {@link dev.idgen.test.IdgenTarget}; everything else in this package is package-private and free to change.
 */
package dev.idgen.test;
