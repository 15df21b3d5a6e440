// Recording provider calls to JSONL and replaying them offline (Python OpenProgram's format).
export { RecordingProvider } from "./recording-provider.js";
export {
  checkRecordingOptions,
  providerWithRecordings,
  recordingOptionsFromEnv,
  type RecordingOptions,
} from "./recording-options.js";
export { ReplayProvider, type ReplayOptions } from "./replay-provider.js";
export {
  errorFromRecorded,
  holdsRecording,
  RelayedProvider,
  type ModelCallPort,
  type RelayedProviderInfo,
} from "./relayed-provider.js";
export { recordedError } from "./recorded-error.js";
export { readRecording, type RecordedCall, type Recording } from "./read-recording.js";
export {
  RECORDING_FORMAT_VERSION,
  type CallEndLine,
  type EventLine,
  type HeaderLine,
  type RecordedError,
  type RecordedEvent,
  type RecordingLine,
  type RequestLine,
} from "./recording-format.js";
export { isSecretFieldName, redactText, removeSecretValues, SECRET_FIELD_NAMES, SECRET_PLACEHOLDER } from "./redact.js";
export { firstDifference, NON_DETERMINISTIC_FIELD_NAMES, type Difference } from "./first-difference.js";
export {
  RecordingFormatError,
  RecordingMissingError,
  ReplayedFailureError,
  ReplayExhaustedError,
  ReplayMismatchError,
} from "./recording-errors.js";
export { findRecordings, recordingTotals, unreferencedRecordings, type FoundRecording } from "./recording-files.js";
