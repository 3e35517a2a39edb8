package dev.idgen.test;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import javax.annotation.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * A JUnit 5 extension that runs an idgen daemon in the test's JVM, with the sequences a test class names.
 * Use it through {@link IdgenDaemonTest @IdgenDaemonTest(sequences = ...)}, or register it on a static
 * field to reach the daemon from code as well:
 *
 * <pre>{@code
 * @RegisterExtension
 * static IdgenDaemonExtension idgen = IdgenDaemonExtension.withSequences("orders");
 *
 * @Test
 * void should_number_orders() {
 *   OrderService service = new OrderService(idgen.target());   // builds its own client
 * }
 * }</pre>
 *
 * <p>The daemon is the production server on its embedded store, in a new temporary directory, on Netty at
 * 127.0.0.1 and a free port, plaintext. Each sequence is created with the server's defaults (first ID 1). The
 * extension injects, into test methods, lifecycle methods and constructors:
 * <ul>
 *   <li>{@link IdGenClient}: a client connected to the daemon, shared by the class;
 *   <li>{@code @}{@link Sequence}{@code ("name") }{@link IdSource}: that client's source of a named sequence;
 *   <li>{@code @}{@link IdgenTarget}{@code  String}: the daemon's address, {@code 127.0.0.1:<port>}.
 * </ul>
 *
 * <p>The daemon starts before the class's first test and stops after its last: the client is closed, the
 * daemon stopped and its directory deleted. Nested classes share their outer class's daemon when they name
 * the same sequences. IDs go on from test to test within a class: assert on what a test took, not on
 * absolute values.
 *
 * <p>Threads: the daemon lives in the class's {@link ExtensionContext.Store}, created once under the store's
 * own locking; tests that run in parallel share it, as the client is safe for any number of threads. The
 * field {@link #current} only publishes the running daemon to {@link #target()} and {@link #client()}.
 */
@ThreadSafe
public final class IdgenDaemonExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(IdgenDaemonExtension.class);

  /** The sequences given in code, or null: those of the class's {@link IdgenDaemonTest}. */
  @Nullable private final List<String> sequences;
  /** The daemon of the class running now, for {@link #target()} and {@link #client()}. */
  @Nullable private volatile RunningDaemon current;

  /** For {@link IdgenDaemonTest}, which names the sequences. */
  IdgenDaemonExtension() {
    this.sequences = null;
  }

  private IdgenDaemonExtension(List<String> sequences) {
    this.sequences = sequences;
  }

  /**
   * Returns an extension that creates {@code names}, to register on a static field with
   * {@code @RegisterExtension}.
   *
   * @param names the sequences to create, each as {@code IdGenClient.sequence} accepts it
   * @return a new extension
   * @throws IllegalArgumentException if no name is given
   */
  public static IdgenDaemonExtension withSequences(String... names) {
    if (names.length == 0) {
      throw new IllegalArgumentException("sequences: none (expected: at least one name)");
    }
    return new IdgenDaemonExtension(distinct(List.of(names)));
  }

  /**
   * Returns the running daemon's address, {@code 127.0.0.1:<port>}, plaintext.
   *
   * @return the daemon's address
   * @throws IllegalStateException outside the class's tests (before it starts, or after it stopped)
   */
  public String target() {
    return running().target();
  }

  /**
   * Returns the client connected to the running daemon; the extension closes it.
   *
   * @return the class's client
   * @throws IllegalStateException outside the class's tests (before it starts, or after it stopped)
   */
  public IdGenClient client() {
    return running().client();
  }

  /**
   * Returns the client's source of a named sequence.
   *
   * @param name one of the sequences this extension created
   * @return the sequence's source
   * @throws IllegalArgumentException if the extension did not create that sequence
   * @throws IllegalStateException outside the class's tests (before it starts, or after it stopped)
   */
  public IdSource sequence(String name) {
    return running().source(name);
  }

  private RunningDaemon running() {
    RunningDaemon d = current;
    if (d == null) {
      throw new IllegalStateException("the idgen daemon is not started yet: register the extension on a static "
          + "field with @RegisterExtension, and call it from a test or a @BeforeEach method");
    }
    return d;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    current = daemon(context);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    current = daemon(context); // an extension on an instance field is not called before all
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == IdGenClient.class
        || (type == IdSource.class && parameterContext.isAnnotated(Sequence.class))
        || (type == String.class && parameterContext.isAnnotated(IdgenTarget.class));
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Parameter p = parameterContext.getParameter();
    RunningDaemon d = daemon(extensionContext);
    if (p.getType() == IdGenClient.class) {
      return d.client();
    }
    if (p.getType() == String.class) {
      return d.target();
    }
    String name = parameterContext.findAnnotation(Sequence.class).orElseThrow().value();
    try {
      return d.source(name);
    } catch (IllegalArgumentException e) {
      throw new ParameterResolutionException("@Sequence(\"" + name + "\") on a parameter of "
          + parameterContext.getDeclaringExecutable().getName() + ": " + e.getMessage(), e);
    }
  }

  /** The class's daemon, started on first use in the store of the class (not of a test method). */
  private RunningDaemon daemon(ExtensionContext context) {
    ExtensionContext classContext = context;
    while (classContext.getTestMethod().isPresent() && classContext.getParent().isPresent()) {
      classContext = classContext.getParent().orElseThrow();
    }
    List<String> names = sequences != null ? sequences : annotated(classContext);
    return classContext.getStore(NAMESPACE)
        .getOrComputeIfAbsent(names, n -> RunningDaemon.start(names), RunningDaemon.class);
  }

  /** The sequences of the nearest {@link IdgenDaemonTest}, on the class or a class that encloses it. */
  private static List<String> annotated(ExtensionContext context) {
    Optional<Class<?>> type = context.getTestClass();
    for (Class<?> c = type.orElse(null); c != null; c = c.getEnclosingClass()) {
      Optional<IdgenDaemonTest> a = AnnotationSupport.findAnnotation(c, IdgenDaemonTest.class);
      if (a.isPresent()) {
        if (a.get().sequences().length == 0) {
          throw new ExtensionConfigurationException("@IdgenDaemonTest on " + c.getName()
              + " names no sequence: give at least one, as in @IdgenDaemonTest(sequences = \"orders\")");
        }
        return distinct(List.of(a.get().sequences()));
      }
    }
    throw new ExtensionConfigurationException("IdgenDaemonExtension on " + type.map(Class::getName).orElse("?")
        + " has no sequences: annotate the class with @IdgenDaemonTest(sequences = ...), or register "
        + "IdgenDaemonExtension.withSequences(...) with @RegisterExtension");
  }

  private static List<String> distinct(List<String> names) {
    return List.copyOf(new ArrayList<>(new LinkedHashSet<>(names)));
  }
}
