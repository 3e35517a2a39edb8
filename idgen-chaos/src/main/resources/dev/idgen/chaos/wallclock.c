/*
 * idgen's wall-clock shim for the chaos harness's clock faults: an LD_PRELOAD library that adds an offset,
 * read from the file named by IDGEN_WALLCLOCK_FILE, to the process's real-time clock (clock_gettime of
 * CLOCK_REALTIME and CLOCK_REALTIME_COARSE, gettimeofday, time) and leaves everything else alone: the
 * monotonic clocks, sleeps and timed waits are the kernel's own.
 *
 * Why not libfaketime: Debian 12's 0.9.10 ends every timed wait on a monotonic condition variable at once when
 * the monotonic clock is not faked (a spinning JVM); its workaround (FAKETIME_WAIT_MS) caps every timed wait
 * at a few milliseconds, which costs a faked JVM CPU even when idle, and a faked Cassandra node far more.
 * Nothing here intercepts a wait: a JVM computes its timeouts on the monotonic clock.
 *
 * The file holds a signed offset in seconds, with up to nine decimals ("+600", "-0.5"); a missing or
 * unreadable file is offset 0. It is re-read at most once a second (on the monotonic clock), by whichever
 * thread reads the clock first after that second; the others use the offset last read. Only raw system calls
 * (open, read, close) are used to read it, so the wrappers stay async-signal-safe as the functions they
 * replace.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static const char *offset_file;
static int64_t offset_ns;    /* accessed with __atomic builtins */
static int64_t next_read_ns; /* monotonic time of the next re-read; accessed with __atomic builtins */

#define NS 1000000000LL

static clock_gettime_fn resolve(void) {
  clock_gettime_fn f = __atomic_load_n(&real_clock_gettime, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
    __atomic_store_n(&real_clock_gettime, f, __ATOMIC_RELEASE);
  }
  return f;
}

__attribute__((constructor)) static void init(void) {
  offset_file = getenv("IDGEN_WALLCLOCK_FILE");
  resolve();
}

/* "+600", "-0.5", "12.25": nanoseconds; 0 for anything else. */
static int64_t parse(const char *s, ssize_t n) {
  ssize_t i = 0;
  int negative = 0;
  int64_t whole = 0, frac = 0, scale = NS;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i >= n || s[i] < '0' || s[i] > '9') return 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
    if (whole > 9000000000LL) return 0; /* beyond 285 years: not an offset */
    whole = whole * 10 + (s[i] - '0');
  }
  if (i < n && s[i] == '.') {
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
      if (scale > 1) {
        scale /= 10;
        frac += (s[i] - '0') * scale;
      }
    }
  }
  int64_t v = whole * NS + frac;
  return negative ? -v : v;
}

static int64_t current_offset(void) {
  if (offset_file == NULL) return 0;
  struct timespec m;
  if (resolve()(CLOCK_MONOTONIC, &m) != 0) return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
  int64_t now = (int64_t) m.tv_sec * NS + m.tv_nsec;
  int64_t next = __atomic_load_n(&next_read_ns, __ATOMIC_ACQUIRE);
  /* One thread per second wins the right to re-read; the first reading (next == 0) is made by it too. */
  if (now >= next
      && __atomic_compare_exchange_n(&next_read_ns, &next, now + NS, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    char buf[64];
    int64_t value = 0;
    int fd = open(offset_file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t r = read(fd, buf, sizeof buf);
      close(fd);
      if (r > 0) value = parse(buf, r);
    }
    __atomic_store_n(&offset_ns, value, __ATOMIC_RELEASE);
    return value;
  }
  return __atomic_load_n(&offset_ns, __ATOMIC_ACQUIRE);
}

static void shift(struct timespec *ts, int64_t off) {
  if (off == 0) return;
  int64_t t = (int64_t) ts->tv_sec * NS + ts->tv_nsec + off;
  int64_t sec = t / NS, nsec = t % NS;
  if (nsec < 0) {
    nsec += NS;
    sec -= 1;
  }
  ts->tv_sec = (time_t) sec;
  ts->tv_nsec = (long) nsec;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  int r = resolve()(id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(ts, current_offset());
  return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void) tz; /* obsolete; Linux leaves it unset for callers that pass one */
  struct timespec ts;
  int r = clock_gettime(CLOCK_REALTIME, &ts);
  if (r == 0) { /* tv: declared nonnull by glibc */
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return r;
}

time_t time(time_t *out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t) -1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
