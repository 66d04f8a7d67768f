import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findCodeGenerator } from '#data/code-generators';
import { codeSpelling, findIssuedCode, type CodeItem } from '#data/codes';
import { codeCount, itemUses } from '#data/code-counts';
import { shardUses } from '#data/counts';
import { presentCode } from './presenters.ts';
import codePath from '#http/schemas/codePath.generated';

/**
 * A code this generator issued, typed in any case as a cashier may; spelled as issued, with the
 * redemption that holds it now (or nulls), how many transactions hold it and how many may (the
 * generator's current maximum, read with the code). Text that cannot be a code is turned away
 * before any read (an overlong key would make DynamoDB refuse it).
 */
export const handler = api<null, { id: number; code: string }>({ host: 'core', operationId: 'getCode', params: codePath }).handler(async (event, context) => {
  const { id, code } = event.params;
  const missing = () => notFound(`Code ${code} was not issued by code generator ${id}`);
  if (codeSpelling(code) === undefined) throw missing();
  const [issued, generator] = await Promise.all([findIssuedCode(context.accountId, id, code), findCodeGenerator(context.accountId, id)]);
  if (!issued || !generator) throw missing();
  return ok({ code: presentCode(issued, { times_redeemed: await exactTimesRedeemed(issued), max_redemptions_per_code: generator.max_redemptions_per_code }) });
});

/**
 * Exact, unlike the codes list: what its item holds, and for a code counted over shards what
 * every shard holds now (one consistent BatchGetItem), not what the stream last rolled up.
 */
async function exactTimesRedeemed(item: CodeItem): Promise<number> {
  if (!item.pooled) return itemUses(item);
  let used = itemUses(item);
  for (const uses of (await shardUses(codeCount(item))).values()) used += uses;
  return used;
}
