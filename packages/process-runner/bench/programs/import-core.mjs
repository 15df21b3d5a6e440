// What every child pays before it can record anything: loading the core.
await import("@openprogram/session-context");
