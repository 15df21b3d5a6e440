// @openprogram/dispatcher: the web dispatcher. Entry file: wiring only.

export { createDispatcher } from "./create-dispatcher.js";
export { serve, type ServeOptions, type ServeProcess } from "./serve.js";
export {
  resolveServeConfig,
  SERVE_SETTINGS,
  type ServeConfig,
  type ServeFlags,
  type TokenOrigin,
} from "./serve-config.js";
export { loadOrCreateServeToken, readTokenFile, SERVE_TOKEN_FILE } from "./serve-token.js";
export { DEFAULTS, type Dispatcher, type DispatcherOptions, type ServedProgram } from "./options.js";
export { DEFAULT_LIMITS, type ServerLimits } from "./limits.js";
export {
  createEventLogger,
  createLogSink,
  humanLogLine,
  jsonLogLine,
  redactSecrets,
  resolveLogFormat,
  type EventLogger,
  type LogEntry,
  type LogFormat,
  type LogLevel,
  type LogSink,
  type LogStream,
} from "./logging.js";
export { parseClientFrame, CLIENT_ACTIONS, type ParsedFrame } from "./parse-frame.js";
export { encodeFrame, MAX_FRAME_BYTES, PROTOCOL_VERSION } from "./protocol.js";
export { checkServerFrame, SERVER_FRAMES, type ServerFrameType } from "./server-frames.js";
export type {
  AnswerFrame,
  ChatFrame,
  ClientAction,
  ClientFrame,
  DeclineFrame,
  ArchiveSessionFrame,
  DeleteSessionFrame,
  DeltaFrame,
  ErrorFrame,
  FrameError,
  GetSessionFrame,
  HelloFrame,
  ListProgramsFrame,
  ListSessionsFrame,
  NodeFrame,
  ProgramInfo,
  ProgramsFrame,
  QuestionClosedFrame,
  QuestionFrame,
  ResumableTurnInfo,
  ResumeFrame,
  RunFrame,
  ServerFrame,
  SessionArchivedFrame,
  SessionDeletedFrame,
  SessionDetailFrame,
  SessionFrame,
  SessionsFrame,
  StatusFrame,
  StopFrame,
  SubscribedFrame,
  SubscribeFrame,
  TurnDoneFrame,
  TurnFailedFrame,
  UnsubscribedFrame,
  UnsubscribeFrame,
} from "./protocol.js";
export { checkReadiness, type ReadinessCheck, type ReadinessReport } from "./readiness.js";
export {
  DatabaseUnavailableError,
  LeaseLostError,
  ReplicaUnreachableError,
  SchemaTooNewError,
  ListenError,
  NoRunningTurnError,
  QuestionSessionMismatchError,
  ServerBusyError,
  ShuttingDownError,
  TooManyTurnsError,
  UnknownActionError,
  UnknownProgramError,
  UnknownQuestionError,
  WebAssetsMissingError,
} from "./errors.js";
export type { DispatcherErrorCode } from "./error-code.js";
export { CLOSE_TOO_SLOW, MAX_TURNS_PER_CONNECTION, MAX_UNSENT_BYTES } from "./client.js";
export { DELTA_INTERVAL_MS } from "./delta-relay.js";
export { MAX_HEAVY_PER_CONNECTION, MAX_HEAVY_PER_SERVER, TooManyRequestsError } from "./heavy-requests.js";
export { DEFAULT_DETAIL_NODES, MAX_DETAIL_BYTES, MAX_DETAIL_NODES } from "./session-detail.js";
export { DISPATCHER_VERSION } from "./version.js";
export { CLUSTER_DEFAULTS, type ClusterOptions } from "./cluster/options.js";
export { ClusterSecretError } from "./cluster/errors.js";
export { MIN_SECRET_LENGTH } from "./cluster/secrets.js";
export { MIGRATIONS, SCHEMA_VERSION, migrate } from "./cluster/migrations.js";
export { redactUrl } from "./cluster/pool.js";
