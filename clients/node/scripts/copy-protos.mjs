// Copies the API's protos (the repository's proto module) and the google ones they import (proto-deps/,
// from proto-google-common-protos) into proto/, and the repository's LICENSE, so that the published package
// is self-contained.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const api = join(root, '..', '..', 'proto', 'src', 'main', 'proto', 'idgen');
const out = join(root, 'proto');
if (!existsSync(api)) {
  // Outside the repository (an unpacked package): keep the protos it ships.
  if (existsSync(join(out, 'idgen'))) process.exit(0);
  console.error(`copy-protos: ${api} is missing; build inside the idgen repository`);
  process.exit(1);
}
rmSync(out, { recursive: true, force: true });
cpSync(api, join(out, 'idgen'), { recursive: true });
cpSync(join(root, 'proto-deps', 'google'), join(out, 'google'), { recursive: true });
cpSync(join(root, '..', '..', 'LICENSE'), join(root, 'LICENSE'));
