import { status } from '@grpc/grpc-js';
import { IdGenError } from './errors';
import { Answer, closedError, Transport } from './transport';

/** Counters of one sequence's source, for monitoring and tests. A snapshot: later calls do not change it. */
export interface SequenceStats {
  /** IDs handed out to callers. */
  readonly idsServed: number;
  /** IDs dropped unused: their lease's valid_for passed, or the sequence turned out to be strict. */
  readonly idsExpired: number;
  /** IDs held now (including any whose lease expired but was not yet looked at). */
  readonly idsHeld: number;
  /** Allocate requests that returned IDs. */
  readonly leasesFetched: number;
  /** Whether the servers said the sequence is ORDERING_STRICT (then nothing is cached). */
  readonly strict: boolean;
}

/** The IDs of one sequence. Get it from {@link IdGenClient.sequence}; one instance per name and client. */
export interface Sequence {
  /** The sequence's name. */
  readonly name: string;
  /** A new ID, usually from memory. Rejects with {@link IdGenError}. */
  next(): Promise<bigint>;
  /** `n` new IDs (1 to 1,000,000). Rejects with {@link IdGenError}. */
  nextBatch(n: number): Promise<bigint[]>;
  /** The source's counters. */
  stats(): SequenceStats;
}

/** Settings a source needs (already checked and defaulted by IdGenClient). */
export interface SourceSettings {
  waitDeadlineMs: number;
  leaseLifetimeMs: number;
  minLeaseSize: number;
  maxLeaseSize: number;
}

const MAX_BATCH = 1_000_000;

/** A run of IDs held in memory; `expiresAt` is Infinity for a range without valid_for. */
interface Lease {
  next: bigint;
  readonly stride: bigint;
  left: number;
  readonly expiresAt: number;
}

interface Taken {
  readonly id: bigint;
  readonly expiresAt: number;
}

function ms(d: { seconds: string; nanos: number } | null): number | undefined {
  return d === null ? undefined : Number(d.seconds) * 1000 + d.nanos / 1e6;
}

/**
 * The leases of one sequence and the refill rule (the Java stub's LeasedIdSource and Refiller): IDs come
 * from the leases held; when what is left falls to the low-water mark, the next lease is requested in the
 * background, one request at a time. A lease's IDs are never handed out after its valid_for, counted from
 * when its request was sent. Strict sequences keep nothing: one Allocate per call.
 *
 * Node runs it on one thread: the fields change only between awaits, no locks.
 */
export class SequenceSource implements Sequence {
  private leases: Lease[] = [];
  private inflight: Promise<void> | undefined;
  private failure: IdGenError | undefined;
  private exhausted: IdGenError | undefined;
  private strict = false;
  private lowWater = 0;
  private lastSize = 0;
  private lastRequestAt = 0;
  private servedAtRequest = 0;
  private validForMs: number | undefined;
  private waiting = 0;
  private served = 0;
  private expired = 0;
  private fetched = 0;

  constructor(readonly name: string, private readonly transport: Transport,
      private readonly settings: SourceSettings) {}

  async next(): Promise<bigint> {
    if (!this.strict && !this.transport.isClosed) {
      const now = performance.now();
      const lease = this.current(now);
      if (lease !== undefined) {
        const id = lease.next;
        lease.next += lease.stride;
        lease.left--;
        this.served++;
        this.maybeRefill();
        return id;
      }
    }
    return (await this.nextBatch(1))[0];
  }

  async nextBatch(n: number): Promise<bigint[]> {
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_BATCH) {
      throw new IdGenError(`sequence '${this.name}': nextBatch(n) takes a whole number from 1 to ${MAX_BATCH}, `
          + `got ${n}`, 'INVALID_COUNT', status.INVALID_ARGUMENT);
    }
    const deadline = performance.now() + this.settings.waitDeadlineMs;
    const taken: Taken[] = [];
    let waited = false;
    for (;;) {
      this.check();
      if (this.strict) {
        const rest = await this.strictBatch(n - taken.length, deadline);
        return taken.map((t) => t.id).concat(rest);
      }
      this.take(taken, n);
      if (taken.length === n && waited) {
        // IDs count as handed out when the call returns: drop those whose lease expired while it waited.
        const now = performance.now();
        const valid = taken.filter((t) => t.expiresAt > now);
        this.expired += taken.length - valid.length;
        this.served -= taken.length - valid.length;
        taken.splice(0, taken.length, ...valid);
      }
      if (taken.length === n) {
        this.maybeRefill();
        return taken.map((t) => t.id);
      }
      waited = true;
      this.waiting += n - taken.length;
      try {
        await this.refilled(deadline);
      } finally {
        this.waiting -= n - taken.length;
      }
      if (this.strict) {
        // The answer that said so was asked for by waiters: they take from it; what is left is dropped.
        this.take(taken, n);
        this.dropAll();
      }
    }
  }

  stats(): SequenceStats {
    return {
      idsServed: this.served,
      idsExpired: this.expired,
      idsHeld: this.leases.reduce((sum, l) => sum + l.left, 0),
      leasesFetched: this.fetched,
      strict: this.strict,
    };
  }

  private check(): void {
    if (this.transport.isClosed) throw closedError(`sequence '${this.name}'`);
    if (this.exhausted !== undefined) throw this.exhausted;
  }

  /** The first lease with IDs left whose valid_for has not passed; drops the expired ones on the way. */
  private current(now: number): Lease | undefined {
    while (this.leases.length > 0) {
      const l = this.leases[0];
      if (l.left > 0 && l.expiresAt > now) return l;
      this.expired += l.left;
      this.leases.shift();
    }
    return undefined;
  }

  private take(taken: Taken[], n: number): void {
    const now = performance.now();
    while (taken.length < n) {
      const l = this.current(now);
      if (l === undefined) return;
      const k = Math.min(l.left, n - taken.length);
      for (let i = 0; i < k; i++) {
        taken.push({ id: l.next, expiresAt: l.expiresAt });
        l.next += l.stride;
      }
      l.left -= k;
      this.served += k;
    }
  }

  private dropAll(): void {
    for (const l of this.leases) this.expired += l.left;
    this.leases = [];
  }

  private maybeRefill(): void {
    if (this.inflight !== undefined || this.strict || this.transport.isClosed || this.exhausted !== undefined) return;
    const held = this.stats().idsHeld;
    if (held <= this.lowWater || this.waiting > held) this.refill();
  }

  /** Waits until the request in flight (started if none) answered; rejects past `deadline`. */
  private async refilled(deadline: number): Promise<void> {
    if (this.inflight === undefined) this.refill();
    const left = deadline - performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, left));
    });
    try {
      const r = await Promise.race([this.inflight, timeout]);
      if (r === 'timeout') {
        this.check();
        throw new IdGenError(`sequence '${this.name}': no IDs within the wait deadline `
            + `(${this.settings.waitDeadlineMs} ms)`, 'TIMED_OUT', status.DEADLINE_EXCEEDED);
      }
    } finally {
      clearTimeout(timer);
    }
    this.check();
    const f = this.failure;
    if (f !== undefined && this.stats().idsHeld === 0) {
      this.failure = undefined; // reported once; the next caller asks again
      throw f;
    }
  }

  private leaseSize(now: number): number {
    const s = this.settings;
    let lifetime = s.leaseLifetimeMs;
    if (this.validForMs !== undefined) lifetime = Math.min(lifetime, this.validForMs / 2);
    let size = s.minLeaseSize;
    if (this.lastRequestAt > 0) {
      const rate = (this.served - this.servedAtRequest) / Math.max(1, now - this.lastRequestAt);
      size = Math.min(Math.ceil(rate * lifetime), this.lastSize * 4);
    }
    size = Math.max(size, this.waiting);
    return Math.max(s.minLeaseSize, Math.min(s.maxLeaseSize, size));
  }

  private refill(): void {
    const now = performance.now();
    const size = this.leaseSize(now);
    this.lastSize = size;
    this.lastRequestAt = now;
    this.servedAtRequest = this.served;
    this.inflight = this.transport.allocate(this.name, size, now + this.settings.waitDeadlineMs)
        .then((answer) => this.install(answer), (e: IdGenError) => {
          if (e.reason === 'SEQUENCE_EXHAUSTED' || e.code === status.OUT_OF_RANGE) this.exhausted = e;
          else this.failure = e;
        })
        .finally(() => {
          this.inflight = undefined;
        });
  }

  private install(answer: Answer): void {
    const servedMeanwhile = this.served - this.servedAtRequest;
    for (const r of answer.ranges) {
      if (r.ordering === 'ORDERING_STRICT') this.strict = true;
      const validFor = ms(r.validFor);
      if (validFor !== undefined) this.validForMs = validFor;
      const expiresAt = validFor === undefined ? Infinity : answer.sentAt + validFor;
      this.leases.push({ next: BigInt(r.first), stride: BigInt(r.stride), left: Number(r.count), expiresAt });
    }
    if (answer.ranges.length > 0) this.fetched++;
    if (answer.error !== undefined) {
      if (answer.error.reason === 'SEQUENCE_EXHAUSTED') this.exhausted = answer.error;
      else this.failure = answer.error;
    }
    // Half of what is held now, plus what went out while the request was on its way (a round trip's worth).
    this.lowWater = Math.floor(this.stats().idsHeld / 2) + servedMeanwhile;
  }

  /** Strict: one Allocate for exactly the caller's count; a range that arrives expired is asked for again. */
  private async strictBatch(n: number, deadline: number): Promise<bigint[]> {
    const out: bigint[] = [];
    while (out.length < n) {
      this.check();
      const answer = await this.transport.allocate(this.name, n - out.length, deadline);
      const now = performance.now();
      if (answer.ranges.length > 0) this.fetched++;
      for (const r of answer.ranges) {
        const validFor = ms(r.validFor);
        const count = Number(r.count);
        if (validFor !== undefined && answer.sentAt + validFor <= now) {
          this.expired += count;
          continue;
        }
        let id = BigInt(r.first);
        const stride = BigInt(r.stride);
        for (let i = 0; i < count; i++, id += stride) out.push(id);
        this.served += count;
      }
      if (answer.error !== undefined) {
        if (answer.error.reason === 'SEQUENCE_EXHAUSTED') this.exhausted = answer.error;
        throw answer.error;
      }
      if (out.length < n && performance.now() >= deadline) {
        throw new IdGenError(`sequence '${this.name}': no IDs within the wait deadline `
            + `(${this.settings.waitDeadlineMs} ms)`, 'TIMED_OUT', status.DEADLINE_EXCEEDED);
      }
    }
    return out;
  }
}
