// The upgrade run's client and checker, run as a source file on the HEAD server jar's classpath (it holds the
// idgen.v1 stubs and grpc-netty): java -cp idgen-server-all.jar UpgradeLoad.java MODE ...
//   create TARGET SEQ                 CreateSequence (stripes 1, so a range is an interval)
//   advance TARGET SEQ FLOOR FILE     AdvanceSequence; on OK appends "millis floor" to FILE (when it returned)
//   load TARGETS_FILE SEQ OUT STOP    raw Allocate calls until file STOP exists; targets re-read each call;
//                                     each range received: "callStartMillis first count stride" in OUT
//   cql CONTACT DC FILE...            runs each file's statements in order, as cqlsh -f does (the launcher has no
//                                     cqlsh): the operator's schema steps; any error fails the run
//   check DIR FLOORS                  0 duplicates among every recorded ID, 0 IDs at or below a floor in calls that
//                                     started after that floor's advance returned; prints the verdict line
// Raw callers, not the client stub: nothing is kept across the switch but what was recorded, and a 0.1.0
// range has no valid_for for a stub to honour.
import dev.idgen.api.v1.*;
import io.grpc.*;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.TimeUnit;

public class UpgradeLoad {
  static ManagedChannel channel(String target) {
    return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
  }

  public static void main(String[] a) throws Exception {
    switch (a[0]) {
      case "create" -> {
        ManagedChannel ch = channel(a[1]);
        SequenceAdminGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS).createSequence(
            CreateSequenceRequest.newBuilder().setName(a[2]).setStripes(1).build());
        ch.shutdownNow();
      }
      case "advance" -> {
        ManagedChannel ch = channel(a[1]);
        long floor = Long.parseLong(a[3]);
        SequenceAdminGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS).advanceSequence(
            AdvanceSequenceRequest.newBuilder().setName(a[2]).setFloor(floor).build());
        Files.writeString(Path.of(a[4]), System.currentTimeMillis() + " " + floor + "\n",
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        ch.shutdownNow();
      }
      case "cql" -> cql(a[1], a[2], Arrays.asList(a).subList(3, a.length));
      case "load" -> load(Path.of(a[1]), a[2], Path.of(a[3]), Path.of(a[4]));
      case "check" -> System.exit(check(Path.of(a[1]), Path.of(a[2])) ? 0 : 1);
      default -> throw new IllegalArgumentException("unknown mode " + a[0]);
    }
  }

  static void cql(String contact, String dc, List<String> files) throws Exception {
    String[] hp = contact.split(":");
    try (var session = com.datastax.oss.driver.api.core.CqlSession.builder()
        .addContactPoint(new java.net.InetSocketAddress(hp[0], Integer.parseInt(hp[1])))
        .withLocalDatacenter(dc).build()) {
      for (String file : files) {
        StringBuilder text = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(file))) { // "--" comments, as in cqlsh
          int c = line.indexOf("--");
          text.append(c >= 0 ? line.substring(0, c) : line).append('\n');
        }
        for (String raw : text.toString().split(";")) {
          String st = raw.trim();
          if (st.isEmpty()) continue;
          session.execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance(st)
              .setTimeout(java.time.Duration.ofSeconds(30)));
          System.out.println("cql " + Path.of(file).getFileName() + ": " + st.lines().findFirst().orElse(""));
        }
        if (!session.checkSchemaAgreement()) throw new IllegalStateException("no schema agreement after " + file);
      }
    }
  }

  static void load(Path targetsFile, String seq, Path out, Path stop) throws Exception {
    Map<String, ManagedChannel> channels = new HashMap<>();
    Random random = new Random();
    long ok = 0, failed = 0;
    long end = System.currentTimeMillis() + TimeUnit.MINUTES.toMillis(30); // a bound, whatever the script does
    try (var w = Files.newBufferedWriter(out)) {
      while (!Files.exists(stop) && System.currentTimeMillis() < end) {
        List<String> targets = Files.readAllLines(targetsFile).stream().filter(s -> !s.isBlank()).toList();
        if (targets.isEmpty()) { Thread.sleep(100); continue; }
        String target = targets.get(random.nextInt(targets.size()));
        ManagedChannel ch = channels.computeIfAbsent(target, UpgradeLoad::channel);
        long start = System.currentTimeMillis();
        try {
          Iterator<IdRange> it = IdGenGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS)
              .allocate(AllocateRequest.newBuilder().setSequence(seq).setCount(1 + random.nextInt(500)).build());
          while (it.hasNext()) {
            IdRange r = it.next();
            w.write(start + " " + r.getFirst() + " " + r.getCount() + " " + Math.max(1, r.getStride()) + "\n");
          }
          w.flush(); // a range is on disk before the next call: what the client used is what was recorded
          ok++;
        } catch (StatusRuntimeException e) {
          failed++; // UNAVAILABLE while servers stop and start: the script's switch; ranges received stay valid
          Thread.sleep(100);
        }
      }
    }
    channels.values().forEach(ManagedChannel::shutdownNow);
    System.out.println("load " + out.getFileName() + ": calls ok=" + ok + " failed=" + failed);
  }

  static boolean check(Path dir, Path floors) throws Exception {
    List<long[]> advances = new ArrayList<>();
    if (Files.exists(floors)) {
      for (String l : Files.readAllLines(floors)) {
        String[] f = l.trim().split(" ");
        advances.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
      }
    }
    long n = 0, below = 0, ranges = 0;
    List<long[]> intervals = new ArrayList<>();
    try (var files = Files.list(dir)) {
      for (Path p : files.filter(p -> p.getFileName().toString().endsWith(".ids")).sorted().toList()) {
        for (String l : Files.readAllLines(p)) {
          String[] f = l.trim().split(" ");
          long start = Long.parseLong(f[0]), first = Long.parseLong(f[1]), count = Long.parseLong(f[2]);
          if (Long.parseLong(f[3]) != 1) throw new IllegalStateException("stride != 1 in " + p + ": " + l);
          ranges++;
          n += count;
          intervals.add(new long[] {first, first + count});
          for (long[] adv : advances) {
            if (start > adv[0] && first <= adv[1]) below += Math.min(count, adv[1] - first + 1); // at or below
          }
        }
      }
    }
    intervals.sort(Comparator.comparingLong(x -> x[0]));
    long dup = 0, hi = Long.MIN_VALUE;
    for (long[] iv : intervals) {
      if (iv[0] < hi) dup += Math.min(hi, iv[1]) - iv[0];
      hi = Math.max(hi, iv[1]);
    }
    boolean ok = dup == 0 && below == 0 && n > 0;
    System.out.println("upgrade verdict: " + (ok ? "OK" : "FAIL") + " ids=" + n + " ranges=" + ranges
        + " duplicates=" + dup + " below_floor=" + below + " floors=" + advances.size());
    return ok;
  }
}
