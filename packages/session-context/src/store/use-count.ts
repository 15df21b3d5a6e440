/**
 * Counts one use of `key` in `uses` until the returned function is first called (later calls do nothing);
 * `onNone` runs when that leaves no use of it. A key is in `uses` exactly while some use is counted.
 */
export function countUse(uses: Map<string, number>, key: string, onNone: () => void = () => undefined): () => void {
  uses.set(key, (uses.get(key) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (uses.get(key) ?? 1) - 1;
    if (left > 0) {
      uses.set(key, left);
      return;
    }
    uses.delete(key);
    onNone();
  };
}
