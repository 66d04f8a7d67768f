import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { sumOfShardUses, writeShardUses, type ShardUses } from './shard-uses.ts';
import { pause, type TransactItem } from './transactions.ts';

export const CODES_TABLE = tableName('codes');
const TABLE = CODES_TABLE;

/**
 * One item per code of an account, keyed `account#CODE` (letters upper case, as every code is
 * issued): a conditional put is what keeps a code unique within its account forever, whichever
 * generator issues it, across calls, concurrent calls and cold starts. A till that scans a code
 * knows only the code, and this key is all a redemption needs to find it.
 *
 * An issuance of more codes than one transaction holds writes its codes in several
 * transactions. The codes of the earlier ones are written `pending`, naming their issuance; the
 * last transaction writes the rest of the codes, the issuance record and the event. A pending
 * code reads as issued only once its issuance record exists, so a call that fails half-way
 * leaves codes that never read as issued (and are never issued again). Once the issuance is
 * complete its pending codes are finalised (pending false, index keys set): only then do they
 * appear in the generator's list, which is what keeps an incomplete issuance out of it.
 *
 * A redeemed code names its holder, the POS transaction (`holder`: its transaction_key) with its
 * site, transaction id and time; the void of that transaction releases it (the four removed).
 * One sparse index, `by_redeemed` (`redeemed_key`: `account#generator#true|false`), sorted by
 * code: the list of all a generator's codes is the merge of its two partitions, read side by
 * side from one cursor (listCodes). `generator_key` is a plain attribute, no longer an index key:
 * it marks a code as listed (its redeemed state is kept in step, settleRedeemedState).
 *
 * An issuance job's codes (codes/run-issuance-jobs.ts) are written once each, pending, naming
 * the job's issuance and with their index key already set, and never rewritten at completion:
 * they read as issued once the job's issuance record exists, with its `issued_at` (the job's
 * `completed_at`; their items carry none), and the list drops the entries of an issuance that has
 * no record (yet, or ever: a failed job). A complete issuance's record is never removed, so each
 * execution environment keeps the ones it found (completedIssuances).
 *
 * A multi-use code's uses are held through its shards (table codeShards); the rollUpCodeUses
 * worker copies each shard's `used` onto the code (`shard_uses`, shard-uses.ts) and keeps
 * `redeemed_key` in step with them (`recordCodeShardUses`).
 */
export interface CodeItem {
  code_key: string;
  /** As issued: the prefix and the generated characters. */
  code: string;
  account_id: number;
  code_generator_id: number;
  issued_at: string;
  issuance_id: number;
  pending: boolean;
  /** An issuance job's code: which of the job's slots it fills (codes/issuance-job-codes.ts). */
  slot?: number;
  generator_key?: string;
  redeemed_key?: string;
  holder?: string;
  redeemed_at?: string;
  site_id?: string;
  pos_transaction_id?: string;
  /** What the holding redemption took off, when it recorded an amount. */
  discount_amount?: number;
  currency?: string;
  /**
   * Counted over shards (data/code-counts.ts) since its first redemption under a maximum above 1:
   * its holder field is then only what it held before, and `left` what voids gave back to it.
   */
  pooled?: boolean;
  left?: number;
  /** A multi-use code's uses per shard, as the rollUpCodeUses worker last copied them. */
  shard_uses?: ShardUses;
}

/** What the back office sees of a code: GET …/codes/{code} and each item of the list. */
export interface CodeView {
  code: string;
  code_generator_id: number;
  issued_at: string;
  redeemed_at?: string;
  site_id?: string;
  pos_transaction_id?: string;
  discount_amount?: number;
  currency?: string;
  /** Counted over shards (CodeItem); on the index, with what its shards held when the stream worker last rolled them up. */
  pooled?: boolean;
  /** The uses of a pooled code's shards as last rolled up onto its item, by shard number (the list's count: it may lag). */
  shard_uses?: ShardUses;
  /** On the index too: an entry pending of an issuance without a record is left out of the list. */
  pending?: boolean;
  issuance_id?: number;
}

/**
 * Uses the code holds: its holder's (a single-use redemption: `pos_transaction_id`, which the
 * indexes project, set and removed with `holder`) and those of its shards, as far as their
 * stream has reached the code.
 */
export const timesRedeemed = (item: Pick<CodeView, 'pos_transaction_id' | 'shard_uses'>): number =>
  (item.pos_transaction_id !== undefined ? 1 : 0) + sumOfShardUses(item.shard_uses);

/** Codes are A-Z, 0-9 and - (prefix up to 16, generated part up to 32): nothing else was ever issued. */
const ISSUABLE = /^[A-Za-z0-9-]{1,48}$/;

/**
 * The key spelling of a code typed in any case, or undefined for text that cannot be a code.
 * Only ASCII letters fold: `toUpperCase` would turn `ı` into `I` and `ß` into `SS`.
 */
export function codeSpelling(typed: string): string | undefined {
  return ISSUABLE.test(typed) ? typed.replace(/[a-z]/g, (letter) => letter.toUpperCase()) : undefined;
}

export const codeKey = (accountId: number, code: string) => `${accountId}#${code}`;
const generatorKey = (accountId: number, generatorId: number) => `${accountId}#${generatorId}`;
const redeemedKey = (accountId: number, generatorId: number, redeemed: boolean) => `${accountId}#${generatorId}#${redeemed}`;
const issuanceKey = (accountId: number, generatorId: number, issuanceId: number) => `${accountId}#${generatorId}#issuance#${issuanceId}`;

export function newCodeItem(accountId: number, generatorId: number, code: string, issuedAt: string, issuanceId: number, pending: boolean): CodeItem {
  return {
    code_key: codeKey(accountId, code),
    code,
    account_id: accountId,
    code_generator_id: generatorId,
    issued_at: issuedAt,
    issuance_id: issuanceId,
    pending,
    ...(pending ? {} : { generator_key: generatorKey(accountId, generatorId), redeemed_key: redeemedKey(accountId, generatorId, false) }),
  };
}

/**
 * One code of an issuance job, as it is written once and for all: pending of the job's issuance
 * (its id is the job's), the slot it fills, its index key already set, no `issued_at` (the
 * issuance record's is the job's `completed_at`). Listed (`generator_key`) from the start: the
 * list leaves it out until its issuance record exists.
 */
export function newJobCodeItem(accountId: number, generatorId: number, code: string, jobId: number, slot: number): Omit<CodeItem, 'issued_at'> {
  return {
    code_key: codeKey(accountId, code),
    code,
    account_id: accountId,
    code_generator_id: generatorId,
    issuance_id: jobId,
    pending: true,
    slot,
    generator_key: generatorKey(accountId, generatorId),
    redeemed_key: redeemedKey(accountId, generatorId, false),
  };
}

/**
 * One conditional PutItem, never a transaction (1 write unit, and 1 on the index): `written`,
 * or the code as it already is (an earlier copy of the same slot, or another code's).
 */
export async function putJobCode(item: Omit<CodeItem, 'issued_at'>): Promise<{ written: true } | { written: false; existing: Partial<CodeItem> | undefined }> {
  try {
    await documents.send(
      new PutCommand({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(code_key)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
    );
    return { written: true };
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    const old = (error as { Item?: Record<string, AttributeValue> }).Item;
    return { written: false, existing: old ? (unmarshall(old) as Partial<CodeItem>) : undefined };
  }
}

export function putCode(item: CodeItem): TransactItem {
  return { Put: { TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(code_key)' } };
}

/**
 * The issuance record, written by the transaction that completes an issuance: from then on its
 * pending codes read as issued. It names them (`pending_codes`, a string set) until they are all
 * finalised: the request removes the set once its own finalisation is through, and the
 * finaliseIssuances worker finalises what is left when the request was cut off (its message,
 * sent before the issuance began, names the record).
 */
export function putIssuance(
  accountId: number,
  generatorId: number,
  issuanceId: number,
  issuedAt: string,
  count: number,
  pendingCodes: readonly string[],
): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: {
        code_key: issuanceKey(accountId, generatorId, issuanceId),
        account_id: accountId,
        code_generator_id: generatorId,
        issued_at: issuedAt,
        count,
        ...(pendingCodes.length > 0 ? { pending_codes: new Set(pendingCodes) } : {}),
      },
      ConditionExpression: 'attribute_not_exists(code_key)',
    },
  };
}

/** An issuance record as the finaliseIssuances worker reads it. */
export interface IssuanceRecord {
  readonly issued_at: string;
  readonly count: number;
  /** The codes written pending and not yet known to be finalised; absent once they all are. */
  readonly pending_codes?: ReadonlySet<string>;
}

/** The record of a complete issuance (consistent), or undefined while it is not complete (or never will be). */
export async function findIssuance(accountId: number, generatorId: number, issuanceId: number): Promise<IssuanceRecord | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: TABLE, Key: { code_key: issuanceKey(accountId, generatorId, issuanceId) }, ConsistentRead: true }),
  );
  return Item as IssuanceRecord | undefined;
}

/** Every pending code of the issuance is finalised: its record stops naming them. Repeating it changes nothing. */
export async function forgetPendingCodes(accountId: number, generatorId: number, issuanceId: number, now: Date): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { code_key: issuanceKey(accountId, generatorId, issuanceId) },
        UpdateExpression: 'SET finalised_at = if_not_exists(finalised_at, :now) REMOVE pending_codes',
        ConditionExpression: 'attribute_exists(pending_codes)',
        ExpressionAttributeValues: { ':now': now.toISOString() },
      }),
    );
  } catch (error) {
    // Another finalisation of the same issuance (the request's, a second copy of the message) was first.
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
}

/**
 * A pending code of a complete issuance becomes an ordinary issued code and enters the indexes.
 * An Update, not a Put: a redemption that reached the code first keeps its holder and state.
 * Never a code of another issuance, nor one counted over shards (`pooled`: redeemed while still
 * pending, through its shards): its redeemed state follows its uses, which only
 * finalisePendingCode settles; the transaction then fails and the issuance is left to the worker.
 */
export function finaliseCode(accountId: number, generatorId: number, issuanceId: number, code: string): TransactItem {
  return {
    Update: {
      ...finalising(accountId, generatorId, issuanceId, code),
      ConditionExpression: 'attribute_exists(code_key) AND issuance_id = :issuance AND attribute_not_exists(pooled)',
    },
  };
}

function finalising(accountId: number, generatorId: number, issuanceId: number, code: string) {
  return {
    TableName: TABLE,
    Key: { code_key: codeKey(accountId, code) },
    UpdateExpression: 'SET pending = :false, generator_key = :generator, redeemed_key = if_not_exists(redeemed_key, :unredeemed)',
    ExpressionAttributeValues: {
      ':false': false,
      ':generator': generatorKey(accountId, generatorId),
      ':unredeemed': redeemedKey(accountId, generatorId, false),
      ':issuance': issuanceId,
    },
  };
}

/**
 * Finalises one pending code of a complete issuance (the finaliseIssuances worker), whatever
 * happened to it meanwhile, then keeps its redeemed state exact: a single-use redemption that
 * reached it first set its state itself (kept: `if_not_exists`); a multi-use code redeemed
 * through its shards while pending has uses that its `redeemed_key` must now follow, as the uses
 * rollup keeps it (settleRedeemedState). Safe to repeat and to race a redemption, a void, the
 * rollup, the request's own late finalisation or another copy of the worker. False when the
 * code is not this issuance's (it does not exist).
 */
export async function finalisePendingCode(accountId: number, generatorId: number, issuanceId: number, code: string): Promise<boolean> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        ...finalising(accountId, generatorId, issuanceId, code),
        ConditionExpression: 'attribute_exists(code_key) AND issuance_id = :issuance',
        ReturnValues: 'ALL_NEW',
      }),
    );
    await settleRedeemedState(codeKey(accountId, code), Attributes as CodeItem);
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export interface Holder {
  /** The holding transaction's transaction_key. */
  readonly key: string;
  readonly siteId: string;
  readonly posTransactionId: string;
  readonly redeemedAt: string;
}

/** The amount a redemption recorded for one code, when it computed one. */
export interface RecordedAmount {
  readonly discount_amount: number;
  readonly currency: string;
}

/**
 * Redeems an issued code for a transaction: fails (returning the code as it is) when another
 * transaction holds it. A pending code of a complete issuance is finalised on the way.
 */
export function redeemCode(item: CodeItem, holder: Holder, amount: RecordedAmount | undefined): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { code_key: item.code_key },
      // A pending code of a complete issuance stops being pending here: it takes its issuance's issued_at.
      UpdateExpression: `SET holder = :holder, redeemed_at = :at, site_id = :site, pos_transaction_id = :pos, redeemed_key = :redeemed, pending = :false, generator_key = :generator, issued_at = :issued${
        amount ? ', discount_amount = :amount, currency = :currency' : ''
      }`,
      ConditionExpression: 'attribute_exists(code_key) AND attribute_not_exists(holder) AND attribute_not_exists(pooled)',
      ExpressionAttributeValues: {
        ':holder': holder.key,
        ':at': holder.redeemedAt,
        ':site': holder.siteId,
        ':pos': holder.posTransactionId,
        ':redeemed': redeemedKey(item.account_id, item.code_generator_id, true),
        ':false': false,
        ':generator': generatorKey(item.account_id, item.code_generator_id),
        ':issued': item.issued_at,
        ...(amount ? { ':amount': amount.discount_amount, ':currency': amount.currency } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Releases a code its transaction holds (the void of that transaction): redeemable again. */
export function releaseCode(accountId: number, generatorId: number, code: string, holderKey: string): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { code_key: codeKey(accountId, code) },
      // The use goes back to the item (`left`), which a pooled code's counts include (code-counts.ts).
      UpdateExpression:
        'SET redeemed_key = :unredeemed, #left = if_not_exists(#left, :zero) + :one REMOVE holder, redeemed_at, site_id, pos_transaction_id, discount_amount, currency',
      ConditionExpression: 'holder = :holder',
      ExpressionAttributeNames: { '#left': 'left' },
      ExpressionAttributeValues: { ':holder': holderKey, ':unredeemed': redeemedKey(accountId, generatorId, false), ':zero': 0, ':one': 1 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

const SETTLE_ATTEMPTS = 8;

/**
 * Copies the latest uses of some of a code's shards onto it (`shard_uses`), then keeps its
 * redeemed state exact: a listed code (one with `generator_key`) is in by_redeemed's `true`
 * partition while `timesRedeemed` is at least 1, else in its `false` one. Race-free without a
 * lock: the update returns the code as it left it (ALL_NEW); when `redeemed_key` disagrees with
 * those uses, it is set on the condition that what it was judged from (`shard_uses` as read, the
 * holder present or absent) is still so. A concurrent change fails that condition, and the code
 * as it now is (ALL_OLD) is judged again. Whoever changes the uses afterwards settles the state
 * the same way (a redemption or release of a holder sets it itself). False when the code does
 * not exist.
 */
export async function recordCodeShardUses(key: string, uses: ReadonlyMap<number, number>): Promise<boolean> {
  const item = (await writeShardUses({ TableName: TABLE, Key: { code_key: key } }, 'code_key', uses)) as CodeItem | undefined;
  if (!item) return false;
  await settleRedeemedState(key, item);
  return true;
}

/**
 * Puts a listed code in the `redeemed_key` partition its uses call for, starting from `item`,
 * the code as a write just left it (see recordCodeShardUses).
 */
async function settleRedeemedState(key: string, start: CodeItem): Promise<void> {
  let item: CodeItem | undefined = start;
  for (let attempt = 0; ; attempt++) {
    if (item?.generator_key === undefined) return; // not listed (or gone): no index to keep
    const wanted = redeemedKey(item.account_id, item.code_generator_id, timesRedeemed(item) >= 1);
    if (item.redeemed_key === wanted) return;
    if (attempt >= SETTLE_ATTEMPTS) throw Object.assign(new Error(`The redeemed state of ${key} kept changing`), { name: 'TransactionConflictException' });
    try {
      await documents.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { code_key: key },
          UpdateExpression: 'SET redeemed_key = :wanted',
          ConditionExpression: `${item.shard_uses === undefined ? 'attribute_not_exists(shard_uses)' : 'shard_uses = :uses'} AND ${item.pos_transaction_id !== undefined ? 'attribute_exists' : 'attribute_not_exists'}(pos_transaction_id) AND attribute_exists(generator_key)`,
          ExpressionAttributeValues: { ':wanted': wanted, ...(item.shard_uses === undefined ? {} : { ':uses': item.shard_uses }) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return;
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'ConditionalCheckFailedException') {
        // The code as it is, in DynamoDB's typed form even through the document client.
        const current = (error as { Item?: Record<string, AttributeValue> }).Item;
        item = current ? (unmarshall(current) as CodeItem) : await currentCode(key);
      } else if (name === 'TransactionConflictException') {
        await pause(attempt);
        item = await currentCode(key);
      } else {
        throw error;
      }
    }
  }
}

async function currentCode(key: string): Promise<CodeItem | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { code_key: key }, ConsistentRead: true }));
  return Item as CodeItem | undefined;
}

/**
 * Which of these codes (key spellings, at most 100) the account has already, issued or pending:
 * one consistent BatchGetItem of their keys only.
 */
export async function takenCodes(accountId: number, codes: readonly string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  let keys: Record<string, unknown>[] = codes.map((code) => ({ code_key: codeKey(accountId, code) }));
  for (let round = 0; keys.length > 0; round++) {
    if (round >= 5) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    if (round > 0) await pause(round - 1);
    const answer = await documents.send(
      new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'code_key' } } }),
    );
    for (const item of answer.Responses?.[TABLE] ?? []) taken.add(String(item.code_key).slice(String(accountId).length + 1));
    keys = (answer.UnprocessedKeys?.[TABLE]?.Keys ?? []) as Record<string, unknown>[];
  }
  return taken;
}

/**
 * Complete issuances this execution environment has seen, with their `issued_at`: a record, once
 * written, is never removed or changed, so an entry is never stale. Bounded; cleared when full.
 */
const completedIssuances = new Map<string, string>();
const COMPLETED_ISSUANCES_KEPT = 10_000;

/** The `issued_at` of a complete issuance (a consistent GetItem, unless this environment knows it already), or undefined. */
async function issuanceIssuedAt(accountId: number, generatorId: number, issuanceId: number): Promise<string | undefined> {
  const key = issuanceKey(accountId, generatorId, issuanceId);
  const known = completedIssuances.get(key);
  if (known !== undefined) return known;
  const { Item } = await documents.send(
    new GetCommand({
      TableName: TABLE,
      Key: { code_key: key },
      ConsistentRead: true,
      // Not the codes it names while they are pending: only whether it exists, and since when.
      ProjectionExpression: 'issued_at',
    }),
  );
  if (Item === undefined) return undefined;
  if (completedIssuances.size >= COMPLETED_ISSUANCES_KEPT) completedIssuances.clear();
  completedIssuances.set(key, String(Item.issued_at));
  return String(Item.issued_at);
}

/**
 * The code as it reads when issued (not pending, or pending of an issuance that completed; its
 * `issued_at` then the issuance record's), or undefined while it does not read as issued.
 */
export async function asIssued<T extends Pick<CodeItem, 'account_id' | 'code_generator_id'> & { pending?: boolean; issuance_id?: number; issued_at?: string }>(
  item: T,
  /** Answers already looked up by this caller, by issuance id (a list page meets many entries of one job). */
  lookedUp?: Map<number, Promise<string | undefined>>,
): Promise<(T & { issued_at: string }) | undefined> {
  if (!item.pending) return item as T & { issued_at: string };
  const issuanceId = item.issuance_id!;
  let lookup = lookedUp?.get(issuanceId);
  if (!lookup) {
    lookup = issuanceIssuedAt(item.account_id, item.code_generator_id, issuanceId);
    lookedUp?.set(issuanceId, lookup);
  }
  const issuedAt = await lookup;
  return issuedAt === undefined ? undefined : { ...item, issued_at: issuedAt };
}

/** The code as issued, if this generator of this account issued it (letters in any case). */
export async function findIssuedCode(accountId: number, generatorId: number, typed: string): Promise<CodeItem | undefined> {
  const code = codeSpelling(typed);
  if (code === undefined) return undefined;
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { code_key: codeKey(accountId, code) }, ConsistentRead: true }));
  const item = Item as CodeItem | undefined;
  if (!item || item.code_generator_id !== generatorId) return undefined;
  return asIssued(item);
}

/** Rounds of Queries one page of the list may take to fill itself past entries of issuances not complete. */
const LIST_ROUNDS = 4;

/**
 * One page of a generator's issued codes in code order after `afterCode`, optionally only the
 * redeemed or unredeemed ones, from the sparse index by_redeemed (eventually consistent: about a
 * second). One state is one partition: a Query of `limit + 1` entries. All codes are the merge
 * of the two partitions, read side by side from the same position (2 Queries); the merged order
 * holds up to the smaller of the last codes of the partitions that have more.
 *
 * Entries pending of an issuance without a record (a job still running, or failed) are left out,
 * and the page reads on to fill itself, at most LIST_ROUNDS rounds: while a job of this generator
 * runs, a page may hold fewer codes than `limit` (none, even) with a `next` position to go on
 * from. Otherwise every page but the last is full.
 */
export async function listCodes(accountId: number, generatorId: number, options: { redeemed?: boolean; afterCode?: string; limit: number }) {
  const states = options.redeemed === undefined ? [false, true] : [options.redeemed];
  const found: CodeView[] = [];
  // One read per issuance met on the page, not per entry: a running job's entries have no record to cache.
  const lookedUp = new Map<number, Promise<string | undefined>>();
  let after = options.afterCode;
  let exhausted = false;
  for (let round = 0; round < LIST_ROUNDS && !exhausted && found.length <= options.limit; round++) {
    const want = options.limit + 1 - found.length;
    const pages = await Promise.all(states.map((state) => queryState(accountId, generatorId, state, after, want)));
    const open = pages.filter((page) => page.items.length >= want);
    exhausted = open.length === 0;
    const bound = exhausted ? undefined : open.map((page) => page.items.at(-1)!.code).sort()[0];
    const merged = pages
      .flatMap((page) => page.items)
      .filter((item) => bound === undefined || item.code <= bound)
      .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
    for (const item of merged) {
      const issued = await asIssued({ ...item, account_id: accountId }, lookedUp);
      if (issued) found.push(listed(issued));
    }
    after = bound;
  }
  const more = found.length > options.limit || !exhausted;
  const items = found.slice(0, options.limit);
  // A page cut short by entries of an issuance not complete goes on from where its reading stopped.
  const next = found.length > options.limit ? items.at(-1)?.code : after;
  return { items, more, ...(more && next !== undefined ? { next } : {}) };
}

/** The entry as the list shows it: the index's own attributes, without those that only decide whether it shows. */
function listed(item: CodeView & { account_id: number }): CodeView {
  const { account_id: _account, pending: _pending, issuance_id: _issuance, ...view } = item;
  return view as CodeView;
}

async function queryState(accountId: number, generatorId: number, redeemed: boolean, afterCode: string | undefined, limit: number) {
  const page = await documents.send(
    new QueryCommand({
      TableName: TABLE,
      IndexName: 'by_redeemed',
      // No projection: a Query is billed on the index entries it reads, whatever it returns.
      KeyConditionExpression: `redeemed_key = :key${afterCode !== undefined ? ' AND #code > :after' : ''}`,
      ...(afterCode !== undefined ? { ExpressionAttributeNames: { '#code': 'code' } } : {}),
      ExpressionAttributeValues: { ':key': redeemedKey(accountId, generatorId, redeemed), ...(afterCode !== undefined ? { ':after': afterCode } : {}) },
      Limit: limit,
    }),
  );
  return { items: (page.Items ?? []) as CodeView[] };
}
