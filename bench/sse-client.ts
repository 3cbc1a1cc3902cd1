/** A text/event-stream reader over a real socket, as a browser's EventSource reads one. */
import { request as httpRequest, type ClientRequest } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface ServerSentEvent {
  /** performance.now() when the event's last chunk arrived */
  at: number;
  event: string;
  data: any;
}

export class SseClient {
  status = 0;
  ended = false;
  private request!: ClientRequest;
  private buffer = '';

  private constructor(private readonly onEvent: (event: ServerSentEvent) => void) {}

  static open(url: string, headers: Record<string, string>, onEvent: (event: ServerSentEvent) => void): Promise<SseClient> {
    const client = new SseClient(onEvent);
    return new Promise((resolve, reject) => {
      client.request = httpRequest(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (response) => {
        client.status = response.statusCode ?? 0;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => client.receive(chunk));
        response.on('end', () => (client.ended = true));
        response.on('error', () => (client.ended = true));
        resolve(client);
      });
      client.request.on('error', (error) => (client.status ? (client.ended = true) : reject(error)));
      client.request.end();
    });
  }

  private receive(chunk: string): void {
    const at = performance.now();
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = '';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (event) this.onEvent({ at, event, data: JSON.parse(data.join('\n')) });
    }
  }

  close(): void {
    this.request.destroy();
  }
}
