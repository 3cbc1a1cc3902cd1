import { Injectable } from '@nestjs/common';

export type DocumentJobKind = 'pdf' | 'mail';
type Listener = (kind: DocumentJobKind) => void;

/**
 * In-process notice that a PDF or mail job became pending, so the worker of the same process
 * starts it at once. Without a listener nothing is lost: the worker's next look finds it.
 */
@Injectable()
export class DocumentSignal {
  private readonly listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pending(kind: DocumentJobKind): void {
    for (const listener of this.listeners) listener(kind);
  }
}
