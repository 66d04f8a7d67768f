import { DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';

/**
 * A stream batch a worker gave up on, as Lambda's on-failure destination describes it (the body of
 * the SQS message): where it was in the stream, not the records themselves. The local stream
 * reader (local/stream-reader.ts) sends the same shape to the local stand-in of the queue.
 */
export interface FailedBatchMessage {
  readonly requestContext?: { readonly condition?: string; readonly approximateInvokeCount?: number; readonly functionArn?: string };
  readonly timestamp?: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string;
    readonly endSequenceNumber: string;
    readonly approximateArrivalOfFirstRecord?: string;
    readonly approximateArrivalOfLastRecord?: string;
    readonly batchSize?: number;
    readonly streamArn: string;
  };
}

/** A batch that can no longer be read back: the stream has trimmed it (older than 24 h) or never held it. */
class BatchNotReadableError extends Error {
  override readonly name = 'BatchNotReadableError';
}

let client: DynamoDBStreamsClient | undefined;

/** One client per execution environment; DYNAMODB_ENDPOINT points it at DynamoDB Local, as the tables' client. */
function streams(): DynamoDBStreamsClient {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  client ??= new DynamoDBStreamsClient(
    endpoint
      ? {
          endpoint,
          region: process.env.AWS_REGION ?? 'local',
          // DynamoDB Local accepts any credentials; real AWS never takes this branch.
          ...(process.env.AWS_ACCESS_KEY_ID ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        }
      : {},
  );
  return client;
}

/** Empty pages in a row after which a range that has not reached its end is given up (the queue tries again). */
const MAX_EMPTY_PAGES = 5;

/**
 * Reads a given-up batch back from the stream: GetShardIterator AT_SEQUENCE_NUMBER its first
 * record, then GetRecords up to its last, in stream order (Lambda's record shape, as an event
 * source hands them over). DynamoDB keeps a stream's records 24 hours: a batch older than that
 * throws BatchNotReadableError. The records are the stream's own (NEW_IMAGE), so an item changed
 * or deleted since (an acknowledged event) is replayed as it was written.
 */
export async function readFailedBatch(message: FailedBatchMessage): Promise<DynamoDBRecord[]> {
  const { shardId, startSequenceNumber, endSequenceNumber, streamArn } = message.DDBStreamBatchInfo;
  const end = BigInt(endSequenceNumber);
  let iterator: string | undefined;
  try {
    ({ ShardIterator: iterator } = await streams().send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: startSequenceNumber }),
    ));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TrimmedDataAccessException' || name === 'ResourceNotFoundException') {
      throw new BatchNotReadableError(`Stream records ${startSequenceNumber}–${endSequenceNumber} of ${shardId} cannot be read back: ${name}`);
    }
    throw error;
  }
  const records: DynamoDBRecord[] = [];
  let empty = 0;
  while (iterator) {
    const page = await streams().send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    for (const record of page.Records ?? []) {
      if (BigInt(record.dynamodb?.SequenceNumber ?? '0') > end) return records;
      records.push(toLambdaRecord(streamArn)(record));
    }
    if (records.at(-1)?.dynamodb?.SequenceNumber === endSequenceNumber) return records;
    empty = page.Records?.length ? 0 : empty + 1;
    if (empty >= MAX_EMPTY_PAGES) throw new Error(`Stream records of ${shardId} up to ${endSequenceNumber} not reached (${records.length} read)`);
    iterator = page.NextShardIterator; // none: the shard is closed and read to its end
  }
  return records;
}

/** A record of the Streams API in the shape Lambda hands a stream worker (its creation time in epoch seconds). */
export const toLambdaRecord =
  (streamArn: string) =>
  (record: StreamRecord): DynamoDBRecord => ({
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(record.dynamodb as DynamoDBRecord['dynamodb']),
      ApproximateCreationDateTime: record.dynamodb?.ApproximateCreationDateTime
        ? Math.floor(new Date(record.dynamodb.ApproximateCreationDateTime).getTime() / 1000)
        : undefined,
    } as DynamoDBRecord['dynamodb'],
  });
