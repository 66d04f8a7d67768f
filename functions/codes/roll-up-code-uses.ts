import { recordCodeShardUses } from '#data/codes';
import { logger } from '#runtime/observability';
import { worker } from '#runtime/worker-chain';
import { rollUp, type ShardImage } from './shard-rollup.ts';

/** What the rollup reads of a code shard (table codeShards): the code it counts. */
interface CodeShard extends ShardImage {
  readonly code_key: string;
}

/**
 * The codeShards stream (NEW_IMAGE: INSERTs and MODIFYs) → the uses each shard of a multi-use
 * code holds (`used`), copied onto the code (`shard_uses`), whose redeemed state (the by_redeemed
 * index) then follows its uses (data/codes.ts, recordCodeShardUses): one UpdateItem per code of
 * the batch, and one more when the state changes. A shard of a code that does not exist is
 * skipped.
 */
export const handler = worker('stream', 'rollUpCodeUses').handler(async (stream) =>
  rollUp(
    stream.Records,
    (shard: CodeShard) => ({ key: shard.code_key, target: shard }),
    async (shard, uses) => {
      if (!(await recordCodeShardUses(shard.code_key, uses))) {
        logger.warn('shard uses of a code that does not exist: skipped', { account_id: shard.account_id, code_generator_id: shard.code_generator_id });
      }
    },
  ),
);
