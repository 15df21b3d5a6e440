// `sessions doctor`: one check per file; run-doctor.ts runs them over the store.
export { doctorStore } from "./run-doctor.js";
export type { DoctorFinding, DoctorReport, FindingKind } from "./types.js";
