// Requests node's HTTP parser refuses (malformed request lines or headers, bodies where the method allows none,
// oversized headers) never reach a handler; node answers them with an empty 400. This answers them as the
// service answers every other error, in JSON, so a client always gets a readable reason.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export function answerClientErrorsWithJson(server: Server, body: (message: string) => unknown): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET')) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    const text = JSON.stringify(body(`malformed HTTP request: ${err.code ?? 'error'} ${(err.message ?? '').slice(0, 200)}`));
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
  });
}
