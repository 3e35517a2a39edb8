package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code advance-burst}: a burst of concurrent advances of its own ({@link AdvanceBursts}), drawn here and run
 * beside the fault thread, which goes on at once. (Every fault that {@link Fault.Trait#HOLDS} also brings one
 * along, while it holds.) Loses nothing counted: IDs at or below the highest floor are out of the reckoning.
 *
 * <p>Threads: drawn on the fault thread; its cursor read and its calls made on the advance pool.
 */
final class AdvanceBurstFault extends BasicFault {
  AdvanceBurstFault() {
    super("advance-burst", 2, Set.of());
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) {
    run.bursts().startAlone(run.bursts().plan("", run.faultNo(), run.random()));
  }
}
