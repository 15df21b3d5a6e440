import type { ChatMessage } from "../src/providers/types.js";

/** About 100,000 tokens of varied conversation text (1,000 messages); `salt` makes every text new (no cache hit). */
export function tokenHistory(salt: number): ChatMessage[] {
  const words = [
    "tide",
    "pool",
    "anemone",
    "crab",
    "kelp",
    "observation",
    "salinity",
    "η=0.4",
    "東京",
    '{"n": 3}',
    "→",
  ];
  const messages: ChatMessage[] = [];
  for (let index = 0; index < 1_000; index++) {
    let text = `Round ${salt}, message ${index}:`;
    for (let word = 0; word < 30; word++) text += ` ${words[(index * 7 + word * 3 + salt) % words.length]}${word % 9}`;
    messages.push({ role: index % 2 === 0 ? "user" : "assistant", content: text });
  }
  return messages;
}

const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "ph", "st", "an", "or", "el"];

/**
 * About 100,000 tokens of prose over made-up words (tens of thousands of distinct ones, capitals, numbers,
 * punctuation, line breaks): unlike `tokenHistory`, most of its pieces are new to a process that counts it.
 */
export function variedHistory(salt: number): ChatMessage[] {
  let seed = 0x2545f491 ^ salt;
  const next = (below: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % below;
  };
  const messages: ChatMessage[] = [];
  for (let index = 0; index < 1_000; index++) {
    const words: string[] = [];
    for (let count = 0; count < 36; count++) {
      let word = "";
      for (let syllable = 2 + next(3); syllable > 0; syllable--) word += SYLLABLES[next(SYLLABLES.length)];
      if (next(8) === 0) word = word[0]?.toUpperCase() + word.slice(1);
      if (next(12) === 0) word = String(next(100_000));
      words.push(word + ([",", ".", "", "", "", "", ";", "'s", ":\n"][next(9)] ?? ""));
    }
    messages.push({ role: index % 2 === 0 ? "user" : "assistant", content: words.join(" ") });
  }
  return messages;
}
