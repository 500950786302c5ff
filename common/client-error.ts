// Requests node's HTTP parser refuses (malformed request lines or headers, bodies where the method allows none,
// oversized headers) never reach a handler; node answers them with an empty 400. This answers them as the
// service answers every other error, in JSON, so a client always gets a readable reason.
// One answer per request: when the parser fails inside the body of a request whose answer has already started
// (a 404 sent before the rest of a malformed chunked body was read), that request has had its answer and the
// connection is closed without a second one.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export function answerClientErrorsWithJson(server: Server, body: (message: string) => unknown): void {
  const current = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => current.set(req.socket, { req, res }));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET')) {
      socket.destroy();
      return;
    }
    const last = current.get(socket);
    if (last && !last.req.complete && last.res.headersSent) {
      socket.destroy(); // the error is in the body of a request already answered
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    const text = JSON.stringify(body(`malformed HTTP request: ${err.code ?? 'error'} ${(err.message ?? '').slice(0, 200)}`));
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
  });
}
