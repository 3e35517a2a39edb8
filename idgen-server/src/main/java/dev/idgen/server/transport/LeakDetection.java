package dev.idgen.server.transport;

import io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector;

/**
 * Netty's buffer leak detector, off in a serving process unless the JVM asks for it.
 *
 * <p>At its default level Netty tracks one buffer in 128 and records the stack where each tracked buffer was
 * made and released: a {@code Throwable} filled in per record. A perf profile of idgen under h2load put 6 % of a
 * call's CPU in filling those in, and turning the detector off saved 4–5 µs per call (BENCHMARKS.md, "Netty's
 * leak detector off"); any grpc-java server on Netty pays it. The detector only reports leaks, it prevents
 * none, so it belongs in tests and in a diagnosis, where it is turned on with
 * {@code -Dio.grpc.netty.shaded.io.netty.leakDetection.level=simple} (or {@code advanced}, {@code paranoid}):
 * a level set that way is always left as it is.
 *
 * <p>Thread-safe: Netty's level is one static setting of the process; setting it twice to the same value is
 * harmless.
 */
public final class LeakDetection {
  /** Netty's own property, under gRPC's shaded package. */
  static final String LEVEL_PROPERTY = "io.grpc.netty.shaded.io.netty.leakDetection.level";
  /** The name Netty read before {@link #LEVEL_PROPERTY}, which it still honours. */
  private static final String OLD_LEVEL_PROPERTY = "io.grpc.netty.shaded.io.netty.leakDetectionLevel";

  private LeakDetection() {}

  /** Turns the detector of gRPC's Netty off, unless a level was set through its system property. */
  public static void offUnlessAsked() {
    if (System.getProperty(LEVEL_PROPERTY) == null && System.getProperty(OLD_LEVEL_PROPERTY) == null) {
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }
  }
}
