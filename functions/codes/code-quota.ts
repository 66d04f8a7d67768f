import { conflict } from '#http/errors';
import type { CodeQuotaRefusal } from '#data/code-quota';

/**
 * The 409 of an issuance that would take the account past its code quota (PRODUCT.md, "Quotas";
 * data/code-quota.ts), naming the quota, what the account holds and what would still fit.
 */
export const overQuota = (count: number, { quota, issued }: CodeQuotaRefusal) =>
  conflict(
    `This account may hold at most ${quota} issued codes (its code quota) and holds ${issued}: ${count} more would pass it; ` +
      `issue at most ${Math.max(0, quota - issued)}, or ask the operator to raise ACCOUNT_CODE_QUOTA`,
  );
