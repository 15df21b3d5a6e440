// @openprogram/session-context/recordings: recording provider calls to JSONL and replaying
// them offline (Python OpenProgram's format): `--record`/`--replay` in the CLI, the parity
// suite, and tools that read or tidy recordings. Tests usually want `useRecording` from
// `/testing` instead; the recording errors come from the root.

export { RecordingProvider } from "../recordings/recording-provider.js";
export {
  checkRecordingOptions,
  providerWithRecordings,
  recordingOptionsFromEnv,
  type RecordingOptions,
} from "../recordings/recording-options.js";
export { ReplayProvider, type ReplayOptions } from "../recordings/replay-provider.js";
export { recordedError } from "../recordings/recorded-error.js";
export { readRecording, type RecordedCall, type Recording } from "../recordings/read-recording.js";
export {
  RECORDING_FORMAT_VERSION,
  type CallEndLine,
  type EventLine,
  type HeaderLine,
  type RecordedError as RecordedCallError,
  type RecordedEvent,
  type RecordingLine,
  type RequestLine,
} from "../recordings/recording-format.js";
export {
  isSecretFieldName,
  redactText,
  removeSecretValues,
  SECRET_FIELD_NAMES,
  SECRET_PLACEHOLDER,
} from "../recordings/redact.js";
export { firstDifference, NON_DETERMINISTIC_FIELD_NAMES, type Difference } from "../recordings/first-difference.js";
export {
  findRecordings,
  recordingTotals,
  unreferencedRecordings,
  type FoundRecording,
} from "../recordings/recording-files.js";
