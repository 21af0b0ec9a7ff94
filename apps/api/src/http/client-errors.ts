import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { Logger } from '@switchboard/logger';
import { docUrlOf, type ErrorCode } from '../error-codes';

/**
 * What Node's HTTP parser refuses before Express sees a request, answered in the API's error
 * shape (docs/API.md, Errors) instead of Node's bare status line: a request line and headers
 * over Node's 16 KiB limit (431), a request whose headers did not arrive in time (408), and
 * bytes that are not HTTP/1.1 (400). Nothing was authenticated, so these carry no RateLimit
 * fields; the connection is closed after the answer.
 */
const ANSWERS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'request_headers_too_large',
    message: 'The request line and headers exceed 16 KiB',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'request_timeout',
    message: 'The request did not arrive in time',
  },
};
const MALFORMED: { status: number; code: ErrorCode; message: string } = {
  status: 400,
  code: 'malformed_request',
  message: 'The request is not valid HTTP',
};

export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset peer, or a response already under way: nothing sensible can be written.
    if (err.code === 'ECONNRESET' || !socket.writable || hasResponse(socket)) {
      socket.destroy();
      return;
    }
    const answer = (err.code && ANSWERS[err.code]) || MALFORMED;
    const requestId = `req_${randomBytes(12).toString('hex')}`;
    const body = JSON.stringify({
      error: {
        type: 'invalid_request_error',
        code: answer.code,
        message: answer.message,
        doc_url: docUrlOf(answer.code),
      },
      request_id: requestId,
    });
    logger.info(
      { code: err.code, status: answer.status, request_id: requestId },
      'request refused by the parser',
    );
    socket.end(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}

/**
 * Whether a response on this connection has already sent its headers (the previous one of a
 * keep-alive connection, say): another status line would corrupt it. Node's own default
 * clientError handler makes the same check, on the same internal field.
 */
const hasResponse = (socket: Duplex): boolean =>
  Boolean(
    (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent,
  );
