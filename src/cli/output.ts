// What a command prints: sentences for a person, or (--json) JSON lines for a script, never both; the QR code drawn
// with qrcode's terminal renderer; and the live stage line of a session, rewritten in place on a terminal and one line
// per change elsewhere (a log, a pipe), so a captured run stays readable.
import QRCode from 'qrcode';

export class Output {
  constructor(
    readonly json: boolean,
    private readonly stream: NodeJS.WriteStream = process.stdout,
  ) {}

  /** A line for a person (nothing with --json). */
  say(text = ''): void {
    if (!this.json) this.stream.write(`${text}\n`);
  }

  /** One JSON object on its own line (nothing without --json). */
  emit(value: Record<string, unknown>): void {
    if (this.json) this.stream.write(`${JSON.stringify(value)}\n`);
  }

  /** A stage line on this output: live on a terminal, one line per change otherwise; nothing with --json. */
  stageLine(): StageLine {
    return new StageLine(this.json ? undefined : this.stream);
  }
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const elapsed = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

export class StageLine {
  readonly #stream: NodeJS.WriteStream | undefined;
  readonly #live: boolean;
  readonly #started = Date.now();
  #last: string | undefined;
  #frame = 0;
  #open = false;

  constructor(stream: NodeJS.WriteStream | undefined) {
    this.#stream = stream;
    this.#live = stream?.isTTY === true;
  }

  /** Shows `text` as the current stage: redrawn (with a spinner and the time waited) on a terminal, printed once per change elsewhere. */
  show(text: string): void {
    const stream = this.#stream;
    if (!stream) return;
    if (this.#live) {
      this.#redraw(`${SPINNER[this.#frame++ % SPINNER.length]} ${text} (${elapsed(Date.now() - this.#started)})`);
      this.#open = true;
    } else if (text !== this.#last) {
      stream.write(`${text}\n`);
    }
    this.#last = text;
  }

  /** Ends the line with `text` (kept on screen), so what follows starts on a line of its own. */
  end(text: string): void {
    const stream = this.#stream;
    if (!stream) return;
    if (this.#live && this.#open) {
      this.#redraw(text);
      stream.write('\n');
    } else if (text !== this.#last) {
      stream.write(`${text}\n`);
    }
    this.#open = false;
    this.#last = text;
  }

  #redraw(text: string): void {
    const stream = this.#stream as NodeJS.WriteStream;
    stream.cursorTo(0);
    stream.clearLine(0);
    // never wider than the terminal (when it says its width): a wrapped line could not be rewritten in place
    const width = stream.columns > 2 ? stream.columns - 1 : Number.POSITIVE_INFINITY;
    stream.write(text.length > width ? `${text.slice(0, width - 1)}…` : text);
  }
}

/**
 * The QR code of `text` for a terminal: qrcode's small terminal renderer (two modules per character row). Low error
 * correction: a screen is not a printed sticker that gets scratched, and every level up makes a long deep link's code
 * denser.
 */
export function terminalQr(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'terminal', small: true, errorCorrectionLevel: QR_LEVEL });
}

const QR_LEVEL = 'L';

/** The columns terminalQr's code takes: its modules and a quiet module on each side. */
export const terminalQrWidth = (text: string): number => QRCode.create(text, { errorCorrectionLevel: QR_LEVEL }).modules.size + 2;
