// The rate of sequential `await next()` calls of one source, against a running daemon.
//   IDGEN_TARGETS=127.0.0.1:7070 IDGEN_BENCH_SECONDS=5 npm run bench
// Creates sequence IDGEN_BENCH_SEQUENCE (default "bench") if it does not exist. Build first: npm run build.
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { IdGenClient } = require('../dist/index.js');

const targets = (process.env.IDGEN_TARGETS ?? '127.0.0.1:7070').split(',');
const name = process.env.IDGEN_BENCH_SEQUENCE ?? 'bench';
const seconds = Number(process.env.IDGEN_BENCH_SECONDS ?? '5');

async function create() {
  const def = protoLoader.loadSync('idgen/v1/admin.proto', {
    includeDirs: [join(dirname(fileURLToPath(import.meta.url)), '..', 'proto')],
  });
  const Admin = grpc.loadPackageDefinition(def).idgen.v1.SequenceAdmin;
  const admin = new Admin(targets[0], grpc.credentials.createInsecure());
  try {
    await new Promise((resolve, reject) => admin.CreateSequence({ name }, { deadline: Date.now() + 5000 },
      (e) => (e && e.code !== grpc.status.ALREADY_EXISTS ? reject(e) : resolve())));
  } finally {
    admin.close();
  }
}

async function run(source, ms) {
  const end = performance.now() + ms;
  let calls = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) await source.next();
    calls += 1000;
  }
  return calls;
}

await create();
const client = new IdGenClient({ targets, plaintext: true });
try {
  const source = client.sequence(name);
  await run(source, 2000); // warm-up: JIT, lease sizes
  const start = performance.now();
  const calls = await run(source, seconds * 1000);
  const elapsed = (performance.now() - start) / 1000;
  const s = source.stats();
  console.log(`next(): ${Math.round(calls / elapsed).toLocaleString('en-US')} calls/s `
    + `(${calls} calls in ${elapsed.toFixed(2)} s, one source, sequential awaits; `
    + `leases fetched ${s.leasesFetched}, node ${process.version})`);
} finally {
  client.close();
}
