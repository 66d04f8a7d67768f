import { describe, expect, it } from 'vitest';
import { api } from '../../../functions/http/chain.ts';
import codePath from '../../../functions/http/schemas/codePath.generated.ts';
import codesIssue from '../../../functions/http/schemas/codesIssue.generated.ts';
import idPath from '../../../functions/http/schemas/idPath.generated.ts';

/** A handler passes its compiled validators to api(); its row in functions/routes.ts names them. */
describe('api() checks a handler against its row of the route table', () => {
  it("builds the chain of a handler whose host and validators are its row's", () => {
    expect(() => api({ host: 'core', operationId: 'issueCodes', params: idPath, body: codesIssue })).not.toThrow();
  });

  it('fails at load on a validator its row does not name, saying which', () => {
    expect(() => api({ host: 'core', operationId: 'getEvent', params: codePath })).toThrow(
      'getEvent does not match its row in functions/routes.ts: params: the row says idPath, the handler passes codePath',
    );
  });

  it('fails at load on a validator missing, or one the row has no place for', () => {
    expect(() => api({ host: 'core', operationId: 'issueCodes', params: idPath })).toThrow(
      'issueCodes does not match its row in functions/routes.ts: body: the row says codesIssue, the handler passes none',
    );
    expect(() => api({ host: 'core', operationId: 'getEvent', params: idPath, body: codesIssue })).toThrow(
      'getEvent does not match its row in functions/routes.ts: body: the row says none, the handler passes codesIssue',
    );
  });

  it("fails at load on another host than its row's, or an operation with no row", () => {
    expect(() => api({ host: 'pos', operationId: 'getEvent', params: idPath })).toThrow(
      'getEvent does not match its row in functions/routes.ts: host: the row says core, the handler passes pos',
    );
    expect(() => api({ host: 'core', operationId: 'getNothing' })).toThrow('No route getNothing in functions/routes.ts');
  });
});
