/**
 * The Node.js client of idgen: short, never-duplicated numeric IDs over gRPC.
 *
 * ```ts
 * const client = new IdGenClient({ targets: ['127.0.0.1:7070'], plaintext: true });
 * const id: bigint = await client.sequence('orders').next();
 * client.close();
 * ```
 *
 * @packageDocumentation
 */
import * as grpc from '@grpc/grpc-js';
import { IdGenError } from './errors';
import { Sequence, SequenceSource } from './sequence';
import { Transport } from './transport';

export { IdGenError } from './errors';
export type { ClientReason } from './errors';
export type { Sequence, SequenceStats } from './sequence';

/** TLS settings: PEM buffers. Without any, the system's trusted CAs. */
export interface TlsOptions {
  /** The CA certificates to trust (a private CA). */
  readonly rootCerts?: Buffer;
  /** The client's private key, for mutual TLS (with certChain). */
  readonly privateKey?: Buffer;
  /** The client's certificate chain, for mutual TLS (with privateKey). */
  readonly certChain?: Buffer;
}

/** How to reach the servers and how sources behave. Only `targets` is required. */
export interface IdGenClientOptions {
  /** Servers, as `host:port` (or any gRPC target, `dns:///name:port`). Requests rotate over them. */
  readonly targets: readonly string[];
  /** Connect without TLS. Default: TLS. */
  readonly plaintext?: boolean;
  /** TLS settings (ignored with plaintext). */
  readonly tls?: TlsOptions;
  /**
   * Sent as `authorization: Bearer TOKEN` with every call: a fixed token, or a function asked at every call
   * (a rotated token). Only over TLS: with plaintext the constructor throws.
   */
  readonly bearerToken?: string | (() => string);
  /** The deadline of each Allocate call, after which it is retried on another server. Default 1000 ms. */
  readonly callDeadlineMs?: number;
  /** The longest a caller waits when nothing is left; then reason TIMED_OUT. Default 5000 ms. */
  readonly waitDeadlineMs?: number;
  /** How long a lease should last at the sequence's own rate (at most half of valid_for). Default 5000 ms. */
  readonly leaseLifetimeMs?: number;
  /** The smallest lease, and the first one. Default 10. */
  readonly minLeaseSize?: number;
  /** The largest lease; keep it at or below the servers' per-call limit. Default 1,000,000. */
  readonly maxLeaseSize?: number;
  /** The n-th retry waits a random time in [d/2, d], d = min(max, initial * 2^(n-1)). Default 20, 2000 ms. */
  readonly retryBackoffMs?: { readonly initial: number; readonly max: number };
}

function invalid(message: string): IdGenError {
  return new IdGenError(message, 'INVALID_OPTIONS', grpc.status.INVALID_ARGUMENT);
}

function positive(name: string, value: number | undefined, dflt: number): number {
  const v = value ?? dflt;
  if (!Number.isFinite(v) || v <= 0) throw invalid(`IdGenClient: ${name} must be a positive number, got ${v}`);
  return v;
}

/**
 * A client of idgen servers. One per process: it holds the channels; its sequences hold the leases.
 * Node runs it on one thread; call it from anywhere in the process.
 */
export class IdGenClient {
  private readonly transport: Transport;
  private readonly sources = new Map<string, SequenceSource>();
  private readonly settings: ConstructorParameters<typeof SequenceSource>[2];

  /** Checks the options (throws {@link IdGenError} with reason INVALID_OPTIONS) and creates the channels. */
  constructor(options: IdGenClientOptions) {
    const targets = [...(options?.targets ?? [])];
    if (targets.length === 0 || targets.some((t) => typeof t !== 'string' || t.trim() === '')) {
      throw invalid('IdGenClient: targets must name at least one server, as host:port');
    }
    if (options.plaintext && options.bearerToken !== undefined) {
      throw invalid('IdGenClient: a bearer token is sent only over TLS; drop plaintext or the token');
    }
    const tls = options.tls ?? {};
    const credentials = options.plaintext
      ? grpc.credentials.createInsecure()
      : grpc.credentials.createSsl(tls.rootCerts ?? null, tls.privateKey ?? null, tls.certChain ?? null);
    const token = options.bearerToken;
    const minLeaseSize = Math.floor(positive('minLeaseSize', options.minLeaseSize, 10));
    const maxLeaseSize = Math.floor(positive('maxLeaseSize', options.maxLeaseSize, 1_000_000));
    if (maxLeaseSize < minLeaseSize) {
      throw invalid(`IdGenClient: maxLeaseSize (${maxLeaseSize}) is below minLeaseSize (${minLeaseSize})`);
    }
    const backoff = options.retryBackoffMs ?? { initial: 20, max: 2000 };
    this.settings = {
      waitDeadlineMs: positive('waitDeadlineMs', options.waitDeadlineMs, 5000),
      leaseLifetimeMs: positive('leaseLifetimeMs', options.leaseLifetimeMs, 5000),
      minLeaseSize,
      maxLeaseSize,
    };
    this.transport = new Transport({
      targets,
      credentials,
      token: token === undefined ? undefined : typeof token === 'string' ? () => token : token,
      callDeadlineMs: positive('callDeadlineMs', options.callDeadlineMs, 1000),
      backoffInitialMs: positive('retryBackoffMs.initial', backoff.initial, 20),
      backoffMaxMs: positive('retryBackoffMs.max', backoff.max, 2000),
    });
  }

  /**
   * The sequence of that name (the same instance for the same name). It must exist: servers never create
   * one implicitly (`next()` rejects with reason SEQUENCE_NOT_FOUND).
   */
  sequence(name: string): Sequence {
    let s = this.sources.get(name);
    if (s === undefined) {
      s = new SequenceSource(name, this.transport, this.settings);
      this.sources.set(name, s);
    }
    return s;
  }

  /**
   * Ends every call and channel. Waiting and later calls reject with reason CLOSED; IDs held are dropped
   * (a gap, never a duplicate). Idempotent.
   */
  close(): void {
    this.transport.close();
  }
}
