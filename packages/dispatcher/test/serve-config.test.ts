import { join, resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { describe, expect, it } from "vitest";
import { resolveServeConfig } from "../src/index.js";

describe("resolveServeConfig", () => {
  it("defaults to loopback:8787, no token, the sessions root under OPENPROGRAM_HOME, a 10 s grace", () => {
    expect(resolveServeConfig({}, { OPENPROGRAM_HOME: "/srv/op" })).toEqual({
      host: "127.0.0.1",
      port: 8787,
      allowedOrigins: [],
      sessionsRoot: join("/srv/op", "sessions"),
      shutdownGraceMs: 10_000,
    });
  });

  it("reads the environment", () => {
    const env = {
      OPENPROGRAM_HOST: "0.0.0.0",
      OPENPROGRAM_PORT: "9000",
      OPENPROGRAM_TOKEN: "secret-token-1234567890",
      OPENPROGRAM_ALLOWED_ORIGINS: "https://a.example.com, https://b.example.com:8443/",
      OPENPROGRAM_HOME: "/var/lib/openprogram",
      OPENPROGRAM_SHUTDOWN_GRACE_MS: "2500",
    };
    expect(resolveServeConfig({}, env)).toEqual({
      host: "0.0.0.0",
      port: 9000,
      token: "secret-token-1234567890",
      allowedOrigins: ["https://a.example.com", "https://b.example.com:8443"],
      sessionsRoot: "/var/lib/openprogram/sessions",
      shutdownGraceMs: 2500,
    });
  });

  it("prefers flags over the environment", () => {
    const env = {
      OPENPROGRAM_PORT: "9000",
      OPENPROGRAM_TOKEN: "env-token-xxxxxxxx",
      OPENPROGRAM_HOME: "/env/home",
      OPENPROGRAM_SHUTDOWN_GRACE_MS: "1",
    };
    const config = resolveServeConfig(
      {
        port: "0",
        token: "flag-token-yyyyyyyy",
        sessionsRoot: "relative/root",
        graceMs: 0,
        allowedOrigins: ["http://localhost:3000"],
      },
      env,
    );
    expect(config).toMatchObject({
      port: 0,
      token: "flag-token-yyyyyyyy",
      sessionsRoot: resolve("relative/root"),
      shutdownGraceMs: 0,
      allowedOrigins: ["http://localhost:3000"],
    });
  });

  it("treats empty variables as unset", () => {
    expect(
      resolveServeConfig({}, { OPENPROGRAM_PORT: "", OPENPROGRAM_TOKEN: "  ", OPENPROGRAM_HOME: "/h" }),
    ).toMatchObject({ port: 8787 });
  });

  const invalid: Array<[string, Parameters<typeof resolveServeConfig>[0], NodeJS.ProcessEnv, RegExp]> = [
    ["a port that is not a number", { port: "http" }, {}, /--port "http" must be an integer from 0 to 65535/],
    ["a port out of range", {}, { OPENPROGRAM_PORT: "70000" }, /OPENPROGRAM_PORT "70000"/],
    ["a negative grace", { graceMs: "-5" }, {}, /--grace-ms "-5" must be an integer/],
    [
      "a grace that is not a number",
      {},
      { OPENPROGRAM_SHUTDOWN_GRACE_MS: "10s" },
      /OPENPROGRAM_SHUTDOWN_GRACE_MS "10s"/,
    ],
    ["a token with spaces", { token: "two words" }, {}, /--token must be printable ASCII/],
    [
      "an origin that is not a URL",
      {},
      { OPENPROGRAM_ALLOWED_ORIGINS: "example.com" },
      /OPENPROGRAM_ALLOWED_ORIGINS: "example.com" is not an origin/,
    ],
    [
      "an origin that is not http(s)",
      { allowedOrigins: "ftp://example.com" },
      {},
      /--allowed-origin: "ftp:\/\/example.com" must be an http or https origin/,
    ],
    [
      "a public host without a token",
      { host: "0.0.0.0" },
      {},
      /--host 0.0.0.0 is not a loopback address, so the dispatcher requires a token/,
    ],
    [
      "a public host from the environment without a token",
      {},
      { OPENPROGRAM_HOST: "192.0.2.10" },
      /OPENPROGRAM_HOST 192.0.2.10/,
    ],
    ["an empty flag", { host: "" }, {}, /--host is empty/],
    ["a host with spaces", { host: "local host" }, {}, /--host "local host"/],
  ];
  it.each(invalid)("refuses %s with InvalidInputError naming the flag or variable", (_name, flags, env, message) => {
    expect(() => resolveServeConfig(flags, env)).toThrow(InvalidInputError);
    expect(() => resolveServeConfig(flags, env)).toThrow(message);
  });

  it("accepts loopback hosts without a token", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1"])
      expect(resolveServeConfig({ host }, {}).host).toBe(host);
  });
});
