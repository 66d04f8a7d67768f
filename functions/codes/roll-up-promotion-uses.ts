import { recordShardUses } from '#data/code-generators';
import type { PromotionShard } from '#data/promotion-shards';
import { logger } from '#runtime/observability';
import { worker } from '#runtime/worker-chain';
import { rollUp } from './shard-rollup.ts';

/**
 * The promotionShards stream (NEW_IMAGE: INSERTs and MODIFYs) → the uses each shard holds
 * (`used`), copied onto its code generator (`shard_uses`): one UpdateItem per generator of the
 * batch (shard-rollup.ts). The generator's `times_redeemed` is their sum, a few seconds behind
 * the redemptions and voids at most (docs/api.md). A shard of a generator that no longer exists
 * is skipped.
 */
export const handler = worker('stream', 'rollUpPromotionUses').handler(async (stream) =>
  rollUp(
    stream.Records,
    (shard: PromotionShard) => ({ key: `${shard.account_id}#${shard.code_generator_id}`, target: shard }),
    async (shard, uses) => {
      if (!(await recordShardUses(shard.account_id, shard.code_generator_id, uses))) {
        logger.warn('shard uses of a code generator that does not exist: skipped', {
          account_id: shard.account_id,
          code_generator_id: shard.code_generator_id,
        });
      }
    },
  ),
);
