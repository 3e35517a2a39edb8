// Decoding grpc-status-details-bin (google.rpc.Status) without a server: RetryInfo is hard to provoke.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { decode } = require('../dist/errors.js');
const { Metadata } = require('@grpc/grpc-js');
const protobuf = require('protobufjs');

const protoDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'proto');

function detailsBin(reason, retrySeconds, retryNanos) {
  const root = new protobuf.Root();
  root.resolvePath = (_o, t) => (t.startsWith('google/protobuf/') ? t : join(protoDir, t));
  root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
  const Status = root.lookupType('google.rpc.Status');
  const ErrorInfo = root.lookupType('google.rpc.ErrorInfo');
  const RetryInfo = root.lookupType('google.rpc.RetryInfo');
  const info = ErrorInfo.encode({ reason, domain: 'idgen.dev', metadata: { sequence: 'orders' } }).finish();
  const retry = RetryInfo.encode({ retryDelay: { seconds: retrySeconds, nanos: retryNanos } }).finish();
  return Buffer.from(Status.encode({
    code: 14,
    message: 'busy',
    details: [
      { type_url: 'type.googleapis.com/google.rpc.ErrorInfo', value: info },
      { type_url: 'type.googleapis.com/google.rpc.RetryInfo', value: retry },
    ],
  }).finish());
}

test('ErrorInfo reason and RetryInfo delay are decoded; the reason decides', () => {
  const md = new Metadata();
  md.set('grpc-status-details-bin', detailsBin('SERVER_BUSY', 1, 500_000_000));
  const d = decode({ code: 14, details: 'busy', metadata: md }, 'orders', 10);
  assert.equal(d.error.reason, 'SERVER_BUSY');
  assert.equal(d.error.code, 14);
  assert.equal(d.error.retryDelayMs, 1500);
  assert.equal(d.error.metadata.sequence, 'orders');
  assert.equal(d.outcome, 'RETRY');
});

test('a status without details falls back to its code', () => {
  const d = decode({ code: 5, details: 'nope', metadata: new Metadata() }, 'orders', 10);
  assert.equal(d.error.reason, 'NOT_FOUND');
  assert.equal(d.error.retryDelayMs, undefined);
  assert.equal(d.outcome, 'REJECT');
  assert.equal(decode({ code: 14, details: 'down' }, 'orders', 10).outcome, 'RETRY');
});
