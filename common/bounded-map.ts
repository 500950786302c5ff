// A Map that holds at most `max` entries and drops the oldest when a new one would pass the bound. What "oldest"
// means is the caller's: first written ('insertion', a Map's own order), last written ('write': a set moves the
// entry to the newest place), or last used ('use': a get does too, a least-recently-used cache). lru-cache moves
// an entry on every set, which the insertion-order callers here must not do, and it is not a direct dependency.

export type BoundedOrder = 'insertion' | 'write' | 'use';

export interface BoundedMapOptions<K, V> {
  /** Which entry counts as oldest (default 'insertion'). */
  order?: BoundedOrder;
  /** Called with each entry the bound drops (not with deletes). */
  onEvict?: (key: K, value: V) => void;
}

export class BoundedMap<K, V> extends Map<K, V> {
  private readonly order: BoundedOrder;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;

  constructor(
    readonly max: number,
    options: BoundedMapOptions<K, V> = {},
  ) {
    super();
    if (!Number.isInteger(max) || max < 0) throw new RangeError(`BoundedMap: max must be a whole number, got ${max}`);
    this.order = options.order ?? 'insertion';
    this.onEvict = options.onEvict;
  }

  override get(key: K): V | undefined {
    if (this.order !== 'use' || !super.has(key)) return super.get(key);
    const value = super.get(key) as V;
    super.delete(key);
    super.set(key, value);
    return value;
  }

  /** The value without counting as a use. */
  peek(key: K): V | undefined {
    return super.get(key);
  }

  override set(key: K, value: V): this {
    if (this.order !== 'insertion') super.delete(key);
    super.set(key, value);
    while (this.size > this.max) {
      const [oldest, dropped] = this.entries().next().value as [K, V];
      super.delete(oldest);
      this.onEvict?.(oldest, dropped);
    }
    return this;
  }
}
