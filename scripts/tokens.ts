import { parseArgs } from 'node:util';
import { tableNamesWithPrefix } from '../local/dynamodb.ts';
import { localSettings } from '../local/settings.ts';
import { defaults } from '../infra/config.ts';

const usage = `Usage: npm run tokens -- <command> [options]

Commands:
  create --account N --scope SCOPE --name NAME [--site SITE_ID]...
                         Issue a token for account N; it is printed once, only its hash is stored.
                         SCOPE (required): pos (the pos host: tills), core (the core host: back
                         office and integrations) or all. NAME: printable text, 1 to 64 characters.
                         --site (scope pos only, repeatable): the till may void, redeem and check
                         only for these site_ids (compared exactly); without it, every site.
  list                   List keys: id, account, scope, sites (* for every site), name, created,
                         revoked. Never the tokens.
  revoke KEY_ID          Revoke a key; requests with its token get 401.
  scope KEY_ID SCOPE     Give an existing key a scope (pos, core or all), its token unchanged: for
                         keys issued before scopes existed (listed with scope "-", refused with
                         403 until they have one), or to narrow a key.

Target (default: the local stack's DynamoDB, started by npm start):
  --aws            Use AWS: credentials and region from the usual AWS environment/profile,
                   table from --table or API_KEYS_TABLE (the stack output ApiKeysTableName).
  --table NAME     Physical name of the API keys table.
`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    account: { type: 'string' },
    name: { type: 'string' },
    scope: { type: 'string' },
    site: { type: 'string', multiple: true },
    aws: { type: 'boolean', default: false },
    table: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const fail = (message: string): never => {
  console.error(`tokens: ${message}\n\n${usage}`);
  process.exit(2);
};

const [command, ...rest] = positionals;
if (values.help || !command) {
  console.log(usage);
  process.exit(values.help ? 0 : 2);
}

// Point the data layer at the target before it loads: it reads its configuration at import time.
const settings = localSettings();
if (values.aws) {
  delete process.env.DYNAMODB_ENDPOINT;
  process.env.API_KEYS_TABLE = values.table ?? process.env.API_KEYS_TABLE ?? fail('--aws needs --table NAME or API_KEYS_TABLE');
} else {
  process.env.DYNAMODB_ENDPOINT = settings.endpoint;
  process.env.API_KEYS_TABLE = values.table ?? tableNamesWithPrefix(settings.tablePrefix).apiKeys;
  process.env.DYNAMODB_MAX_ATTEMPTS = '1';
}
const target = values.aws ? `AWS table ${process.env.API_KEYS_TABLE}` : `local table ${process.env.API_KEYS_TABLE} at ${settings.endpoint}`;

/**
 * How long a change may go unseen: in AWS the stage's token cache (its tokenCacheSeconds); the
 * local stack has none unless `npm start` was given TOKEN_CACHE_SECONDS, which this tool reads
 * from the same shell, as it reads the ports.
 */
function cacheNotice(what: string): string | undefined {
  if (values.aws) return `Running functions may ${what} for up to the stage's tokenCacheSeconds (default ${defaults.tokenCacheSeconds}) more.`;
  const seconds = Number(process.env.TOKEN_CACHE_SECONDS ?? 0);
  return seconds > 0 ? `npm start, run with TOKEN_CACHE_SECONDS=${seconds} as in this shell, may ${what} for up to ${seconds} s more.` : undefined;
}

const { issueToken, isTokenScope, tokenNameProblem, tokenSitesProblem, TOKEN_SCOPES } = await import('../functions/http/tokens.ts');
const { listApiKeys, revokeApiKey, setApiKeyScope } = await import('../functions/data/api-keys.ts');

const scopeArgument = (value: string | undefined, where: string) =>
  isTokenScope(value) ? value : fail(`${where} must be one of ${TOKEN_SCOPES.join(', ')}${value === undefined ? '' : `, got "${value}"`}`);

try {
  switch (command) {
    case 'create': {
      const account = Number(values.account);
      if (!Number.isSafeInteger(account) || account < 1) fail('--account must be a positive integer');
      const scope = scopeArgument(values.scope, '--scope');
      const name = values.name ?? '';
      const problem = tokenNameProblem(name);
      if (problem) fail(`--name ${problem}`);
      const sites = values.site;
      const sitesProblem = sites === undefined ? undefined : tokenSitesProblem(scope, sites);
      if (sitesProblem) fail(`--site ${sitesProblem}`);
      const { token, key } = await issueToken(account, name, scope, sites === undefined ? {} : { sites });
      const serves = sites === undefined ? '' : `, sites ${sites.map((site) => JSON.stringify(site)).join(', ')}`;
      console.error(`Created ${key.key_id} for account ${account} ("${name}", scope ${scope}${serves}) in ${target}.`);
      console.error('The token follows. It is shown this once; store it in your secret manager now.');
      console.log(token);
      break;
    }
    case 'list': {
      const keys = await listApiKeys();
      console.log(['key_id', 'account_id', 'scope', 'sites', 'name', 'created_at', 'revoked_at'].join('\t'));
      for (const key of keys) {
        // A name written before names were checked is shown escaped, so it cannot forge a row.
        const name = tokenNameProblem(key.name) ? JSON.stringify(key.name) : key.name;
        // Sites as a JSON list (a site_id may hold a comma or a space); * for every site.
        const sites = Array.isArray(key.sites) ? JSON.stringify(key.sites) : '*';
        console.log([key.key_id, key.account_id, key.scope ?? '-', sites, name, key.created_at, key.revoked_at ?? '-'].join('\t'));
      }
      const unscoped = keys.filter((key) => key.scope === undefined && key.revoked_at === undefined).length;
      if (unscoped > 0) console.error(`${unscoped} key(s) have no scope (scope "-"): they are refused with 403 until given one with \`scope KEY_ID SCOPE\`.`);
      console.error(`${keys.length} key(s) in ${target}.`);
      break;
    }
    case 'revoke': {
      const keyId = rest[0] ?? fail('revoke needs a KEY_ID (see `list`)');
      const key = await revokeApiKey(keyId, new Date());
      if (!key) fail(`no key ${keyId} in ${target}`);
      console.log(`Revoked ${key!.key_id} (account ${key!.account_id}, "${key!.name}") at ${key!.revoked_at}.`);
      const notice = cacheNotice('accept the token');
      if (notice) console.error(notice);
      break;
    }
    case 'scope': {
      const keyId = rest[0] ?? fail('scope needs a KEY_ID (see `list`) and a SCOPE');
      const scope = scopeArgument(rest[1], 'SCOPE');
      const bound = (await listApiKeys()).find((k) => k.key_id === keyId)?.sites;
      if (bound !== undefined && scope !== 'pos') {
        fail(`${keyId} is bound to sites ${JSON.stringify(bound)}: only scope pos serves a till's sites; issue a new token of scope ${scope} instead`);
      }
      const key = await setApiKeyScope(keyId, scope);
      if (!key) fail(`no key ${keyId} in ${target}`);
      console.log(`Key ${key!.key_id} (account ${key!.account_id}, "${key!.name}") now has scope ${key!.scope}.`);
      const notice = cacheNotice('use the previous scope');
      if (notice) console.error(notice);
      break;
    }
    default:
      fail(`unknown command "${command}"`);
  }
} catch (error) {
  const e = error as Error & { code?: string };
  if (!values.aws && (e.code === 'ECONNREFUSED' || /ECONNREFUSED/.test(String(e.cause ?? e.message)))) {
    console.error(`tokens: DynamoDB Local is not reachable at ${settings.endpoint}. Start the local stack with \`npm start\` first, or use --aws.`);
  } else if (e.name === 'ResourceNotFoundException') {
    console.error(`tokens: table ${process.env.API_KEYS_TABLE} does not exist in ${values.aws ? 'AWS' : settings.endpoint}.`);
  } else {
    console.error(`tokens: ${e.name}: ${e.message}`);
  }
  process.exit(1);
}
