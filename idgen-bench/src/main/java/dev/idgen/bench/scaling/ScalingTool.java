package dev.idgen.bench.scaling;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code idgen-scaling}: the helpers of the scaling curves (SCALING.md), run by the scenario scripts
 * {@code idgen-bench/scenarios/scaling-*.sh} from the load generator's jar:
 *
 * <pre>
 *   java -cp idgen-bench/target/idgen-bench-*-loadgen.jar dev.idgen.bench.scaling.ScalingTool COMMAND ...
 * </pre>
 *
 * <ul>
 *   <li>{@code create}: many sequences at once, through a server, several calls in flight;
 *   <li>{@code touch}: one Allocate of one ID from each of them, which loads them into the server;
 *   <li>{@code percentiles}: latency percentiles from h2load's per-request log files;
 *   <li>{@code plot}: the PNG plots of SCALING.md from the CSV files beside them;
 *   <li>{@code cas-limit}: compare-and-sets per second on a few Cassandra rows, the limit behind the capacity;
 *   <li>{@code capacity}: the capacity arithmetic of SCALING.md, and a simulation of servers sharing a pool.
 * </ul>
 *
 * <p>Exit codes: 0 done, 1 the work failed (unreachable server, calls that kept failing), 2 a usage error.
 */
@Command(
    name = "idgen-scaling",
    mixinStandardHelpOptions = true,
    version = "idgen-scaling 0.1.0",
    description = "Helpers of the scaling curves: create and load many sequences, h2load percentiles, plots.",
    subcommands = {BulkCalls.Create.class, BulkCalls.Touch.class, H2loadPercentiles.class, PlotCurves.class,
        CasLimit.class,
        CapacityModel.class})
public final class ScalingTool {

  private ScalingTool() {}

  public static void main(String[] args) {
    System.exit(new CommandLine(ScalingTool.class).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }
}
