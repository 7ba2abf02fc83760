// A Map of string keys in one array (open addressing, linear probing), for the tables that hold
// an entry per known object (the reconciler's states, a store's shelves). JSC's Map storage,
// read from heap snapshots: 0.16 MB at 2,000 entries, 0.66 MB at 6,000, 3.4 MB at 20,000 (170
// bytes an entry, more than the small record it maps to; it grows in steps of four or more);
// this one keeps 16 bytes a slot, at most 3/4 full: 512 KB at 20,000 (issue 15).
// Unlike a Map: iteration follows the table, not insertion order, and the table must not be
// changed while it is iterated (collect the keys first). Setting a present key keeps its key
// string, as a Map does; emptied, the table shrinks, as a Map's does.

const MIN_CAPACITY = 16;

export class CompactMap<V> implements ReadonlyMap<string, V> {
  /** [key0, value0, key1, value1, …]; a free slot's key is undefined. */
  private slots: unknown[] = freeSlots(MIN_CAPACITY);
  private mask = MIN_CAPACITY - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const i = this.find(key);
    return this.slots[i] === undefined ? undefined : (this.slots[i + 1] as V);
  }

  has(key: string): boolean {
    return this.slots[this.find(key)] !== undefined;
  }

  set(key: string, value: V): this {
    let i = this.find(key);
    if (this.slots[i] === undefined) {
      if ((this.count + 1) * 4 > (this.mask + 1) * 3) {
        this.resize((this.mask + 1) * 2);
        i = this.find(key);
      }
      this.slots[i] = key;
      this.count++;
    }
    this.slots[i + 1] = value;
    return this;
  }

  delete(key: string): boolean {
    let hole = this.find(key);
    if (this.slots[hole] === undefined) return false;
    // Backward-shift deletion: the entries after the hole that may move into it do, so that
    // every entry stays reachable from its home slot without tombstones.
    const slots = this.slots;
    const mask = this.mask;
    for (let at = (hole / 2 + 1) & mask; ; at = (at + 1) & mask) {
      const next = slots[at * 2];
      if (next === undefined) break;
      const home = slotOf(next as string, mask);
      const from = hole / 2;
      const stays = from <= at ? home > from && home <= at : home > from || home <= at;
      if (stays) continue;
      slots[hole] = next;
      slots[hole + 1] = slots[at * 2 + 1];
      hole = at * 2;
    }
    slots[hole] = undefined;
    slots[hole + 1] = undefined;
    this.count--;
    if (this.mask + 1 > MIN_CAPACITY && this.count * 8 < this.mask + 1) this.resize((this.mask + 1) / 2);
    return true;
  }

  clear(): void {
    this.slots = freeSlots(MIN_CAPACITY);
    this.mask = MIN_CAPACITY - 1;
    this.count = 0;
  }

  *entries(): MapIterator<[string, V]> {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) if (slots[i] !== undefined) yield [slots[i] as string, slots[i + 1] as V];
  }

  *keys(): MapIterator<string> {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) if (slots[i] !== undefined) yield slots[i] as string;
  }

  *values(): MapIterator<V> {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) if (slots[i] !== undefined) yield slots[i + 1] as V;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  /** The index of `key`'s slot, or of the free slot where it would go. */
  private find(key: string): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let at = slotOf(key, mask); ; at = (at + 1) & mask) {
      const present = slots[at * 2];
      if (present === undefined || present === key) return at * 2;
    }
  }

  private resize(capacity: number): void {
    const old = this.slots;
    this.slots = freeSlots(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < old.length; i += 2) {
      const key = old[i];
      if (key === undefined) continue;
      const at = this.find(key as string);
      this.slots[at] = key;
      this.slots[at + 1] = old[i + 1];
    }
  }
}

/** Filled with undefined, not holes: a read of a hole would look it up on the prototype chain. */
function freeSlots(capacity: number): unknown[] {
  return new Array(capacity * 2).fill(undefined);
}

const crc32 = Bun.hash.crc32;

/**
 * The key's CRC-32 (native: a loop over its characters in JavaScript cost 1.7 µs a key in the interpreter, which
 * runs the lean start-up, against 0.12; the same 0.04 µs once compiled), mixed so that the slot's low bits depend
 * on all of its bits.
 */
function slotOf(key: string, mask: number): number {
  let h = crc32(key);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & mask;
}
