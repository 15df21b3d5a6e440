import { isIPv4, isIPv6 } from "node:net";

/** True for addresses only this machine can reach: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === "localhost" || lower.endsWith(".localhost")) return true;
  if (isIPv4(lower)) return lower.startsWith("127.");
  if (isIPv6(lower)) return lower === "::1" || /^::ffff:127\./.test(lower) || lower === "0:0:0:0:0:0:0:1";
  return false;
}

/** `host` as it goes into a URL (IPv6 addresses in brackets). */
export function urlHost(host: string): string {
  return isIPv6(host) ? `[${host}]` : host;
}
