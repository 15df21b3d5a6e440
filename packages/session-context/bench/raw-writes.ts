// The raw baselines: durable writes done by hand, the same steps the store takes.
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";

/** Temp file, fsync, rename, directory fsync: synchronously. */
export function rawDurableWrite(directory: string, name: string, text: string): void {
  const temporary = join(directory, `.${name}.tmp`);
  const fd = openSync(temporary, "w", 0o600);
  writeFileSync(fd, text);
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temporary, join(directory, name));
  const dirFd = openSync(directory, "r");
  fsyncSync(dirFd);
  closeSync(dirFd);
}

/** The same with fs.promises, as the store does it. */
export async function rawDurableWriteAsync(directory: string, name: string, text: string): Promise<void> {
  const temporary = join(directory, `.${name}.tmp`);
  const handle = await open(temporary, "w", 0o600);
  await handle.writeFile(text);
  await handle.sync();
  await handle.close();
  await rename(temporary, join(directory, name));
  const dirHandle = await open(directory, "r");
  await dirHandle.sync();
  await dirHandle.close();
}
