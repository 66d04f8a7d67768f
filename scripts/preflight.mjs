#!/usr/bin/env node
// Runs before `npm start`, `npm test` and `npm run tokens`, on whatever Node is first on PATH
// (the system's on a fresh clone), so it uses nothing but Node's own modules.
//
// 1. Installs the locked dependencies when node_modules is missing or older than the lockfile.
//    That also installs Node 24 (the `node` devDependency) into node_modules/.bin, which npm
//    puts first on PATH for the rest of the script: tests run on Lambda's Node major.
// 2. Checks that Java 17+ is there for DynamoDB Local (start and test only).
// 3. Checks that the local S3 server (s3rver, a devDependency: local/s3.ts) is installed, and
//    that S3_PORT (default 4568) is a port number (start only; the tests take a free one).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const purpose = process.argv[2] ?? 'test';
const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const fail = (message) => {
  console.error(`\npreflight: ${message}\n`);
  process.exit(1);
};

const lockfile = join(root, 'package-lock.json');
if (!existsSync(lockfile)) fail('package-lock.json is missing; the install would not be reproducible.');
const lockHash = createHash('sha256').update(readFileSync(lockfile)).digest('hex');
const stamp = join(root, 'node_modules', '.tillgate-lock-sha256');
const installed = existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === lockHash;

if (!installed) {
  console.log('preflight: installing locked dependencies (npm ci) …');
  if (Number(process.versions.node.split('.')[0]) < 24) {
    // npm checks every package's `engines` against the Node running it: this bootstrap one.
    console.log(
      `preflight: Node ${process.version} only bootstraps the install, so npm warns "EBADENGINE Unsupported engine"\n` +
        '  for the packages (this one included) that ask for Node 22 or 24. The warnings are harmless: everything\n' +
        '  after the install runs on the Node 24 that it puts into node_modules.',
    );
  }
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) fail('npm ci failed (see above). Check your network access to the npm registry.');
  writeFileSync(stamp, `${lockHash}\n`);
}

const localNode = join(root, 'node_modules', '.bin', 'node');
if (!existsSync(localNode)) fail('node_modules/.bin/node is missing: the `node` package did not install (were install scripts blocked?).');
const nodeVersion = execFileSync(localNode, ['--version'], { encoding: 'utf8' }).trim();
if (!nodeVersion.startsWith('v24.')) fail(`expected Node 24 in node_modules/.bin, found ${nodeVersion}.`);

if (purpose === 'start' || purpose === 'test') {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error) {
    fail(
      'Java 17 or newer is required to run DynamoDB Local, and `java` is not on PATH.\n' +
        '  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless\n' +
        '  macOS:         brew install openjdk@17',
    );
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${java.stderr}${java.stdout}`);
  const major = match ? (Number(match[1]) === 1 ? Number(match[2]) : Number(match[1])) : 0;
  if (major < 17) fail(`Java 17 or newer is required to run DynamoDB Local; found: ${(java.stderr || java.stdout).split('\n')[0]}`);
}

if (purpose === 'start' || purpose === 'test') {
  if (!existsSync(join(root, 'node_modules', 's3rver', 'package.json'))) {
    fail('node_modules/s3rver is missing (the local S3 server of `npm start` and the tests): run `npm ci`.');
  }
}
if (purpose === 'start') {
  const raw = process.env.S3_PORT;
  if (raw !== undefined && raw !== '' && !(Number.isInteger(Number(raw)) && Number(raw) >= 0 && Number(raw) <= 65_535)) {
    fail(`S3_PORT must be a TCP port number (the local S3 server's, default 4568), got "${raw}".`);
  }
}
