import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import { decode, IdGenError } from './errors';

/** One range of an Allocate answer, as proto-loader gives it (int64 as strings). */
export interface RawRange {
  first: string;
  count: string;
  stride: string;
  validFor: { seconds: string; nanos: number } | null;
  ordering: string;
}

/** The ranges of one Allocate request, with when it was sent (performance.now(), ms). */
export interface Answer {
  readonly ranges: RawRange[];
  readonly sentAt: number;
  /** A failure after some ranges arrived (those stay valid and the caller's). */
  readonly error?: IdGenError;
}

/** Settings the transport needs (already checked and defaulted by IdGenClient). */
export interface TransportSettings {
  targets: string[];
  credentials: grpc.ChannelCredentials;
  token: (() => string) | undefined;
  callDeadlineMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

interface Target {
  readonly address: string;
  readonly stub: grpc.Client;
  avoidUntil: number;
}

type Stub = grpc.Client & {
  Allocate(req: unknown, md: grpc.Metadata, opts: grpc.CallOptions): grpc.ClientReadableStream<RawRange>;
};

let idgenService: grpc.ServiceClientConstructor | undefined;

function service(): grpc.ServiceClientConstructor {
  if (idgenService === undefined) {
    const def = protoLoader.loadSync('idgen/v1/idgen.proto', {
      includeDirs: [join(__dirname, '..', 'proto')],
      longs: String,
      enums: String,
      defaults: true,
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as
        { idgen: { v1: { IdGen: grpc.ServiceClientConstructor } } };
    idgenService = pkg.idgen.v1.IdGen;
  }
  return idgenService;
}

export function closedError(what: string): IdGenError {
  return new IdGenError(`${what}: the client is closed`, 'CLOSED', grpc.status.CANCELLED);
}

/**
 * The channels to the targets, and Allocate with failover: a retryable failure is retried on the next
 * target after a back-off (or the server's RetryInfo delay), until the caller's deadline.
 *
 * Node runs it on one thread: no locks. Close ends every call, sleep and channel.
 */
export class Transport {
  private readonly targets: Target[];
  private readonly calls = new Set<grpc.ClientReadableStream<RawRange>>();
  private readonly sleeps = new Set<() => void>();
  private nextTarget = 0;
  private closed = false;

  constructor(private readonly settings: TransportSettings) {
    const Ctor = service();
    this.targets = settings.targets.map((address) => ({
      address,
      stub: new Ctor(address, settings.credentials, {
        'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      }),
      avoidUntil: 0,
    }));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Allocates up to `count` IDs (fewer when a server's per-call limit is lower), retrying until `deadline`. */
  async allocate(sequence: string, count: number, deadline: number): Promise<Answer> {
    let attempt = 0;
    for (;;) {
      if (this.closed) throw closedError(`sequence '${sequence}'`);
      const target = this.pick();
      const sentAt = performance.now();
      const ranges: RawRange[] = [];
      try {
        await this.call(target, sequence, count, ranges);
        return { ranges, sentAt };
      } catch (e) {
        if (this.closed) throw closedError(`sequence '${sequence}'`);
        const d = decode(e as grpc.ServiceError, sequence, count);
        if (ranges.length > 0) return { ranges, sentAt, error: d.error };
        if (d.outcome === 'CLAMP') {
          count = d.limit;
          continue;
        }
        if (d.outcome !== 'RETRY') throw d.error;
        target.avoidUntil = performance.now() + this.settings.backoffMaxMs;
        attempt++;
        const ceiling = Math.min(this.settings.backoffMaxMs, this.settings.backoffInitialMs * 2 ** (attempt - 1));
        const delay = d.error.retryDelayMs ?? ceiling / 2 + Math.random() * ceiling / 2;
        if (performance.now() + delay >= deadline) {
          throw new IdGenError(`sequence '${sequence}': no server answered within the wait deadline `
              + `(${attempt} attempts; last: ${d.error.message})`, 'TIMED_OUT', grpc.status.DEADLINE_EXCEEDED,
              d.error.retryDelayMs, { ...d.error.metadata, lastReason: d.error.reason });
        }
        await this.sleep(delay);
      }
    }
  }

  /** The next target in turn that no recent failure marks, or the next one if all are marked. */
  private pick(): Target {
    const now = performance.now();
    const n = this.targets.length;
    for (let i = 0; i < n; i++) {
      const t = this.targets[(this.nextTarget + i) % n];
      if (t.avoidUntil <= now) {
        this.nextTarget = (this.nextTarget + i + 1) % n;
        return t;
      }
    }
    const t = this.targets[this.nextTarget];
    this.nextTarget = (this.nextTarget + 1) % n;
    return t;
  }

  private call(target: Target, sequence: string, count: number, ranges: RawRange[]): Promise<void> {
    const md = new grpc.Metadata();
    if (this.settings.token !== undefined) md.set('authorization', `Bearer ${this.settings.token()}`);
    const stream = (target.stub as Stub).Allocate({ sequence, count: String(count) }, md,
        { deadline: Date.now() + this.settings.callDeadlineMs });
    this.calls.add(stream);
    return new Promise<void>((resolve, reject) => {
      stream.on('data', (r: RawRange) => ranges.push(r));
      stream.on('error', (e) => {
        this.calls.delete(stream);
        reject(e);
      });
      stream.on('end', () => {
        this.calls.delete(stream);
        resolve();
      });
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleeps.add(wake);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.calls]) c.cancel();
    for (const wake of [...this.sleeps]) wake();
    for (const t of this.targets) t.stub.close();
  }
}
