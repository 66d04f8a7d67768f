import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { nextId } from '../../../functions/data/ids.ts';
import { logger } from '../../../functions/runtime/observability.ts';
import { handler as createCodeGenerator } from '../../../functions/codes/create-code-generator.ts';
import { handler as voidTransaction } from '../../../functions/redemption/void-transaction.ts';
import { newAccount } from '../../support/accounts.ts';
import { invoke } from '../../support/invoke.ts';

/**
 * A fresh id that is already taken (the id counter restored behind its table) is neither a
 * duplicate request nor contention: the write is told apart by the per-item cancellation
 * reasons, logged as an id collision naming the table and the id, and retried with a new block.
 * The record already there is left as it was.
 */
afterEach(() => vi.restoreAllMocks());

describe('a fresh id that is already in use', () => {
  it('POST /v1.0/codegen: logs id_collision for the generator id, draws a new block, answers 201', async () => {
    const account = await newAccount();
    const taken = (await nextId()) + 1; // the id the next create draws from this environment's block
    const squatter = { account_id: account.accountId, id: taken, store_key: 'restored', description: 'from a backup' };
    await documents.send(new PutCommand({ TableName: tableName('codeGenerators'), Item: squatter }));
    const errors = vi.spyOn(logger, 'error');

    const response = await invoke(createCodeGenerator, 'createCodeGenerator', '/v1.0/codegen', {
      headers: { 'X-Auth-Token': account.token },
      body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 3 } },
    });

    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body).code_generator.id).not.toBe(taken);
    expect(errors).toHaveBeenCalledWith('fresh id already in use: the id counter is behind the table', {
      table: 'codeGenerators',
      id: taken,
      error_code: 'id_collision',
    });
    const { Item } = await documents.send(new GetCommand({ TableName: tableName('codeGenerators'), Key: { account_id: account.accountId, id: taken } }));
    expect(Item).toEqual(squatter);
  });

  it('POST /v2.0/voided_transactions: logs id_collision for the event id, answers 200 with a new event id', async () => {
    const account = await newAccount();
    const taken = (await nextId()) + 1;
    const squatter = { account_id: account.accountId, id: taken, type: 'transaction.voided', resource_id: 'old', created_at: 'x', expires_at: 4_000_000_000 };
    await documents.send(new PutCommand({ TableName: tableName('events'), Item: squatter }));
    const errors = vi.spyOn(logger, 'error');

    const response = await invoke(voidTransaction, 'voidTransaction', '/v2.0/voided_transactions', {
      headers: { 'X-Auth-Token': account.token },
      body: { transaction: { site_id: 'S1', pos_transaction_id: 'P1' } },
    });

    expect(response.statusCode).toBe(200);
    const eventId = JSON.parse(response.body).transaction.display_messages[0].message_content.event_id;
    expect(eventId).not.toBe(taken);
    expect(errors).toHaveBeenCalledWith('fresh id already in use: the id counter is behind the table', {
      table: 'events',
      id: taken,
      error_code: 'id_collision',
    });
  });
});
