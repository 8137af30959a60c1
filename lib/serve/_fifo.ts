/**
 * A first-in first-out queue with O(1) push and shift (Array#shift is O(n) on long arrays, and
 * the event queue may hold 10,000 entries).
 *
 * @module
 */

/** A FIFO queue. */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  /** How many items are queued. */
  get length(): number {
    return this.#items.length - this.#head;
  }

  /** Adds `item` at the back. */
  push(item: T): void {
    this.#items.push(item);
  }

  /** Removes and returns the front item, or undefined when empty. */
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Compact once the consumed prefix dominates, so memory follows the live length.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Removes and returns every item, front first. */
  drain(): T[] {
    const items = this.#items.slice(this.#head) as T[];
    this.#items = [];
    this.#head = 0;
    return items;
  }
}
