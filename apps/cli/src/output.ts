import type { Writable } from 'node:stream';

/**
 * Listens for the write errors of a stream the CLI writes to. A reader that stops reading —
 * `quoting-cli projections:status | head -1` — closes the pipe, and the next write fails with
 * EPIPE: an 'error' event that, unheard, ends the process with a stack trace. That reader has
 * what it asked for, so the command carries on quietly: the stream is destroyed, what is still
 * written to it is dropped, and a long command (audit:export) stops when it sees it destroyed.
 * Any other write error (a full disk behind `> file`) is kept: the command fails with it.
 */
export function watchOutput(stream: Writable): { failure: () => Error | undefined } {
  let failure: Error | undefined;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') failure ??= error;
  });
  return { failure: () => failure };
}

/** Resolves once the stream takes writes again, or is gone (its reader left, or it failed). */
export function drained(stream: Writable): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
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
