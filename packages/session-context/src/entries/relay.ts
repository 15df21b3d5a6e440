// @openprogram/session-context/relay: carrying a turn across a process boundary: the
// environment a child process joins the turn through, relaying its events and model calls
// to the parent (the process runner and the programs it starts).

export {
  CARRIER_VARIABLES,
  contextCarrierEnv,
  readContextCarrier,
  traceparentFor,
  type ContextCarrier,
} from "../context/carrier.js";
export { beginCurrentTurn, recordAbandonedNodes, relaySessionEvent } from "../context/relay.js";
export {
  errorFromRecorded,
  holdsRecording,
  RelayedProvider,
  type ModelCallPort,
  type RelayedProviderInfo,
} from "../recordings/relayed-provider.js";
