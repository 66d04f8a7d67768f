/**
 * Runs `work` on every item, at most `width` at once; waits for all of it (no write left running
 * behind an answer), then throws the first failure.
 */
export async function allOrFirstError<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: { reason: unknown } | undefined;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length && !failure) {
        const item = items[next++]!;
        try {
          await work(item);
        } catch (reason) {
          failure ??= { reason };
        }
      }
    }),
  );
  if (failure) throw failure.reason;
}
