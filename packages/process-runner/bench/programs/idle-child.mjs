// A bare forked child that stays alive until killed (the SIGKILL baseline).
import process from "node:process";
import { setInterval } from "node:timers";

process.send?.("ready");
setInterval(() => undefined, 1000);
