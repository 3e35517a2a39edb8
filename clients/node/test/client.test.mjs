// The client against real daemons. NodeClientTest (this module's Maven test) starts them and sets:
//   IDGEN_TARGETS           two daemons on one store (sequences basic, prefetch, strict, closing)
//   IDGEN_EXPIRY_TARGET     a daemon whose ranges carry valid_for 1s (sequence expiry)
//   IDGEN_FAILOVER_TARGETS  a daemon that POST $IDGEN_CONTROL/stop stops, then one that stays (sequence failover)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';

const { IdGenClient, IdGenError } = createRequire(import.meta.url)('../dist/index.js');

function env(name) {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run these tests through Maven (NodeClientTest), which starts the daemons`);
  return value;
}

const targets = env('IDGEN_TARGETS').split(',');

function client(options) {
  return new IdGenClient({ targets, plaintext: true, ...options });
}

/** Polls `condition` every 5 ms for at most 5 s. */
async function until(what, condition) {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await sleep(5);
  }
}

test('next and nextBatch hand out distinct, increasing bigints within a lease', async () => {
  const c = client({ minLeaseSize: 100, maxLeaseSize: 100 });
  try {
    const s = c.sequence('basic');
    assert.equal(c.sequence('basic'), s, 'one source per name');
    const ids = [await s.next(), await s.next(), await s.next(), ...(await s.nextBatch(10))];
    for (const id of ids) assert.equal(typeof id, 'bigint');
    for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1] + 1n, `ids ${ids.join(',')}`);
    const stats = s.stats();
    assert.equal(stats.leasesFetched, 1);
    assert.equal(stats.idsServed, 13);
    assert.equal(stats.idsHeld, 87);
  } finally {
    c.close();
  }
});

test('prefetch: the next lease arrives before the current one runs out', async () => {
  const c = client({ minLeaseSize: 10, maxLeaseSize: 10 });
  try {
    const s = c.sequence('prefetch');
    for (let i = 0; i < 6; i++) await s.next(); // 4 left: below the low-water mark (half of 10)
    await until('a second lease arrived', () => s.stats().leasesFetched === 2);
    assert.equal(s.stats().idsHeld, 14, 'the 4 left of the first lease and the 10 of the second');
  } finally {
    c.close();
  }
});

test('expiry: IDs of a lease whose valid_for passed are never handed out', async () => {
  const c = new IdGenClient({ targets: [env('IDGEN_EXPIRY_TARGET')], plaintext: true,
    minLeaseSize: 10, maxLeaseSize: 10 });
  try {
    const s = c.sequence('expiry');
    const first = await s.next();
    await sleep(1300); // valid_for is 1 s, counted from when the request was sent
    const second = await s.next();
    assert.ok(second >= first + 10n, `${second} skips past the expired lease starting at ${first}`);
    assert.ok(s.stats().idsExpired >= 9, `idsExpired ${s.stats().idsExpired}`);
    assert.equal(s.stats().leasesFetched, 2);
  } finally {
    c.close();
  }
});

test('strict sequences are not cached: one Allocate per call, ordered across clients', async () => {
  const one = client({ targets: [targets[0]] });
  const two = client({ targets: [targets[0]] });
  try {
    const s1 = one.sequence('strict');
    const s2 = two.sequence('strict');
    const x1 = await s1.next();
    const y1 = await s2.next();
    const x2 = await s1.next();
    assert.ok(x1 < y1 && y1 < x2, `${x1} < ${y1} < ${x2}: a cached ID would be older than the other client's`);
    const batch = await s1.nextBatch(5);
    assert.equal(batch.length, 5);
    assert.ok(batch[0] > x2);
    const stats = s1.stats();
    assert.equal(stats.strict, true);
    assert.equal(stats.leasesFetched, 3, 'one request per call');
    assert.equal(stats.idsHeld, 0);
    assert.equal(stats.idsServed, 7);
  } finally {
    one.close();
    two.close();
  }
});

test('errors carry the server\'s reason and code', async () => {
  const c = client();
  try {
    await assert.rejects(c.sequence('missing').next(), (e) => {
      assert.ok(e instanceof IdGenError);
      assert.equal(e.reason, 'SEQUENCE_NOT_FOUND');
      assert.equal(e.code, 5); // NOT_FOUND
      assert.match(e.message, /missing/);
      return true;
    });
    await assert.rejects(c.sequence('no spaces allowed').next(),
      { name: 'IdGenError', reason: 'INVALID_SEQUENCE_NAME', code: 3 });
    await assert.rejects(c.sequence('basic').nextBatch(0), { reason: 'INVALID_COUNT', code: 3 });
    assert.throws(() => new IdGenClient({ targets, plaintext: true, bearerToken: 't' }),
      { reason: 'INVALID_OPTIONS' });
    assert.throws(() => new IdGenClient({ targets: [] }), { reason: 'INVALID_OPTIONS' });
  } finally {
    c.close();
  }
});

test('close ends waiting and later calls with reason CLOSED', async () => {
  const c = client();
  const s = c.sequence('closing');
  assert.equal(typeof (await s.next()), 'bigint');
  // Nothing listens on port 1: this caller waits while the client retries.
  const nowhere = new IdGenClient({ targets: ['127.0.0.1:1'], plaintext: true });
  const waiting = nowhere.sequence('closing').next();
  await sleep(50);
  nowhere.close();
  await assert.rejects(waiting, { reason: 'CLOSED' });
  c.close();
  c.close();
  await assert.rejects(s.next(), { reason: 'CLOSED' });
  await assert.rejects(s.nextBatch(3), { reason: 'CLOSED' });
});

// Last: it stops a daemon.
test('failover: when one of two servers stops, calls go on from the other', async () => {
  const c = new IdGenClient({ targets: env('IDGEN_FAILOVER_TARGETS').split(','), plaintext: true,
    minLeaseSize: 5, maxLeaseSize: 5, retryBackoffMs: { initial: 5, max: 200 } });
  try {
    const s = c.sequence('failover');
    const seen = new Set();
    const take = async (n) => {
      for (let i = 0; i < n; i++) {
        const id = await s.next();
        assert.ok(!seen.has(id), `ID ${id} handed out twice`);
        seen.add(id);
      }
    };
    await take(20);
    const res = await fetch(`${env('IDGEN_CONTROL')}/stop`, { method: 'POST', signal: AbortSignal.timeout(10000) });
    assert.equal(res.status, 204);
    await take(50);
    assert.equal(seen.size, 70);
  } finally {
    c.close();
  }
});
