/**
 * An unbounded FIFO read by one async loop. The runner's loop reads the
 * child's messages here instead of in the ChildProcess listeners so that it
 * handles them in order, inside the caller's session context (the listeners
 * run wherever the IPC handle's callbacks run).
 */
export class MessageQueue<T> {
  private readonly items: T[] = [];
  private waiting: ((item: T) => void) | null = null;

  /** Adds an item; wakes the reader. */
  push(item: T): void {
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = null;
      wake(item);
      return;
    }
    this.items.push(item);
  }

  /** The next item, waiting for one if needed. */
  next(): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise<T>((resolve) => {
      this.waiting = resolve;
    });
  }
}
