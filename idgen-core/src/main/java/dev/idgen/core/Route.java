package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.List;

/**
 * What a server does with one {@code Allocate} call, decided in one place ({@link Allocator#route}), without
 * blocking and without store I/O, so that it can be asked on a network thread: here are the IDs
 * ({@link Served}), send the call to the strict sequence's owner ({@link Forward}), or run it where it may
 * wait ({@link #WAIT}: {@link Allocator#allocate} on a worker, which loads, waits for a reserve, claims an
 * owner lease or says what is wrong).
 */
public sealed interface Route permits Route.Served, Route.Forward, Route.Wait {
  /** The call must wait or touch the store. */
  Wait WAIT = new Wait();

  /** The call's IDs, from memory. */
  record Served(List<IdRange> ranges) implements Route {}

  /** The call belongs to the owner of a strict sequence, at this gRPC target. */
  @Immutable
  record Forward(String target) implements Route {}

  /** See {@link #WAIT}. */
  @Immutable
  final class Wait implements Route {
    private Wait() {}
  }
}
