package dev.idgen.server.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SweepingTimerTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final CallDurationLimit.SweepingTimer timer = new CallDurationLimit.SweepingTimer(now::get, false);
  private final List<String> ran = new ArrayList<>();

  @Test
  void should_run_a_task_at_the_first_sweep_at_or_after_its_delay() {
    timer.schedule(() -> ran.add("a"), Duration.ofNanos(100));
    timer.sweep(1_099);
    assertThat(ran).isEmpty();
    assertThat(timer.pending()).isEqualTo(1);
    timer.sweep(1_100);
    assertThat(ran).containsExactly("a");
    timer.sweep(5_000);
    assertThat(ran).containsExactly("a"); // once
    assertThat(timer.pending()).isZero();
  }

  @Test
  void should_never_run_a_cancelled_task_whether_or_not_a_sweep_saw_it() {
    Runnable early = timer.schedule(() -> ran.add("early"), Duration.ofNanos(100));
    Runnable late = timer.schedule(() -> ran.add("late"), Duration.ofNanos(100));
    Runnable kept = timer.schedule(() -> ran.add("kept"), Duration.ofNanos(100));
    early.run(); // cancelled before any sweep
    timer.sweep(1_050); // late and kept wait now
    late.run(); // cancelled after a sweep saw it
    assertThat(timer.pending()).isEqualTo(1);
    timer.sweep(1_200);
    assertThat(ran).containsExactly("kept");
    kept.run(); // cancelling a task that ran changes nothing
    assertThat(timer.pending()).isZero();
  }

  @Test
  void should_keep_tasks_of_different_delays_until_each_is_due() {
    timer.schedule(() -> ran.add("long"), Duration.ofNanos(500));
    timer.schedule(() -> ran.add("short"), Duration.ofNanos(100));
    timer.sweep(1_100);
    assertThat(ran).containsExactly("short");
    now.set(1_200);
    timer.schedule(() -> ran.add("later"), Duration.ofNanos(100));
    timer.sweep(1_300);
    assertThat(ran).containsExactly("short", "later");
    timer.sweep(1_500);
    assertThat(ran).containsExactly("short", "later", "long");
  }

  @Test
  void should_go_on_after_a_task_that_throws() {
    timer.schedule(() -> {
      throw new IllegalStateException("boom");
    }, Duration.ofNanos(1));
    timer.schedule(() -> ran.add("next"), Duration.ofNanos(1));
    timer.sweep(2_000);
    assertThat(ran).containsExactly("next");
  }

  @Test
  void should_run_the_tasks_of_every_scheduling_thread_and_forget_a_shard_whose_thread_ended() throws Exception {
    List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    Thread other = new Thread(() -> timer.schedule(() -> seen.add("other"), Duration.ofNanos(100)));
    other.start();
    other.join(30_000);
    assertThat(other.isAlive()).isFalse();
    timer.schedule(() -> seen.add("mine"), Duration.ofNanos(200));
    assertThat(timer.shards()).isEqualTo(2);
    timer.sweep(1_100);
    assertThat(seen).containsExactly("other");
    assertThat(timer.shards()).isEqualTo(1); // the other thread ended and its shard is empty
    timer.sweep(1_200);
    assertThat(seen).containsExactly("other", "mine");
    assertThat(timer.shards()).isEqualTo(1); // this thread is alive: its shard stays for its next task
  }

  @Test
  void should_drop_cancelled_tasks_as_it_schedules_so_that_a_busy_thread_holds_about_twice_what_is_open() {
    List<Runnable> open = new ArrayList<>();
    for (int i = 0; i < 100_000; i++) {
      Runnable cancel = timer.schedule(() -> ran.add("open"), Duration.ofNanos(10_000));
      if (i % 1_000 == 0) {
        open.add(cancel); // a call still open
      } else {
        cancel.run(); // a call that ended at once, as an Allocate served from memory does
      }
    }
    assertThat(timer.pending()).isEqualTo(open.size());
    // No sweep ran: the scheduling thread itself dropped the cancelled ones.
    assertThat(timer.held()).isLessThanOrEqualTo(Math.max(64, 2 * open.size()) + 1);
    timer.sweep(now.get() + 10_000);
    assertThat(ran).hasSize(open.size());
    assertThat(timer.held()).isZero();
  }

  @Test
  void should_run_due_tasks_on_its_own_thread_and_stop_when_closed() throws InterruptedException {
    CallDurationLimit.SweepingTimer live = CallDurationLimit.SweepingTimer.started();
    try {
      CountDownLatch done = new CountDownLatch(1);
      String[] thread = new String[1];
      live.schedule(() -> {
        thread[0] = Thread.currentThread().getName();
        done.countDown();
      }, Duration.ofMillis(10));
      assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(thread[0]).isEqualTo("idgen-call-deadline");
    } finally {
      live.close();
    }
    CountDownLatch after = new CountDownLatch(1);
    live.schedule(after::countDown, Duration.ZERO);
    // Closed: three ticks pass and nothing runs.
    assertThat(after.await(3 * CallDurationLimit.SweepingTimer.TICK.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
  }
}
