import { Metadata, status as Status } from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import { join } from 'node:path';

/** The ErrorInfo domain of idgen's errors. */
const DOMAIN = 'idgen.dev';

/** Reasons this client gives itself, beside the servers' (errors.proto). */
export type ClientReason = 'CLOSED' | 'TIMED_OUT' | 'INVALID_COUNT' | 'INVALID_OPTIONS';

/**
 * Every failure of this client. Decide on {@link IdGenError.reason}, not on the code: a code is shared with
 * gRPC's own failures and with proxies, a reason is idgen's alone.
 */
export class IdGenError extends Error {
  /**
   * The server's ErrorInfo reason (`SEQUENCE_NOT_FOUND`, `SEQUENCE_EXHAUSTED`, ... see errors.proto), one of
   * the client's ({@link ClientReason}), or, for a status without idgen's details, the gRPC code's name.
   */
  readonly reason: string;
  /** The gRPC status code (`@grpc/grpc-js` `status`). */
  readonly code: number;
  /** How long the server asked callers to wait before retrying (RetryInfo), in ms; undefined if it did not. */
  readonly retryDelayMs: number | undefined;
  /** The ErrorInfo metadata (for example `sequence`, `limit`); empty without details. */
  readonly metadata: Readonly<Record<string, string>>;

  constructor(message: string, reason: string, code: number, retryDelayMs?: number,
      metadata: Record<string, string> = {}) {
    super(message);
    this.name = 'IdGenError';
    this.reason = reason;
    this.code = code;
    this.retryDelayMs = retryDelayMs;
    this.metadata = Object.freeze({ ...metadata });
  }
}

/** What a source does about a failed Allocate (the Java stub's ServerError outcomes). */
export type Outcome = 'RETRY' | 'REJECT' | 'EXHAUSTED' | 'CLAMP';

const RETRY_REASONS = new Set(['STORE_UNAVAILABLE', 'SERVER_BUSY', 'SERVER_SHUTTING_DOWN',
  'RESERVE_WAIT_TIMED_OUT', 'CALL_TOO_LONG', 'OWNER_UNAVAILABLE', 'NOT_OWNER', 'RANGES_WITHDRAWN']);
const RETRY_CODES = new Set([Status.UNAVAILABLE, Status.DEADLINE_EXCEEDED, Status.CANCELLED, Status.ABORTED,
  Status.RESOURCE_EXHAUSTED]);

let rpcTypes: { status: protobuf.Type; errorInfo: protobuf.Type; retryInfo: protobuf.Type } | undefined;

function types(): NonNullable<typeof rpcTypes> {
  if (rpcTypes === undefined) {
    const root = new protobuf.Root();
    const dir = join(__dirname, '..', 'proto');
    root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : join(dir, target));
    root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
    rpcTypes = {
      status: root.lookupType('google.rpc.Status'),
      errorInfo: root.lookupType('google.rpc.ErrorInfo'),
      retryInfo: root.lookupType('google.rpc.RetryInfo'),
    };
  }
  return rpcTypes;
}

/** A failed call, decoded from its status and its `grpc-status-details-bin` trailer. */
export interface DecodedError {
  readonly error: IdGenError;
  readonly outcome: Outcome;
  /** For CLAMP: the server's per-call limit. */
  readonly limit: number;
}

interface GrpcLikeError {
  code?: number;
  details?: string;
  message?: string;
  metadata?: Metadata;
}

/** Decodes a failed Allocate that asked for `requested` IDs. */
export function decode(err: GrpcLikeError, sequence: string, requested: number): DecodedError {
  const code = typeof err.code === 'number' ? err.code : Status.UNKNOWN;
  const details = err.details ?? err.message ?? '';
  let reason: string | undefined;
  let retryDelayMs: number | undefined;
  let metadata: Record<string, string> = {};
  const bin = err.metadata?.get('grpc-status-details-bin')[0];
  if (bin instanceof Buffer) {
    try {
      const t = types();
      const st = t.status.toObject(t.status.decode(bin), { longs: Number }) as
          { details?: { type_url?: string; typeUrl?: string; value: Uint8Array }[] };
      for (const any of st.details ?? []) {
        const url = any.type_url ?? any.typeUrl ?? '';
        if (url.endsWith('/google.rpc.ErrorInfo')) {
          const info = t.errorInfo.toObject(t.errorInfo.decode(any.value)) as
              { reason?: string; domain?: string; metadata?: Record<string, string> };
          if (info.domain === DOMAIN && info.reason) {
            reason = info.reason;
            metadata = info.metadata ?? {};
          }
        } else if (url.endsWith('/google.rpc.RetryInfo')) {
          const ri = t.retryInfo.toObject(t.retryInfo.decode(any.value), { longs: Number }) as
              { retryDelay?: { seconds?: number; nanos?: number } };
          const s = ri.retryDelay?.seconds ?? 0;
          const n = ri.retryDelay?.nanos ?? 0;
          if (s >= 0 && n >= 0 && s < 3600) retryDelayMs = s * 1000 + Math.floor(n / 1e6);
        }
      }
    } catch {
      // Malformed details are ignored: the code still says enough.
    }
  }
  const error = new IdGenError(`sequence '${sequence}': ${Status[code] ?? code}: ${details}`,
      reason ?? Status[code] ?? String(code), code, retryDelayMs, metadata);
  let outcome: Outcome;
  let limit = -1;
  if (reason === 'SEQUENCE_EXHAUSTED') {
    outcome = 'EXHAUSTED';
  } else if (reason === 'COUNT_ABOVE_LIMIT') {
    limit = Number(metadata['limit'] ?? -1);
    // A limit that would not shrink the request cannot be acted on (a loop otherwise).
    outcome = limit >= 1 && limit < requested ? 'CLAMP' : 'REJECT';
  } else if (reason !== undefined && RETRY_REASONS.has(reason)) {
    outcome = 'RETRY';
  } else if (code === Status.OUT_OF_RANGE) {
    outcome = 'EXHAUSTED';
  } else {
    outcome = RETRY_CODES.has(code) ? 'RETRY' : 'REJECT';
  }
  return { error, outcome, limit };
}
