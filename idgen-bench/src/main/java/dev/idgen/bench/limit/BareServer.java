package dev.idgen.bench.limit;

import com.typesafe.config.ConfigFactory;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.transport.LeakDetection;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limit idgen's hot path is measured against: the same generated {@code idgen.v1.IdGen} service on the same
 * transport (grpc-netty-shaded, {@code directExecutor()}, the connection limits of idgen's
 * {@code reference.conf}, Netty's leak detector off unless asked for), answering every {@code Allocate} with one
 * range cut from a counter and nothing else: no store, no pools, no interceptors, no metrics. What idgen costs
 * above it is what idgen adds.
 *
 * <pre>java -cp idgen-bench-all.jar dev.idgen.bench.limit.BareServer PORT</pre>
 *
 * Prints {@code bare-server listening on 127.0.0.1:PORT pid PID} once it serves; stops on SIGTERM. Thread-safe:
 * the counter is an {@link AtomicLong}, as idgen's fast path is a compare-and-set.
 */
public final class BareServer {
  private BareServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: BareServer PORT");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    OperationsSettings.Limits limits = OperationsSettings.from(ConfigFactory.load()).limits();
    AtomicLong next = new AtomicLong(1);
    LeakDetection.offUnlessAsked(); // as idgen's server does: the same transport settings
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port),
            InsecureServerCredentials.create())
        .maxConcurrentCallsPerConnection(limits.maxConcurrentCallsPerConnection())
        .permitKeepAliveWithoutCalls(limits.permitKeepaliveWithoutCalls())
        .permitKeepAliveTime(limits.permitKeepaliveTime().toNanos(), TimeUnit.NANOSECONDS)
        .maxInboundMessageSize(limits.maxInboundMessageSize())
        .maxInboundMetadataSize(limits.maxInboundMetadataSize())
        .directExecutor()
        .addService(new IdGenGrpc.IdGenImplBase() {
          @Override
          public void allocate(AllocateRequest request, StreamObserver<IdRange> response) {
            long count = Math.max(1, request.getCount());
            response.onNext(IdRange.newBuilder().setFirst(next.getAndAdd(count)).setCount(count).setStride(1)
                .setOrdering(Ordering.ORDERING_PER_SERVER).build());
            response.onCompleted();
          }
        })
        .build()
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "bare-server-stop"));
    System.out.println("bare-server listening on 127.0.0.1:" + server.getPort() + " pid " + ProcessHandle.current().pid());
    server.awaitTermination();
  }
}
