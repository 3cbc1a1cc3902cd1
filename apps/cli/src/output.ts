import type { Writable } from 'node:stream';

/** Streams whose reader went away, as watchOutput heard it. */
const readerLeft = new WeakSet<Writable>();

/**
 * Listens for the write errors of a stream the CLI writes to. A reader that stops reading —
 * `quoting-cli projections:status | head -1` — closes the pipe, and the next write fails with
 * EPIPE: an 'error' event that, unheard, ends the process with a stack trace. That reader has
 * what it asked for, so the command carries on quietly: what is still written to the stream is
 * dropped, and a long command (audit:export) stops when it sees the stream closed.
 * Any other write error (a full disk behind `> file`) is kept: the command fails with it.
 */
export function watchOutput(stream: Writable): { failure: () => Error | undefined } {
  let failure: Error | undefined;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') readerLeft.add(stream);
    else failure ??= error;
  });
  stream.on('close', () => readerLeft.add(stream));
  return { failure: () => failure };
}

/**
 * Whether nothing written to the stream can reach a reader any more. `destroyed` alone does not
 * tell it for process.stdout: Node never closes fd 1, so stdout undoes its destruction after an
 * EPIPE and looks writable again, each later write failing anew.
 */
export function closed(stream: Writable): boolean {
  return stream.destroyed || readerLeft.has(stream);
}

/** Resolves once the stream takes writes again, or is gone (its reader left, or it failed). */
export function drained(stream: Writable): Promise<void> {
  if (closed(stream)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
