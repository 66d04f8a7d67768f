/**
 * The README's "A day in the life", written only against the typed client (client/index.ts): no
 * cast, no `any`, every request and answer typed by the OpenAPI documents. Each step checks the
 * status the README shows and throws with the answer otherwise; test/e2e/client/day-in-the-life.test.ts
 * runs it against the local API.
 *
 * Like the README it wants a fresh account (its Idempotency-Keys would replay an earlier day's
 * answers). `token` is the back office's (scope all, or core when `till` is given); `till` a pos
 * token of the same account, `otherAccount` a token of another account, `webhook` a receiver of the
 * integrator's: each part of the day that needs one is skipped without it.
 */
import { createTillgate, type TillgateOptions } from '../client/index.ts';

export interface DayOptions {
  /** A pos-scoped token of the same account: the till's. Without it the till uses `token`. */
  readonly till?: string;
  /** A token of another account, to see tenant isolation. */
  readonly otherAccount?: string;
  /** A receiver of webhook deliveries: its URL, and what to do with the endpoint's signing secret (the answer that creates the endpoint is the only one to show it). */
  readonly webhook?: { readonly url: string; readonly secret: (secret: string) => void | Promise<void> };
  /** Sends every request (default: the global fetch). */
  readonly fetch?: TillgateOptions['fetch'];
  /** How often to look at the webhook deliveries while some are pending, in ms (default 1000), and for how long at most (default 60 s). */
  readonly deliveries?: { readonly everyMs?: number; readonly forMs?: number };
}

export interface Day {
  readonly generatorId: number;
  /** The promotion's end date as created (midnight UTC 30 days ahead), and when the back office ended it. */
  readonly validUntil: { readonly created: string; readonly ended: string };
  readonly codes: string[];
  /** The code the customer brought. */
  readonly code: string;
  readonly redeemedAt: string;
  /** What the code took off the customer's basket, as the check and the redemption said. */
  readonly off: { readonly checked: string; readonly redeemed: string };
  /** Why the second flyer was refused: below the minimum at noon, expired in the evening (message_id and cashier text). */
  readonly secondFlyer: { readonly noon: string; readonly evening: string };
  /** The void's event, and when it was voided. */
  readonly voided: { readonly eventId: number; readonly voidedAt: string };
  readonly endpoint?: { readonly id: number; readonly deliveries: { readonly event_id: number; readonly event_type: string; readonly status: string }[] };
  /** The export of the generator's codes: its rows, and the downloaded file's header and rows after it. */
  readonly file: { readonly rows: number; readonly header: string; readonly lines: number };
  /** The events the night's poller acknowledged, in the order it did. */
  readonly acknowledged: number[];
  /** The evening's issuance job, as it read once completed. */
  readonly issuanceJob: { readonly count: number; readonly issued: number; readonly completedAt: string | null };
  /** One line per request: what it was for and the status it got. */
  readonly transcript: string[];
}

/** The answer that did not come as the README says, with its body. */
function unexpected(step: string, answer: { status: number; data?: unknown; error?: unknown }): Error {
  return new Error(`${step}: got ${answer.status} ${JSON.stringify(answer.error ?? answer.data ?? null)}`);
}

export async function dayInTheLife(urls: { readonly core: string; readonly pos: string }, token: string, options: DayOptions = {}): Promise<Day> {
  const transcript: string[] = [];
  const connect = (asToken: string) =>
    createTillgate({ coreUrl: urls.core, posUrl: urls.pos, token: asToken, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const { core } = connect(token);
  const { pos } = connect(options.till ?? token);
  const note = (step: string, answer: { status: number }) => transcript.push(`${step}: ${answer.status}`);

  // Morning: the back office creates a promotion, a code generator with terms: 10 % off a sale of at least
  // 20.00 EUR (amounts in minor units), until midnight UTC 30 days from now. With Idempotency-Key a retry
  // returns the first response.
  const until = new Date(Date.now() + 30 * 86_400_000);
  until.setUTCHours(0, 0, 0, 0);
  const created = await core.POST('/v1.0/codegen', {
    params: { header: { 'Idempotency-Key': 'winter-2026' } },
    body: {
      code_generator: {
        generation_type: 'tillgate',
        buffer_type: 'default',
        code_length: 8,
        description: 'Winter promotion',
        prefix: 'WIN-',
        store_id: 42,
        status: 'active',
        discount: { type: 'percent', percent_off: 10 },
        minimum_basket: { amount: 2000, currency: 'EUR' },
        valid_until: until.toISOString(),
      },
    },
  });
  note('create the generator', created);
  if (created.status !== 201 || created.data.code_generator.valid_until !== until.toISOString()) throw unexpected('create the generator', created);
  const generatorId = created.data.code_generator.id;
  const id = { id: generatorId };

  // It issues codes for the flyers; the same call again, same key, returns the same codes and issues none.
  const issue = () => core.POST('/v1.0/codegen/{id}/codes', { params: { path: id, header: { 'Idempotency-Key': 'winter-batch-1' } }, body: { count: 5 } });
  const issued = await issue();
  note('issue 5 codes', issued);
  if (issued.status !== 201) throw unexpected('issue 5 codes', issued);
  const again = await issue();
  note('issue again, same key', again);
  if (again.status !== 201 || again.data.codes.join() !== issued.data.codes.join()) throw unexpected('issue again, same key', again);
  const codes = issued.data.codes;
  // The first flyer's code, and a second one for another customer.
  const [code, secondCode] = codes;
  if (code === undefined || secondCode === undefined) throw unexpected('issue 5 codes', issued);

  // The back office registers a webhook endpoint for voids and releases; the secret is in this answer only.
  let endpointId: number | undefined;
  if (options.webhook) {
    const endpoint = await core.POST('/v1.0/webhook_endpoints', {
      body: { webhook_endpoint: { url: options.webhook.url, event_types: ['transaction.voided', 'codes.released'], description: 'back office' } },
    });
    note('register a webhook endpoint', endpoint);
    if (endpoint.status !== 201) throw unexpected('register a webhook endpoint', endpoint);
    // The secret is absent from a replay of the creation (with an Idempotency-Key): this one is a first answer.
    const hook = endpoint.data.webhook_endpoint;
    if (hook.secret === undefined) throw unexpected('register a webhook endpoint', endpoint);
    endpointId = hook.id;
    await options.webhook.secret(hook.secret);
  }

  // Noon: a code read out on the phone, in lower case; the answer spells it as issued, not redeemed yet.
  const lookUp = () => core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id: generatorId, code: code.toLowerCase() } } });
  const noon = await lookUp();
  note('look the code up', noon);
  if (noon.status !== 200 || noon.data.code.code !== code || noon.data.code.redeemed_at !== null) throw unexpected('look the code up', noon);

  // A till's token serves the pos host only: on the core host, 403.
  if (options.till) {
    const refused = await connect(options.till).core.POST('/v1.0/codegen/{id}/codes', { params: { path: id }, body: { count: 1000 } });
    note('the till asks for codes', refused);
    if (refused.status !== 403) throw unexpected('the till asks for codes', refused);
  }

  // The till checks the code (typed in any case) with the sale's basket, 25.00 EUR, and sees what it takes off
  // (10 %: 2.50 EUR); then it redeems it as part of sale 1234.
  const basket = (total: number) => ({ total, currency: 'EUR' });
  const checked = await pos.POST('/v2.0/validated_codes', {
    body: { transaction: { site_id: 'S-0042', pos_transaction_id: '1234', basket: basket(2500), codes: [code.toLowerCase()] } },
  });
  note('check the code with a basket of 25.00 EUR', checked);
  const [check] = checked.status === 200 ? checked.data.transaction.display_messages : [];
  if (check?.message_content.code !== code || check.message_content.discount_amount !== 250 || check.message_content.currency !== 'EUR')
    throw unexpected('check the code with a basket of 25.00 EUR', checked);
  const redeem = (posTransactionId: string, total: number, tillId?: string, which = code) =>
    pos.POST('/v2.0/redeemed_codes', {
      body: {
        transaction: { site_id: 'S-0042', pos_transaction_id: posTransactionId, ...(tillId ? { till_id: tillId } : {}), basket: basket(total), codes: [which] },
      },
    });
  const redeemed = await redeem('1234', 2500, 'T3');
  note('redeem it in sale 1234', redeemed);
  if (redeemed.status !== 200) throw unexpected('redeem it in sale 1234', redeemed);
  const [redemption] = redeemed.data.transaction.display_messages;
  if (redemption?.message_content.discount_amount !== 250 || redemption.message_content.currency !== 'EUR')
    throw unexpected('redeem it in sale 1234', redeemed);
  const redeemedAt = redemption.message_content.redeemed_at;

  // The customer's friend tries the same flyer at another till, in a sale of 30.00 EUR: refused, with a message the cashier can act on.
  const friend = await redeem('1240', 3000, 'T1');
  note('redeem it in sale 1240', friend);
  if (friend.status !== 409 || friend.error.transaction.display_messages[0]?.message_id !== 'code_already_redeemed')
    throw unexpected('redeem it in sale 1240', friend);

  // Another customer brings the second flyer with a sale of 18.50 EUR, below the promotion's minimum: refused.
  const small = await redeem('1241', 1850, 'T1', secondCode);
  note('redeem the second code in sale 1241, 18.50 EUR', small);
  const [below] = small.status === 409 ? small.error.transaction.display_messages : [];
  if (below?.message_id !== 'basket_below_minimum' || below.message_content.basket_total !== 1850 || below.message_content.minimum_basket.amount !== 2000)
    throw unexpected('redeem the second code in sale 1241, 18.50 EUR', small);

  // The back office sees which codes were used, where and when. The list reads an index that may lag a
  // redemption by about a second (the document says so): asked again for a few seconds at most.
  const listed = (answer: { status: number; data?: { codes: { code: string; site_id: string | null; pos_transaction_id: string | null }[] } }) =>
    answer.data?.codes.map((c) => `${c.code} ${c.site_id}/${c.pos_transaction_id}`).join();
  let used = await core.GET('/v1.0/codegen/{id}/codes', { params: { path: id, query: { redeemed: true, limit: 100 } } });
  for (let tries = 1; used.status === 200 && listed(used) !== `${code} S-0042/1234` && tries < 10; tries++) {
    await new Promise((done) => setTimeout(done, 500));
    used = await core.GET('/v1.0/codegen/{id}/codes', { params: { path: id, query: { redeemed: true, limit: 100 } } });
  }
  note('list the redeemed codes', used);
  if (used.status !== 200 || listed(used) !== `${code} S-0042/1234`) throw unexpected('list the redeemed codes', used);

  // Evening: the back office ends the promotion now: valid_until becomes this moment. Read the ETag, change it
  // with If-Match; a colleague who read the ETag before and tries to lift the end date with it gets 412.
  const read = await core.GET('/v1.0/codegen/{id}', { params: { path: id } });
  note('read the generator', read);
  const etag = read.response.headers.get('etag');
  if (read.status !== 200 || etag === null) throw unexpected('read the generator', read);
  const endedAt = new Date().toISOString();
  const ended = await core.PATCH('/v1.0/codegen/{id}', {
    params: { path: id, header: { 'If-Match': etag } },
    body: { code_generator: { valid_until: endedAt, description: 'Winter promotion (ended)' } },
  });
  note('end it now with If-Match', ended);
  if (ended.status !== 200 || ended.data.code_generator.valid_until !== endedAt || ended.data.code_generator.status !== 'active')
    throw unexpected('end it now with If-Match', ended);
  const staleTag = await core.PATCH('/v1.0/codegen/{id}', {
    params: { path: id, header: { 'If-Match': etag } },
    body: { code_generator: { valid_until: null } },
  });
  note('lift the end date with the old If-Match', staleTag);
  if (staleTag.status !== 412) throw unexpected('lift the end date with the old If-Match', staleTag);

  // The customer with the second flyer comes back with 26.00 EUR: too late, the code is refused as expired.
  const late = await redeem('1242', 2600, 'T1', secondCode);
  note('redeem the second code in sale 1242, 26.00 EUR', late);
  const [expired] = late.status === 409 ? late.error.transaction.display_messages : [];
  if (expired?.message_id !== 'code_expired' || expired.message_content.valid_until !== endedAt)
    throw unexpected('redeem the second code in sale 1242, 26.00 EUR', late);

  // At the till, sale 1234 is voided: the code it held is released. The network drops the answer and the
  // upgraded till sends the void again with other fields: the first body comes back, nothing is written.
  const voided = await pos.POST('/v2.0/voided_transactions', {
    body: {
      transaction: {
        site_id: 'S-0042',
        pos_transaction_id: '1234',
        occurred_at: '2026-11-21T14:03:00Z',
        business_date: '2026-11-21',
        till_id: 'T3',
        receipt_id: 'RC-99',
      },
    },
  });
  note('void sale 1234', voided);
  if (voided.status !== 200) throw unexpected('void sale 1234', voided);
  let voidEvent: Day['voided'] | undefined;
  let released = 0;
  for (const message of voided.data.transaction.display_messages) {
    switch (message.message_id) {
      case 'transaction_voided':
        voidEvent = { eventId: message.message_content.event_id, voidedAt: message.message_content.voided_at };
        break;
      case 'code_released':
        if (message.message_content.code === code) released += 1;
        break;
    }
  }
  if (voidEvent === undefined || released !== 1) throw unexpected('void sale 1234', voided);
  const replayed = await pos.POST('/v2.0/voided_transactions', {
    body: { transaction: { site_id: 'S-0042', pos_transaction_id: '1234', posagent_version: '9.5.0' } },
  });
  note('void it again', replayed);
  if (
    replayed.status !== 200 ||
    replayed.response.headers.get('idempotent-replayed') !== 'true' ||
    JSON.stringify(replayed.data) !== JSON.stringify(voided.data)
  )
    throw unexpected('void it again', replayed);

  // The code is released; the voided sale can redeem nothing more, and the answer names every reason.
  const evening = await lookUp();
  note('look the code up again', evening);
  if (evening.status !== 200 || evening.data.code.redeemed_at !== null) throw unexpected('look the code up again', evening);
  const onVoided = await redeem('1234', 2500);
  note('redeem it in the voided sale', onVoided);
  if (onVoided.status !== 409) throw unexpected('redeem it in the voided sale', onVoided);
  const reasons = onVoided.error.transaction.display_messages.map((message) => {
    switch (message.message_id) {
      case 'transaction_voided':
        return `voided ${message.message_content.site_id}/${message.message_content.pos_transaction_id}`;
      case 'code_expired':
        return `expired ${message.message_content.code_generator_id}`;
      default:
        return message.message_id;
    }
  });
  if (reasons.join() !== `voided S-0042/1234,expired ${generatorId}`) throw unexpected('redeem it in the voided sale', onVoided);

  // The endpoint's deliveries: the void and the release, once neither is pending any more.
  let endpoint: Day['endpoint'];
  if (endpointId !== undefined) {
    const path = { id: endpointId };
    const everyMs = options.deliveries?.everyMs ?? 1000;
    const until = Date.now() + (options.deliveries?.forMs ?? 60_000);
    for (;;) {
      const page = await core.GET('/v1.0/webhook_endpoints/{id}/deliveries', { params: { path } });
      if (page.status !== 200) throw unexpected('list the deliveries', page);
      const deliveries = page.data.deliveries;
      if ((deliveries.length >= 2 && deliveries.every((delivery) => delivery.status !== 'pending')) || Date.now() > until) {
        note('list the deliveries', page);
        endpoint = { id: endpointId, deliveries: deliveries.map(({ event_id, event_type, status }) => ({ event_id, event_type, status })) };
        break;
      }
      await new Promise((done) => setTimeout(done, everyMs));
    }
  }

  // Evening: the agency wants the codes as a file. The export answers 202 at once; a worker writes the CSV to S3,
  // and once the export reads completed its download_url (a presigned URL, 15 minutes) fetches it: a header row,
  // then one row per code. The URL is S3's, not the API's: fetched as it is, without a token.
  const exported = await core.POST('/v1.0/codegen/{id}/exports', { params: { path: id }, body: {} });
  note('export the codes', exported);
  if (exported.status !== 202) throw unexpected('export the codes', exported);
  const exportPath = { id: exported.data.export.id };
  let file: Day['file'];
  for (let attempt = 1; ; attempt++) {
    const read = await core.GET('/v1.0/exports/{id}', { params: { path: exportPath } });
    if (read.status !== 200 || read.data.export.status === 'failed' || attempt > 100) throw unexpected('read the export', read);
    if (read.data.export.status === 'completed' && read.data.export.download_url) {
      note('read the export, completed', read);
      const download = await fetch(read.data.export.download_url);
      note('download the file', download);
      if (download.status !== 200) throw new Error(`download the file: got ${download.status}`);
      const lines = (await download.text()).split('\r\n');
      file = { rows: read.data.export.rows, header: lines[0] ?? '', lines: lines.length - 2 };
      break;
    }
    await new Promise((done) => setTimeout(done, 100));
  }

  // Night: the integration polls the feed, two to a page, each page's next_cursor asking for the next.
  const first = await core.GET('/v1.0/events', { params: { query: { limit: 2 } } });
  note('the first page of the feed', first);
  if (first.status !== 200 || first.data.events.length !== 2 || first.data.next_cursor === null) throw unexpected('the first page of the feed', first);
  const second = await core.GET('/v1.0/events', { params: { query: { limit: 2, cursor: first.data.next_cursor } } });
  note('the second page', second);
  if (second.status !== 200 || second.data.events.length !== 2) throw unexpected('the second page', second);

  // It acknowledges each event with DELETE (200, a body of one space: the client reads the status), round after
  // round from the first page, until the feed is empty; a second DELETE of an event is a 404.
  const acknowledged: number[] = [];
  for (;;) {
    const round = await core.GET('/v1.0/events');
    if (round.status !== 200) throw unexpected('read the feed', round);
    if (round.data.events.length === 0) {
      note('the feed, at the end', round);
      break;
    }
    for (const event of round.data.events) {
      const deleted = await core.DELETE('/v1.0/events/{id}', { params: { path: { id: event.id } } });
      note(`acknowledge event ${event.id}`, deleted);
      if (deleted.status !== 200) throw unexpected(`acknowledge event ${event.id}`, deleted);
      acknowledged.push(event.id);
    }
  }
  const firstEvent = acknowledged[0];
  if (firstEvent === undefined) throw new Error('the feed was empty');
  const twice = await core.DELETE('/v1.0/events/{id}', { params: { path: { id: firstEvent } } });
  note('acknowledge the first event again', twice);
  if (twice.status !== 404) throw unexpected('acknowledge the first event again', twice);

  // Tenant isolation: another account sees nothing of this one, exactly as if absent.
  if (options.otherAccount) {
    const { core: other } = connect(options.otherAccount);
    const generator = await other.GET('/v1.0/codegen/{id}', { params: { path: id } });
    note('another account reads the generator', generator);
    if (generator.status !== 404) throw unexpected('another account reads the generator', generator);
    const itsCode = await other.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id: generatorId, code } } });
    note('another account looks the code up', itsCode);
    if (itsCode.status !== 404) throw unexpected('another account looks the code up', itsCode);
    const generators = await other.GET('/v1.0/codegen');
    note('another account lists its generators', generators);
    if (generators.status !== 200 || generators.data.code_generators.length !== 0) throw unexpected('another account lists its generators', generators);
  }

  // Evening: the chain orders codes for its receipts as an issuance job (up to 1,000,000 codes; 1,000
  // here, so that the day stays short on a laptop), polled until it completes: all its codes are
  // issued at once, at its completed_at, or none of them.
  const started = await core.POST('/v1.0/codegen/{id}/issuance_jobs', { params: { path: id }, body: { count: 1000 } });
  note('start an issuance job of 1,000 codes', started);
  if (started.status !== 202) throw unexpected('start an issuance job of 1,000 codes', started);
  let job = started.data.issuance_job;
  for (let poll = 0; job.status === 'running' && poll < 600; poll++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const read = await core.GET('/v1.0/issuance_jobs/{id}', { params: { path: { id: job.id } } });
    if (read.status !== 200) throw unexpected('read the issuance job', read);
    job = read.data.issuance_job;
  }
  transcript.push(`the issuance job: ${job.status}`);
  if (job.status !== 'completed') throw new Error(`the issuance job: ${job.status} ${job.error ?? 'after 2 minutes'}`);

  // Mistakes get a clear 4xx: what the types cannot catch (a code length out of range), and a till without a valid token.
  const mistake = await core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 2, store_id: 42 } } });
  note('a code length out of range', mistake);
  if (mistake.status !== 422 || mistake.error.errors[0]?.field !== 'code_generator.code_length') throw unexpected('a code length out of range', mistake);
  const stranger = await connect('not-a-token').pos.POST('/v2.0/voided_transactions', {
    body: { transaction: { site_id: 'S-0042', pos_transaction_id: '1235' } },
  });
  note('a void without a valid token', stranger);
  if (stranger.status !== 401 || stranger.error.transaction.display_messages[0]?.message_id !== 'unauthorized')
    throw unexpected('a void without a valid token', stranger);

  return {
    generatorId,
    validUntil: { created: until.toISOString(), ended: endedAt },
    codes,
    code,
    redeemedAt,
    off: { checked: check.message, redeemed: redemption.message },
    secondFlyer: { noon: `${below.message_id}: ${below.message}`, evening: `${expired.message_id}: ${expired.message}` },
    voided: voidEvent,
    ...(endpoint ? { endpoint } : {}),
    file,
    acknowledged,
    issuanceJob: { count: job.count, issued: job.issued, completedAt: job.completed_at },
    transcript,
  };
}
