/**
 * The text of one llm node's reply as it streams. Pieces that arrive before
 * the node's `running` append is written are held back and passed on in one
 * piece once it is, so clients always see the node before its deltas.
 */
export class StreamedReply {
  private received = "";
  private held = "";
  private open = false;

  constructor(private readonly emit: (text: string) => void) {}

  /** Everything received so far. */
  get text(): string {
    return this.received;
  }

  /** A piece from the provider. */
  readonly push = (piece: string): void => {
    if (piece === "") return;
    this.received += piece;
    if (this.open) this.emit(piece);
    else this.held += piece;
  };

  /** The node is written: pass on what was held back, then every piece as it comes. */
  start(): void {
    this.open = true;
    if (this.held !== "") this.emit(this.held);
    this.held = "";
  }

  /**
   * The provider's final text. A provider that did not stream (or streamed
   * only a prefix) has the rest passed on now, so the deltas always add up to
   * the output. Null when the streamed text is not a prefix of it.
   */
  finish(final: string): string | null {
    if (!final.startsWith(this.received)) return null;
    this.push(final.slice(this.received.length));
    return final;
  }
}
