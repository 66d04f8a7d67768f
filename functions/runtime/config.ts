import { tables, type TableId } from '#functions/tables';

/**
 * Configuration is read once, when a module loads, and a missing value fails the cold start
 * loudly rather than the first request quietly.
 */
function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

export function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`Environment variable ${name} must be a non-negative number, got "${raw}"`);
  }
  return value;
}

/** Physical name of a table, from the environment variable its spec declares. */
export function tableName(id: TableId): string {
  return requireEnv(tables[id].envVar);
}
