/**
 * Every S3 bucket the functions use, declared once (as tables.ts declares the tables). The CDK
 * stack creates each (encrypted, public access blocked, TLS only, its lifecycle rule) and hands
 * its name to the functions that name it, in the environment variable named here, with exactly
 * the actions they declare; the local stack serves each from its S3-compatible server
 * (local/s3.ts) under the same variable.
 */
export interface BucketSpec {
  /** Environment variable through which a function learns the bucket's physical name. */
  readonly envVar: string;
  /** Objects are deleted this many days after they are written (a lifecycle rule). */
  readonly expireAfterDays: number;
  readonly description: string;
}

/**
 * The S3 actions a function may take on a bucket's objects: exactly the calls its code makes.
 * A multipart upload (lib-storage's Upload) is authorised as PutObject for every step but its
 * abort (AbortMultipartUpload); a presigned GET URL carries the signer's GetObject permission.
 */
type BucketAction = 's3:PutObject' | 's3:AbortMultipartUpload' | 's3:GetObject';

export const buckets = {
  exports: {
    envVar: 'EXPORTS_BUCKET',
    expireAfterDays: 7,
    description:
      "CSV exports of a generator's codes (functions/codes/write-exports.ts), one object per export, read only through URLs presigned by GET /v1.0/exports/{id}; deleted 7 days after they are written.",
  },
} as const satisfies Record<string, BucketSpec>;

export type BucketId = keyof typeof buckets;

export const bucketIds = Object.keys(buckets) as BucketId[];

export type BucketAccess = Readonly<Partial<Record<BucketId, readonly BucketAction[]>>>;
