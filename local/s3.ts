import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import S3rver from 's3rver';
import { bucketIds, buckets, type BucketId } from '../functions/buckets.ts';
import { LOCAL_S3_CREDENTIALS } from '../functions/runtime/storage.ts';

/**
 * The local stack's S3: s3rver (the S3 API over the file system: multipart uploads, GET with
 * ranges and response-header overrides) behind a front on 127.0.0.1 that does what s3rver does
 * not. s3rver 3.7.1 checks a presigned URL's expiry but not its signature: its
 * lib/middleware/authentication.js says "Signature version 4 calculation is unimplemented" and lets
 * any SigV4 signature through, and it serves a request without any signature (a public bucket).
 * So the front checks every request as S3 does a private bucket's (AWS Signature Version 4, in the
 * Authorization header or in the query of a presigned URL, against LOCAL_S3_CREDENTIALS): no
 * signature is `403 AccessDenied`, a wrong one `403 SignatureDoesNotMatch`, an expired URL
 * `403 AccessDenied` "Request has expired"; then it hands the request, its signature removed, to
 * s3rver on a private port. Not checked: the payload's hash (x-amz-content-sha256 is taken as
 * signed; S3 checks it).
 *
 * Path-style URLs on 127.0.0.1 (`http://127.0.0.1:4568/tillgate-local-exports/…`), so that a
 * download_url works with curl as in AWS. Data in `dataDirectory` (npm start: .local/s3), or a
 * fresh temporary one removed on close.
 */
export interface LocalS3 {
  readonly endpoint: string;
  readonly port: number;
  /** What the functions read: S3_ENDPOINT and each bucket's name variable. */
  readonly environment: Record<string, string>;
  readonly bucketNames: Record<BucketId, string>;
  close(): Promise<void>;
}

const localBucketNames = (prefix: string) =>
  Object.fromEntries(bucketIds.map((id) => [id, `${prefix}${id}`.toLowerCase().replace(/[^a-z0-9-]/g, '-')])) as Record<BucketId, string>;

export async function startLocalS3(options: { port?: number; dataDirectory?: string; bucketPrefix: string }): Promise<LocalS3> {
  const bucketNames = localBucketNames(options.bucketPrefix);
  const temporary = !options.dataDirectory;
  const directory = resolve(options.dataDirectory ?? join(process.env.TMPDIR ?? '/tmp', `tillgate-s3-${process.pid}-${Date.now()}`));
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  privateTree(directory);
  const store = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    resetOnClose: temporary,
    configureBuckets: bucketIds.map((id) => ({ name: bucketNames[id] })),
  });
  const inner = (await store.run()) as AddressInfo;

  const server = createServer((request, response) => {
    handle(request, response, inner.port).catch((error) => s3Error(response, 500, 'InternalError', String(error)));
  });
  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => ready());
  });
  const port = (server.address() as AddressInfo).port;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    bucketNames,
    environment: { S3_ENDPOINT: endpoint, ...Object.fromEntries(bucketIds.map((id) => [buckets[id].envVar, bucketNames[id]])) },
    close: async () => {
      await closeServer(server);
      await store.close();
      if (temporary) rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The owner's only, like the rest of .local/: 0700 directories, 0600 files (npm start sets umask 077 for what comes later). */
function privateTree(directory: string): void {
  chmodSync(directory, 0o700);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) privateTree(path);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
}

const closeServer = (server: Server) =>
  new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });

async function handle(request: IncomingMessage, response: ServerResponse, innerPort: number): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const refusal = checkSignature(request, url, new Date());
  if (refusal) {
    request.resume();
    return s3Error(response, 403, refusal.code, refusal.message);
  }
  for (const name of SIGNATURE_PARAMETERS) url.searchParams.delete(name);
  const { authorization: _, host: __, ...headers } = request.headers;
  const upstream = forward({ host: '127.0.0.1', port: innerPort, method: request.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(response);
  });
  upstream.on('error', (error) => s3Error(response, 502, 'InternalError', error.message));
  request.pipe(upstream);
}

function s3Error(response: ServerResponse, status: number, code: string, message: string): void {
  if (response.headersSent) return void response.destroy();
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  response.writeHead(status, { 'Content-Type': 'application/xml' });
  response.end(body);
}

const SIGNATURE_PARAMETERS = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
];

interface Refusal {
  readonly code: 'AccessDenied' | 'SignatureDoesNotMatch' | 'InvalidAccessKeyId' | 'AuthorizationQueryParametersError';
  readonly message: string;
}

/** RFC 3986 encoding, as SigV4 canonicalises query names and values. */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * AWS Signature Version 4 as S3 checks it (docs.aws.amazon.com, "Authenticating Requests: Using
 * Query Parameters" and "… Using the Authorization Header"): the canonical request from the
 * method, the path as sent, the query (without X-Amz-Signature), the signed headers and the
 * payload hash, signed with a key derived from the secret, the date, the region and `s3`.
 * Undefined when the request is signed right and in time.
 */
function checkSignature(request: Pick<IncomingMessage, 'method' | 'headers'>, url: URL, now: Date): Refusal | undefined {
  const query = url.searchParams;
  const header = request.headers.authorization;
  let credential: string;
  let signedHeaders: string;
  let provided: string;
  let amzDate: string;
  let payloadHash: string;
  if (query.has('X-Amz-Algorithm')) {
    if (header) return { code: 'AuthorizationQueryParametersError', message: 'Only one auth mechanism allowed' };
    const missing = SIGNATURE_PARAMETERS.slice(0, 6).filter((name) => !query.has(name));
    if (missing.length > 0 || query.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') {
      return {
        code: 'AuthorizationQueryParametersError',
        message: `Query-string authentication version 4 requires ${SIGNATURE_PARAMETERS.slice(0, 6).join(', ')}`,
      };
    }
    credential = query.get('X-Amz-Credential')!;
    signedHeaders = query.get('X-Amz-SignedHeaders')!;
    provided = query.get('X-Amz-Signature')!;
    amzDate = query.get('X-Amz-Date')!;
    payloadHash = 'UNSIGNED-PAYLOAD';
    const expires = Number(query.get('X-Amz-Expires'));
    const signedAt = parseAmzDate(amzDate);
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800 || signedAt === undefined) {
      return { code: 'AuthorizationQueryParametersError', message: 'X-Amz-Date must be yyyyMMddTHHmmssZ and X-Amz-Expires 1 to 604800 seconds' };
    }
    if (now.getTime() > signedAt + expires * 1000) return { code: 'AccessDenied', message: 'Request has expired' };
  } else if (typeof header === 'string' && header.startsWith('AWS4-HMAC-SHA256 ')) {
    const fields = Object.fromEntries(
      header
        .slice('AWS4-HMAC-SHA256 '.length)
        .split(',')
        .map((part) => part.trim().split('=') as [string, string]),
    );
    if (!fields.Credential || !fields.SignedHeaders || !fields.Signature) return { code: 'AccessDenied', message: 'Malformed Authorization header' };
    credential = fields.Credential;
    signedHeaders = fields.SignedHeaders;
    provided = fields.Signature;
    amzDate = String(request.headers['x-amz-date'] ?? '');
    payloadHash = String(request.headers['x-amz-content-sha256'] ?? '');
    const signedAt = parseAmzDate(amzDate);
    // S3 refuses a signed request more than 15 minutes from its clock.
    if (signedAt === undefined || Math.abs(now.getTime() - signedAt) > 15 * 60_000) {
      return { code: 'AccessDenied', message: 'The difference between the request time and the server time is too large, or X-Amz-Date is missing' };
    }
  } else {
    return { code: 'AccessDenied', message: 'Access Denied: the bucket is private; sign the request (a presigned URL)' };
  }

  const [accessKeyId, date, region, service, terminal] = credential.split('/');
  if (accessKeyId !== LOCAL_S3_CREDENTIALS.accessKeyId)
    return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  if (!date || !region || service !== 's3' || terminal !== 'aws4_request' || !amzDate.startsWith(date)) {
    return { code: 'AuthorizationQueryParametersError', message: 'Malformed credential scope' };
  }
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return { code: 'AccessDenied', message: 'The host header must be signed' };
  const canonicalHeaders = names.map((name) => `${name}:${headerValue(request.headers[name])}\n`).join('');
  const canonicalQuery = [...query.entries()]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = [request.method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${LOCAL_S3_CREDENTIALS.secretAccessKey}`, date), region), 's3'), 'aws4_request');
  const expected = Buffer.from(createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex'));
  const given = Buffer.from(provided);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  }
  return undefined;
}

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');

function parseAmzDate(text: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}
