// A TypeScript program (loaded through tsx): a default export that nests two agentic calls.
import { agenticFunction } from "@openprogram/session-context";

interface NotesInput {
  topic: string;
}

const outline = agenticFunction(
  { name: "outline", doc: "List three questions worth asking about the topic, one per line." },
  async ({ topic }: NotesInput, { runtime }) => runtime.exec(`Topic: ${topic}`),
);

const notes = agenticFunction(
  { name: "write_notes", doc: "Write study notes that answer the questions, under a heading per question." },
  async ({ topic }: NotesInput, { runtime }) => {
    const questions = await outline({ topic });
    const body = await runtime.exec(`Questions:\n${questions}`);
    return { topic, questions: questions.split("\n"), notes: body };
  },
);

export default notes;
