import { Duration, RemovalPolicy, Tags, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { bucketIds, buckets, type BucketId } from '#functions/buckets';

export interface BucketsProps {
  /** Throwaway stage: the buckets go with the stack (emptied first by their lifecycle, or by hand). */
  readonly ephemeral: boolean;
}

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * Every bucket of functions/buckets.ts: encrypted at rest (SSE-S3), every public access blocked,
 * ACLs off (the bucket owner owns every object), TLS only (a bucket policy denies any request over
 * plain HTTP), objects deleted `expireAfterDays` after they are written and incomplete multipart
 * uploads (an export cut off midway) aborted after a day. No physical name, so two stages fit in one
 * account. Who may do what inside is granted per function (FunctionWithLogGroup.bindBucket): no
 * bucket policy grants anything.
 */
export class Buckets extends Construct {
  readonly byId: Readonly<Record<BucketId, Bucket>>;

  constructor(scope: Construct, id: string, props: BucketsProps) {
    super(scope, id);
    const byId = {} as Record<BucketId, Bucket>;
    for (const bucketId of bucketIds) {
      const spec = buckets[bucketId];
      const bucket = new Bucket(this, pascal(bucketId), {
        encryption: BucketEncryption.S3_MANAGED,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforceSSL: true,
        versioned: false,
        lifecycleRules: [
          { id: 'expire', enabled: true, expiration: Duration.days(spec.expireAfterDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
        ],
        removalPolicy: props.ephemeral ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      });
      Validations.of(bucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          'No server access logs: objects are written only by the writeExports function and read only through URLs that GET /v1.0/exports/{id} presigns, ' +
          'a request logged with its account and request id; each object lives 7 days. A logs bucket would hold more than the bucket it watches.',
      });
      Tags.of(bucket).add('tillgate:bucket', bucketId);
      byId[bucketId] = bucket;
    }
    this.byId = byId;
  }
}
