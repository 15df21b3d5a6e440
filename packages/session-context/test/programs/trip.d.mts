// Types of trip.mjs, for the tests that import it.
import type { AgenticFunction } from "../../src/index.js";

export declare const lookUpVisa: AgenticFunction<{ destination: string }, never>;
export declare const summarizeOptions: AgenticFunction<{ notes: string }, string>;
export declare const planTrip: AgenticFunction<{ destination: string; days: number }, { plan: string; style: string }>;
