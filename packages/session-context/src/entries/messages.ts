// @openprogram/session-context/messages: wording shared by every package's messages:
// clipping lines, describing a value, making text safe for a terminal.

export { clipLine, clipText } from "../messages/clip-text.js";
export { describeValue } from "../messages/describe-value.js";
export { terminalText } from "../messages/terminal-text.js";
