package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.WallClock;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit whose fsync failed ({@link FailingLogSync}): the page cache still shows it, so a connection opened
 * afterwards reads it as committed, but it is not on disk, and a power cut drops it and every commit after it in
 * the log. The store must not build on it: whatever it hands out after the failure is still above the cursor
 * after the power cut.
 */
class EmbeddedFsyncFaultTest {

  @TempDir
  Path dir;

  @TempDir
  Path afterLoss;

  private FailingLogSync disk;
  private final Ledger ledger = new Ledger();
  private final SequenceDefinition orders = new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 100, 10_000);
  private EmbeddedRangeStore store;

  @BeforeEach
  void disk() {
    disk = new FailingLogSync(dir);
  }

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
  }

  @Test
  void should_not_build_on_a_commit_whose_fsync_failed_when_it_reopens_its_connection() throws Exception {
    store = open();
    store.create(orders);
    IdRange before = ledger.add(orders.name(), store.reserve(orders, 0, 10));
    failOneReservation();

    IdRange after = ledger.add(orders.name(), store.reserve(orders, 0, 10));

    assertThat(after.first()).as("the failed reservation is a gap: the reopened connection reads it")
        .isGreaterThan(before.last() + 10);
    assertAboveAllHandedOutAfterPowerLoss();
  }

  @Test
  void should_not_build_on_a_commit_whose_fsync_failed_after_a_restart() throws Exception {
    store = open();
    store.create(orders);
    ledger.add(orders.name(), store.reserve(orders, 0, 10));
    failOneReservation();

    store.close();
    store = open(); // a new process on the same page cache
    ledger.add(orders.name(), store.reserve(orders, 0, 10));

    assertAboveAllHandedOutAfterPowerLoss();
  }

  @Test
  void should_not_build_on_a_commit_the_check_after_it_failed_when_it_reopens_its_connection() throws Exception {
    AtomicBoolean failing = new AtomicBoolean();
    store = EmbeddedRangeStore.open(dir, ConnectionSetup.NONE, () -> {
      if (failing.getAndSet(false)) {
        throw new FileSystemException(dir.toString(), null, "Read-only file system");
      }
    }, disk, WallClock.system());
    store.create(orders);
    ledger.add(orders.name(), store.reserve(orders, 0, 10));
    disk.loseNextSync();
    failing.set(true);
    assertThatThrownBy(() -> store.reserve(orders, 0, 10)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("may be missing from the file");
    disk.leaveTheFilesAsTheFailingDiskDid();

    ledger.add(orders.name(), store.reserve(orders, 0, 10));

    assertAboveAllHandedOutAfterPowerLoss();
  }

  private EmbeddedRangeStore open() {
    return EmbeddedRangeStore.open(dir, ConnectionSetup.NONE, null, disk, WallClock.system());
  }

  /** A reservation whose commit's fsync fails; the store then holds no connection, and the log stays. */
  private void failOneReservation() throws Exception {
    disk.failNextSync();
    assertThatThrownBy(() -> store.reserve(orders, 0, 10)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("SQLITE_IOERR_FSYNC");
    disk.leaveTheFilesAsTheFailingDiskDid();
  }

  private void assertAboveAllHandedOutAfterPowerLoss() throws Exception {
    disk.powerLoss(afterLoss);
    try (EmbeddedRangeStore restored = EmbeddedRangeStore.open(afterLoss)) {
      IdRange next = restored.reserve(orders, 0, 10);
      assertThat(next.first()).as("after the power cut, above every ID handed out")
          .isGreaterThan(ledger.highest(orders.name(), next));
      ledger.add(orders.name(), next);
    }
    ledger.assertNoIdTwice();
  }
}
