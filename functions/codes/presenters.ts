import { timesRedeemed, type CodeGenerator, type Discount, type Money } from '#data/code-generators';
import type { CodeView } from '#data/codes';
import type { CodeRedemption } from '#data/code-counts';
import type { IssuanceJob } from '#data/issuance-jobs';
import type { ExportRecord } from '#data/exports';

/**
 * The eleven fields of the seed, in its order, then the promotion's terms and its limits with
 * their defaults, then `times_redeemed` (read-only: the sum of `shard_uses`, which a worker
 * keeps). Objects are built key by key, so an answer (and its ETag) never depends on the order in
 * which DynamoDB hands back a map's keys. The versions (`terms_version`, `shards_version`) and the
 * uses per shard are internal.
 */
export function presentCodeGenerator(generator: CodeGenerator) {
  return {
    generation_type: generator.generation_type,
    buffer_type: generator.buffer_type,
    code_length: generator.code_length,
    description: generator.description,
    prefix: generator.prefix,
    store_id: generator.store_id,
    status: generator.status,
    id: generator.id,
    account_id: generator.account_id,
    created_at: generator.created_at,
    updated_at: generator.updated_at,
    discount: presentDiscount(generator.discount),
    minimum_basket: generator.minimum_basket && presentMoney(generator.minimum_basket),
    valid_from: generator.valid_from,
    valid_until: generator.valid_until,
    site_ids: generator.site_ids && [...generator.site_ids],
    max_redemptions_per_code: generator.max_redemptions_per_code,
    max_redemptions: generator.max_redemptions,
    max_redemptions_per_customer: generator.max_redemptions_per_customer,
    times_redeemed: timesRedeemed(generator),
  };
}

const presentMoney = (money: Money): Money => ({ amount: money.amount, currency: money.currency });

/** A discount with the keys of its type only, in a fixed order. */
function presentDiscount(discount: Discount): Discount {
  switch (discount.type) {
    case 'none':
      return { type: 'none' };
    case 'percent':
      return {
        type: 'percent',
        percent_off: discount.percent_off,
        ...(discount.max_amount_off !== undefined ? { max_amount_off: discount.max_amount_off, currency: discount.currency } : {}),
      };
    case 'amount':
      return { type: 'amount', amount_off: discount.amount_off, currency: discount.currency };
  }
}

/** How many transactions hold a code, and how many may at once (its generator's current maximum). */
export interface CodeUses {
  readonly times_redeemed: number;
  readonly max_redemptions_per_code: number;
}

/**
 * A code as the back office sees it: as issued, the redemption that holds it now (or nulls), and
 * its uses. A code whose maximum is above 1 may be held by many transactions: its holder fields
 * are null, and GET …/codes/{code}/redemptions lists them.
 */
export function presentCode(code: CodeView, uses: CodeUses) {
  const singleUse = uses.max_redemptions_per_code === 1;
  return {
    code: code.code,
    code_generator_id: code.code_generator_id,
    issued_at: code.issued_at,
    redeemed_at: singleUse ? (code.redeemed_at ?? null) : null,
    site_id: singleUse ? (code.site_id ?? null) : null,
    pos_transaction_id: singleUse ? (code.pos_transaction_id ?? null) : null,
    discount_amount: singleUse ? (code.discount_amount ?? null) : null,
    currency: singleUse ? (code.currency ?? null) : null,
    times_redeemed: uses.times_redeemed,
    max_redemptions_per_code: uses.max_redemptions_per_code,
  };
}

/**
 * A code's uses as the codes list reads them from an index: the one its own holder fields hold
 * (`redeemed_at` is set and removed with `holder`, which the index does not carry), and those of
 * its shards as the stream worker last rolled them up (`shard_uses`), which may lag.
 */
function listedTimesRedeemed(code: CodeView): number {
  const shards = Object.values(code.shard_uses ?? {}).reduce((sum, used) => sum + Number(used), 0);
  return (code.redeemed_at !== undefined ? 1 : 0) + shards;
}

/**
 * An item of a generator's codes list (GET …/codes and its export, which must equal it row for
 * row): the code as the index holds it, with the generator's current maximum.
 */
export const presentListedCode = (code: CodeView, maxRedemptionsPerCode: number) =>
  presentCode(code, { times_redeemed: listedTimesRedeemed(code), max_redemptions_per_code: maxRedemptionsPerCode });

/** One transaction holding a code, as its redemptions list shows it. */
export function presentCodeRedemption(redemption: CodeRedemption) {
  return {
    site_id: redemption.site_id,
    pos_transaction_id: redemption.pos_transaction_id,
    redeemed_at: redemption.redeemed_at,
    discount_amount: redemption.discount_amount ?? null,
    currency: redemption.currency ?? null,
  };
}

/** An issuance job as the back office sees it (never its secret, nor its chunks). */
export function presentIssuanceJob(job: IssuanceJob) {
  return {
    id: job.id,
    code_generator_id: job.code_generator_id,
    count: job.count,
    issued: job.issued,
    status: job.status,
    error: job.error,
    created_at: job.created_at,
    completed_at: job.completed_at,
  };
}

/** An export as its routes show it; `download_url` only where the GET route has just signed one. */
export function presentExport(record: ExportRecord, downloadUrl: string | null = null) {
  return {
    id: record.id,
    code_generator_id: record.code_generator_id,
    status: record.status,
    rows: record.rows,
    error: record.error,
    created_at: record.created_at,
    completed_at: record.completed_at,
    download_url: downloadUrl,
    expires_at: record.expires_at,
  };
}
