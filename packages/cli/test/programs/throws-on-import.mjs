import { agenticFunction } from "@openprogram/session-context";

export const never = agenticFunction({ name: "never", doc: "Never loads." }, async () => "unreachable");
throw new Error("the module refuses to load: missing configuration DATABASE_URL");
