// Exports a plain function (not declared with agenticFunction) and no agentic one.
export function shout({ text }) {
  return String(text).toUpperCase();
}
