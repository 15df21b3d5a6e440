import { agenticFunction } from "@openprogram/session-context";
import { z } from "zod";

export const planDay = agenticFunction(
  {
    name: "plan_day",
    doc: "Plan a day out in the town, in the mood given.",
    input: z.object({
      town: z.string().min(1).describe("where to go"),
      mood: z.enum(["calm", "lively"]),
      hours: z.number().default(8),
    }),
  },
  async ({ town, mood, hours }) => `${hours} ${mood} hours in ${town}`,
);
