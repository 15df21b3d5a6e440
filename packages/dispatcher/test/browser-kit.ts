// What the page's Chromium tests share: Debian's Chromium launched headless with the flags this machine needs, the
// wait for the page's answers, and the folder screenshots go to.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** How long a test waits for the page to show something. */
export const UI_WAIT = { timeout: 30_000 };

/** Launches Chromium, or says how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH.`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** The folder for screenshots: under the test report folder when CI sets one. */
export function screenshots(): string {
  const root = process.env.OPENPROGRAM_TEST_REPORT_DIR ?? join(import.meta.dirname, "..", "..", "..", "test-results");
  const dir = join(root, "screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}
