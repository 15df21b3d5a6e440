// Preloaded into a child (NODE_OPTIONS=--import) by the power-cut tests: after each fdatasync that succeeds (on the
// pool or on the loop's thread), it appends "<path> <size>" to $OPENPROGRAM_TEST_SYNC_LOG, so the test knows how
// much of each write-ahead log a power cut at the kill would have kept. The store imports both from node:fs by
// name: syncBuiltinESMExports makes those names see the wrappers.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const log = process.env.OPENPROGRAM_TEST_SYNC_LOG;
function record(fd) {
  if (!log) return;
  const path = fs.readlinkSync(`/proc/self/fd/${fd}`);
  fs.appendFileSync(log, `${path} ${fs.fstatSync(fd).size}\n`);
}
const original = fs.fdatasync;
fs.fdatasync = (fd, callback) =>
  original(fd, (error) => {
    if (!error) record(fd);
    callback(error);
  });
// The log's fdatasync is made on the loop's thread while one session is all the process writes (session-wal.ts).
const originalSync = fs.fdatasyncSync;
fs.fdatasyncSync = (fd) => {
  originalSync(fd);
  record(fd);
};
syncBuiltinESMExports();
