// `Promise.all` over many remote calls with a bound on how many are in flight: the order of the results is the
// order of the inputs, and the first failure rejects the whole (the calls still running are left to finish, as
// Promise.all leaves them). p-limit does this too, but it is ESM-only and this project loads as CommonJS.

/** `fn` over `items`, at most `limit` at once; results in input order. */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`mapConcurrent: limit must be a positive integer, got ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
