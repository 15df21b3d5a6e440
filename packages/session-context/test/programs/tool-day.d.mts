// Types of tool-day.mjs, for the tests that import it.
import type { AgenticFunction, Tool } from "../../src/index.js";

export declare const weather: Tool<{ city: string }, { city: string; sky: string }>;
export declare const bookRoom: Tool<{ city: string }, { city: string; booking: string }>;
export declare const shout: AgenticFunction<{ text: string }, string>;
export declare const planDay: AgenticFunction<{ city: string }, string>;
export declare const planDayAtOnce: AgenticFunction<{ city: string }, string>;
