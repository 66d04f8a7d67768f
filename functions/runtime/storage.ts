import type { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { buckets, type BucketId } from '#functions/buckets';

/**
 * The S3 buckets of functions/buckets.ts. In AWS the client is the SDK's default (the function's
 * role). The local stack runs an S3-compatible server on 127.0.0.1 (local/s3.ts) and names it in
 * S3_ENDPOINT, as DYNAMODB_ENDPOINT names DynamoDB Local: then the client addresses it path-style
 * (`http://127.0.0.1:4568/bucket/key`) with the local server's fixed credentials.
 */
let s3: { readonly endpoint: string | undefined; readonly client: S3Client } | undefined;

/** The local S3 server's credentials (local/s3.ts checks every signature against them). */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'tillgate-local', secretAccessKey: 'tillgate-local-secret' } as const;

function s3Client(): S3Client {
  const endpoint = process.env.S3_ENDPOINT || undefined;
  if (!s3 || s3.endpoint !== endpoint) {
    const local = endpoint ? { endpoint, forcePathStyle: true, region: process.env.AWS_REGION ?? 'us-east-1', credentials: LOCAL_S3_CREDENTIALS } : {};
    s3 = { endpoint, client: new S3Client({ ...local, maxAttempts: 3 }) };
  }
  return s3.client;
}

function bucketName(id: BucketId): string {
  const name = process.env[buckets[id].envVar];
  if (!name) throw new Error(`No bucket ${id}: ${buckets[id].envVar} is not set`);
  return name;
}

/** Parts of a multipart upload: S3's smallest (5 MiB), at most this many in memory at once. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * Streams `body` into the object `key` as a multipart upload: memory holds at most
 * PARTS_IN_FLIGHT parts (plus the one being filled), whatever the object's size. An upload that
 * fails midway is aborted (lib-storage's default), and the bucket's lifecycle rule removes
 * whatever an abort could not.
 */
export async function uploadStream(
  id: BucketId,
  key: string,
  body: Readable,
  headers: { readonly contentType: string; readonly contentDisposition?: string },
): Promise<void> {
  const upload = new Upload({
    client: s3Client(),
    params: {
      Bucket: bucketName(id),
      Key: key,
      Body: body,
      ContentType: headers.contentType,
      ...(headers.contentDisposition ? { ContentDisposition: headers.contentDisposition } : {}),
    },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    leavePartsOnError: false,
  });
  await upload.done();
}

/**
 * A presigned GET URL of the object, valid `seconds` (signed locally: no request to S3). It is
 * signed with the function's credentials: in AWS the role's temporary ones, so it stops working
 * when they expire, whichever comes first (docs/api.md, "Exports").
 */
export async function presignedGet(id: BucketId, key: string, seconds: number): Promise<string> {
  return getSignedUrl(s3Client(), new GetObjectCommand({ Bucket: bucketName(id), Key: key }), { expiresIn: seconds });
}
