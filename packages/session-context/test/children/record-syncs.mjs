// Preloaded into a child (NODE_OPTIONS=--import) by the power-cut tests: after each fdatasync that succeeds, it
// appends "<path> <size>" to $OPENPROGRAM_TEST_SYNC_LOG, so the test knows how much of each write-ahead log a
// power cut at the kill would have kept. The store imports fdatasync from node:fs by name: syncBuiltinESMExports
// makes that name see the wrapper.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const log = process.env.OPENPROGRAM_TEST_SYNC_LOG;
const original = fs.fdatasync;
fs.fdatasync = (fd, callback) =>
  original(fd, (error) => {
    if (!error && log) {
      const path = fs.readlinkSync(`/proc/self/fd/${fd}`);
      fs.appendFileSync(log, `${path} ${fs.fstatSync(fd).size}\n`);
    }
    callback(error);
  });
syncBuiltinESMExports();
